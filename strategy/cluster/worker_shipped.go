package cluster

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
	"wicket/strategy/worker"

	"github.com/nats-io/nats.go/jetstream"
)

// shipped is a kind of object a sweep ships to the cluster by the
// SHA-256 of its content (bars, funding), as its errors name it.
type shipped struct {
	ext, what, are, their, them string
}

var (
	shippedBars    = shipped{ext: ".bars", what: "bars", are: "are", their: "their", them: "them"}
	shippedFunding = shipped{ext: ".funding", what: "funding", are: "is", their: "its", them: "it"}
)

// barsFile is the local copy of the bars of digest, fetched from the
// cluster the first time this machine needs them.
func (w *Worker) barsFile(ctx context.Context, digest string) (string, error) {
	return w.shippedFile(ctx, shippedBars, digest)
}

// fundingFile is the local copy of the funding of digest
// (worker.Funding.Encode), fetched from the cluster the first time this
// machine needs it. Like bars, it is refused unless it hashes to its
// name, which the signed chunk carries.
func (w *Worker) fundingFile(ctx context.Context, digest string) (string, error) {
	return w.shippedFile(ctx, shippedFunding, digest)
}

// shippedFile is the local copy of the object of kind k named digest.
func (w *Worker) shippedFile(ctx context.Context, k shipped, digest string) (string, error) {
	if len(digest) != 64 {
		return "", &worker.Error{Kind: worker.KindRequest, Msg: "a cluster chunk without a " + k.what + " digest"}
	}
	if _, err := hex.DecodeString(digest); err != nil {
		return "", &worker.Error{Kind: worker.KindRequest, Msg: "a cluster chunk with a malformed " + k.what + " digest"}
	}
	path := filepath.Join(w.o.CacheDir, digest+k.ext)
	w.barsMu.Lock()
	defer w.barsMu.Unlock()
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	gctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	got, err := w.obj.Get(gctx, digest)
	if err != nil {
		return "", &worker.Error{Kind: worker.KindStart, Msg: fmt.Sprintf("fetch %s %s from the research cluster: %v", k.what, digest[:12], err)}
	}
	defer got.Close()
	// The store checks what it hands out against the SHA-256 digest it
	// holds for the object; that digest must be the name's.
	info, err := got.Info()
	if err != nil {
		return "", &worker.Error{Kind: worker.KindStart, Msg: fmt.Sprintf("fetch %s %s from the research cluster: %v", k.what, digest[:12], err)}
	}
	want, _ := hex.DecodeString(digest)
	if sum, err := jetstream.DecodeObjectDigest(info.Digest); err != nil || !bytes.Equal(sum, want) {
		return "", &worker.Error{Kind: worker.KindStart, Msg: fmt.Sprintf("the %s %s in the research cluster %s not what %s name says; ship %s again", k.what, digest[:12], k.are, k.their, k.them)}
	}
	tmp, err := os.CreateTemp(w.o.CacheDir, digest+".*.tmp")
	if err != nil {
		return "", fmt.Errorf("cache %s: %w", k.what, err)
	}
	// A large buffer moves a whole store chunk at a time; the wrapper
	// keeps the file's ReadFrom, and its small buffer, out of the way.
	n, err := io.CopyBuffer(struct{ io.Writer }{tmp}, got, make([]byte, 256<<10))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil && uint64(n) != info.Size {
		err = fmt.Errorf("got %d of %d bytes", n, info.Size)
	}
	if err != nil {
		os.Remove(tmp.Name())
		if errors.Is(err, jetstream.ErrDigestMismatch) {
			return "", &worker.Error{Kind: worker.KindStart, Msg: fmt.Sprintf("the %s %s fetched from the research cluster %s damaged", k.what, digest[:12], k.are)}
		}
		return "", &worker.Error{Kind: worker.KindStart, Msg: fmt.Sprintf("fetch %s %s from the research cluster: %v", k.what, digest[:12], err)}
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("cache %s: %w", k.what, err)
	}
	fmt.Fprintf(w.o.Log, "wicket worker: %s %s fetched (%d bytes)\n", k.what, digest[:12], n)
	return path, nil
}

// maxRan bounds the chunk ids a worker remembers running; past it the
// expired ones go first, then any.
const maxRan = 1 << 20

// ranBefore reports whether this worker answered chunk, or saw it
// cancelled, already: a copy of it published again is not run.
func (w *Worker) ranBefore(chunk string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, ok := w.ran[chunk]
	return ok
}

// markRan remembers d's chunk as run here until the chunk expires.
func (w *Worker) markRan(d *delivery) {
	until := time.UnixMilli(expiresAt(d.header))
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.ran) >= maxRan {
		now := w.sig.now()
		for id, t := range w.ran {
			if now.After(t) {
				delete(w.ran, id)
			}
		}
		for id := range w.ran {
			if len(w.ran) < maxRan {
				break
			}
			delete(w.ran, id)
		}
	}
	w.ran[d.chunk] = until
}
