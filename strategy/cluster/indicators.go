package cluster

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"wicket/strategy/worker"
)

// chunkMsg is a chunk as it sits on the stream: the sweep chunk, and the
// project's indicators (indicators/<name>.star → text), which a worker
// on another machine does not have.
type chunkMsg struct {
	Chunk      worker.SweepChunk `json:"chunk"`
	Indicators map[string]string `json:"indicators,omitempty"`
}

// maxIndicators bounds the indicator sources a chunk carries (a NATS
// message is at most 1 MiB by default).
const maxIndicators = 512 << 10

// readIndicators reads the *.star files of dir; a missing dir is none.
func readIndicators(dir string) (map[string]string, error) {
	if dir == "" {
		return nil, nil
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, &worker.Error{Kind: worker.KindRequest, Msg: "read the indicators directory: " + err.Error()}
	}
	out := map[string]string{}
	total := 0
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".star") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, &worker.Error{Kind: worker.KindRequest, Msg: "read an indicator: " + err.Error()}
		}
		if total += len(b); total > maxIndicators {
			return nil, &worker.Error{Kind: worker.KindRequest, Msg: fmt.Sprintf("the indicators/ sources exceed %d KiB, more than a cluster chunk carries; run this sweep locally", maxIndicators>>10)}
		}
		out[e.Name()] = string(b)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// indicatorsDir writes a chunk's indicators into this machine's cache,
// once per distinct set, and returns the directory ("" for none).
func (w *Worker) indicatorsDir(inds map[string]string) (string, error) {
	if len(inds) == 0 {
		return "", nil
	}
	names := make([]string, 0, len(inds))
	for n := range inds {
		if n != filepath.Base(n) || !strings.HasSuffix(n, ".star") || strings.HasPrefix(n, ".") || strings.ContainsAny(n, `/\`) {
			return "", &worker.Error{Kind: worker.KindRequest, Msg: fmt.Sprintf("a cluster chunk names the indicator file %q", n)}
		}
		names = append(names, n)
	}
	slices.Sort(names)
	h := sha256.New()
	for _, n := range names {
		fmt.Fprintf(h, "%d:%s%d:%s", len(n), n, len(inds[n]), inds[n])
	}
	dir := filepath.Join(w.o.CacheDir, "indicators-"+hex.EncodeToString(h.Sum(nil))[:32])
	w.barsMu.Lock()
	defer w.barsMu.Unlock()
	if _, err := os.Stat(dir); err == nil {
		return dir, nil
	}
	tmp, err := os.MkdirTemp(w.o.CacheDir, "indicators-*.tmp")
	if err != nil {
		return "", fmt.Errorf("cache indicators: %w", err)
	}
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(tmp, n), []byte(inds[n]), 0o600); err != nil {
			os.RemoveAll(tmp)
			return "", fmt.Errorf("cache indicators: %w", err)
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		if _, serr := os.Stat(dir); serr == nil {
			return dir, nil // another worker process on this machine wrote it first
		}
		return "", fmt.Errorf("cache indicators: %w", err)
	}
	return dir, nil
}
