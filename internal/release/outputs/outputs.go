// Package outputs is the last step of a release after GoReleaser and the
// MCPB bundles (internal/release/mcpb): it writes the container image (an
// OCI archive, internal/release/ociimage) from the Linux binaries and the
// Homebrew formula (internal/release/brew) from the darwin and linux
// archives, and adds the bundles, the image and the formula to the
// release's checksums file, so one file vouches for every output.
//
// It never reaches the network and never publishes anything.
package outputs

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"wicket/internal/release/brew"
	"wicket/internal/release/mcpb"
	"wicket/internal/release/ociimage"
)

// Description is the formula's one line (server.json says the same).
const Description = "Author, research and trade Starlark strategies behind a preview-and-confirm gate"

// ImageName and FormulaName are the files Write adds to dist.
func ImageName(version string) string { return fmt.Sprintf("wicket_%s_oci.tar", version) }

// FormulaName is the Homebrew formula's file name in dist.
const FormulaName = "wicket.rb"

type artifact struct {
	Name   string `json:"name"`
	Path   string `json:"path"`
	GOOS   string `json:"goos"`
	GOARCH string `json:"goarch"`
	Type   string `json:"type"`
}

// Write adds the image and the formula to dist (GoReleaser's folder, the
// MCPB bundles made), reading CA roots from caFile, and adds every bundle,
// the image and the formula to the checksums file. It logs each file with
// its sum.
func Write(dist, caFile string, log io.Writer) error {
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
	sums := ""
	var platforms []ociimage.Platform
	var archives []brew.Archive
	for _, a := range arts {
		switch {
		case a.Type == "Checksum":
			sums = a.Path
		case a.Type == "Binary" && a.GOOS == "linux":
			b, err := os.ReadFile(a.Path)
			if err != nil {
				return err
			}
			platforms = append(platforms, ociimage.Platform{Arch: a.GOARCH, Binary: b})
		case a.Type == "Archive" && (a.GOOS == "darwin" || a.GOOS == "linux"):
			sum, err := fileSum(a.Path)
			if err != nil {
				return err
			}
			archives = append(archives, brew.Archive{GOOS: a.GOOS, GOARCH: a.GOARCH, Name: filepath.Base(a.Path), SHA256: sum})
		}
	}
	if sums == "" {
		return fmt.Errorf("%s lists no checksums file: .goreleaser.yaml's checksum section makes it", filepath.Join(dist, "artifacts.json"))
	}
	sort.Slice(platforms, func(i, j int) bool { return platforms[i].Arch < platforms[j].Arch })
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return fmt.Errorf("CA roots for the image: %w (install Debian's ca-certificates)", err)
	}
	var img bytes.Buffer
	if err := ociimage.Write(&img, meta.Version, mcpb.Repository, meta.Date, ca, platforms); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dist, ImageName(meta.Version)), img.Bytes(), 0o644); err != nil {
		return err
	}
	formula, err := brew.Formula(meta.Version, mcpb.Repository, Description, archives)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dist, FormulaName), []byte(formula), 0o644); err != nil {
		return err
	}
	add := []string{ImageName(meta.Version), FormulaName}
	for _, tg := range mcpb.Targets {
		add = append(add, mcpb.Name(meta.Version, tg[0], tg[1]))
	}
	return addSums(sums, dist, add, log)
}

// addSums adds "SUM  NAME" for each of names (files in dist) to the
// checksums file, replacing a line of the same name, sorted by name as
// GoReleaser writes it.
func addSums(path, dist string, names []string, log io.Writer) error {
	lines := map[string]string{}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if sum, name, ok := strings.Cut(sc.Text(), "  "); ok {
			lines[name] = sum
		}
	}
	f.Close()
	if err := sc.Err(); err != nil {
		return err
	}
	for _, name := range names {
		sum, err := fileSum(filepath.Join(dist, name))
		if err != nil {
			return err
		}
		lines[name] = sum
		fmt.Fprintf(log, "%s  %s\n", sum, name)
	}
	all := make([]string, 0, len(lines))
	for name := range lines {
		all = append(all, name)
	}
	sort.Strings(all)
	var b strings.Builder
	for _, name := range all {
		fmt.Fprintf(&b, "%s  %s\n", lines[name], name)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func fileSum(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
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
