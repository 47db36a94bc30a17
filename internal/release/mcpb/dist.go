package mcpb

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

type artifact struct {
	Path   string `json:"path"`
	GOOS   string `json:"goos"`
	GOARCH string `json:"goarch"`
	Type   string `json:"type"`
}

// BundleDist writes, into a GoReleaser dist folder, one bundle per target
// from the binaries GoReleaser built there (artifacts.json, metadata.json),
// and dist/server.json: serverJSON at the release's version listing each
// bundle as a package with its SHA-256. It reports each bundle's sum and
// name to log.
func BundleDist(dist, serverJSON string, log io.Writer) error {
	var meta struct {
		Version string    `json:"version"`
		Date    time.Time `json:"date"`
	}
	if err := readJSON(filepath.Join(dist, "metadata.json"), &meta); err != nil {
		return fmt.Errorf("%w (run goreleaser first)", err)
	}
	var arts []artifact
	if err := readJSON(filepath.Join(dist, "artifacts.json"), &arts); err != nil {
		return err
	}
	var server map[string]any
	if err := readJSON(serverJSON, &server); err != nil {
		return err
	}
	var packages []any
	for _, want := range Targets {
		a, err := binaryFor(arts, want[0], want[1])
		if err != nil {
			return err
		}
		out := filepath.Join(dist, Name(meta.Version, a.GOOS, a.GOARCH))
		sum, err := bundleFile(out, meta.Version, a, meta.Date)
		if err != nil {
			return fmt.Errorf("%s: %w", out, err)
		}
		fmt.Fprintf(log, "%s  %s\n", sum, filepath.Base(out))
		packages = append(packages, Package(meta.Version, a.GOOS, a.GOARCH, sum))
	}
	server["version"], server["packages"] = meta.Version, packages
	b, err := json.MarshalIndent(server, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dist, "server.json"), append(b, '\n'), 0o644)
}

// binaryFor is GoReleaser's binary for one platform.
func binaryFor(arts []artifact, goos, goarch string) (artifact, error) {
	for _, a := range arts {
		if a.Type == "Binary" && a.GOOS == goos && a.GOARCH == goarch {
			return a, nil
		}
	}
	return artifact{}, fmt.Errorf("dist has no %s/%s binary: the release must build every target of Targets", goos, goarch)
}

// bundle writes one bundle and returns its SHA-256 (hex).
func bundleFile(out, version string, a artifact, at time.Time) (sum string, err error) {
	bin, err := os.Open(a.Path)
	if err != nil {
		return "", err
	}
	defer bin.Close()
	f, err := os.Create(out)
	if err != nil {
		return "", err
	}
	defer func() { err = errors.Join(err, f.Close()) }()
	h := sha256.New()
	if err := Write(io.MultiWriter(f, h), version, a.GOOS, bin, at); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func readJSON(path string, into any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, into); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
