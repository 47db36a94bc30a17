package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"wicket/internal/release/brew"
	"wicket/internal/release/mcpb"
	"wicket/internal/release/ociimage"
	"wicket/internal/release/outputs"
)

// fakeDist lays out what GoReleaser leaves in dist for version: a binary
// and an archive per target, the checksums file of the archives,
// artifacts.json and metadata.json.
func fakeDist(t *testing.T, version string) string {
	t.Helper()
	dist := t.TempDir()
	var arts []map[string]string
	var sums strings.Builder
	for _, tg := range mcpb.Targets {
		dir := filepath.Join(dist, "wicket_"+tg[0]+"_"+tg[1])
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		bin := filepath.Join(dir, mcpb.Binary(tg[0]))
		if err := os.WriteFile(bin, []byte("binary for "+tg[0]+"/"+tg[1]), 0o755); err != nil {
			t.Fatal(err)
		}
		archive := filepath.Join(dist, fmt.Sprintf("wicket_%s_%s_%s.tar.gz", version, tg[0], tg[1]))
		body := []byte("archive for " + tg[0] + "/" + tg[1])
		if err := os.WriteFile(archive, body, 0o644); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(body)
		fmt.Fprintf(&sums, "%x  %s\n", sum, filepath.Base(archive))
		arts = append(arts, map[string]string{"path": bin, "goos": tg[0], "goarch": tg[1], "type": "Binary"},
			map[string]string{"path": archive, "goos": tg[0], "goarch": tg[1], "type": "Archive"})
	}
	checksums := filepath.Join(dist, "wicket_"+version+"_checksums.txt")
	if err := os.WriteFile(checksums, []byte(sums.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	arts = append(arts, map[string]string{"path": checksums, "type": "Checksum"})
	for name, v := range map[string]any{
		"artifacts.json": arts,
		"metadata.json":  map[string]any{"version": version, "date": time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)},
	} {
		b, _ := json.Marshal(v)
		if err := os.WriteFile(filepath.Join(dist, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dist
}

// TestReleaseOutputs: after GoReleaser and the MCPB bundles, the release
// holds an OCI image (non-root, no shell, one manifest per Linux
// platform, every digest true) and a Homebrew formula (each archive's URL
// and sum), and its checksums file vouches for the bundles, the image and
// the formula too.
func TestReleaseOutputs(t *testing.T) {
	const version = "1.2.3-snapshot+abc1234"
	dist := fakeDist(t, version)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, []byte("-----BEGIN CERTIFICATE-----\nroots\n-----END CERTIFICATE-----\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	if err := mcpb.BundleDist(dist, filepath.Join(root, "server.json"), &log); err != nil {
		t.Fatal(err)
	}
	if err := outputs.Write(dist, ca, &log); err != nil {
		t.Fatal(err)
	}

	// The checksums file: every archive, bundle, the image and the formula, each sum true.
	raw, err := os.ReadFile(filepath.Join(dist, "wicket_"+version+"_checksums.txt"))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		sum, name, ok := strings.Cut(line, "  ")
		if !ok {
			t.Fatalf("checksums line %q", line)
		}
		b, err := os.ReadFile(filepath.Join(dist, name))
		if err != nil {
			t.Fatal(err)
		}
		if s := sha256.Sum256(b); hex.EncodeToString(s[:]) != sum {
			t.Errorf("checksums: %s has sum %x, the file says %s", name, s, sum)
		}
		listed[name] = true
	}
	want := []string{outputs.ImageName(version), outputs.FormulaName}
	for _, tg := range mcpb.Targets {
		want = append(want, mcpb.Name(version, tg[0], tg[1]), fmt.Sprintf("wicket_%s_%s_%s.tar.gz", version, tg[0], tg[1]))
	}
	for _, name := range want {
		if !listed[name] {
			t.Errorf("the checksums file does not list %s:\n%s", name, raw)
		}
	}

	checkImage(t, filepath.Join(dist, outputs.ImageName(version)), version)
	checkFormula(t, filepath.Join(dist, outputs.FormulaName), version, dist)

	// The same inputs give the same image.
	again := fakeDist(t, version)
	if err := mcpb.BundleDist(again, filepath.Join(root, "server.json"), io.Discard); err != nil {
		t.Fatal(err)
	}
	if err := outputs.Write(again, ca, io.Discard); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(filepath.Join(dist, outputs.ImageName(version)))
	b, _ := os.ReadFile(filepath.Join(again, outputs.ImageName(version)))
	if !bytes.Equal(a, b) {
		t.Error("two images of the same binaries differ")
	}
}

// checkImage reads an OCI archive back and checks it as a runtime would.
func checkImage(t *testing.T, path, version string) {
	t.Helper()
	f, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	tr := tar.NewReader(bytes.NewReader(f))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		files[h.Name] = b
	}
	if string(files["oci-layout"]) != `{"imageLayoutVersion":"1.0.0"}` {
		t.Fatalf("oci-layout: %q", files["oci-layout"])
	}
	blob := func(d ociimage.Descriptor, media string) []byte {
		t.Helper()
		b, ok := files["blobs/sha256/"+strings.TrimPrefix(d.Digest, "sha256:")]
		sum := sha256.Sum256(b)
		if !ok || "sha256:"+hex.EncodeToString(sum[:]) != d.Digest || int64(len(b)) != d.Size || d.MediaType != media {
			t.Fatalf("blob %+v: missing, or its digest, size or media type is wrong", d)
		}
		return b
	}
	var top, index ociimage.Index
	if err := json.Unmarshal(files["index.json"], &top); err != nil {
		t.Fatal(err)
	}
	if top.SchemaVersion != 2 || top.MediaType != ociimage.MediaIndex || len(top.Manifests) != 1 ||
		top.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != version {
		t.Fatalf("index.json does not name one image by version: %+v", top)
	}
	if err := json.Unmarshal(blob(top.Manifests[0], ociimage.MediaIndex), &index); err != nil {
		t.Fatal(err)
	}
	arches := map[string]bool{}
	for _, md := range index.Manifests {
		var m ociimage.Manifest
		if err := json.Unmarshal(blob(md, ociimage.MediaManifest), &m); err != nil {
			t.Fatal(err)
		}
		var cfg ociimage.Config
		if err := json.Unmarshal(blob(m.Config, ociimage.MediaConfig), &cfg); err != nil {
			t.Fatal(err)
		}
		arch := md.Platform.Architecture
		arches[arch] = true
		if md.Platform.OS != "linux" || cfg.OS != "linux" || cfg.Architecture != arch || len(m.Layers) != 1 {
			t.Fatalf("%s: platform %+v, config %s/%s, %d layers", arch, md.Platform, cfg.OS, cfg.Architecture, len(m.Layers))
		}
		uid, _, _ := strings.Cut(cfg.Config.User, ":")
		if n, err := strconv.Atoi(uid); err != nil || n == 0 {
			t.Errorf("%s: the image runs as %q, not a non-root uid", arch, cfg.Config.User)
		}
		gz := blob(m.Layers[0], ociimage.MediaLayer)
		zr, err := gzip.NewReader(bytes.NewReader(gz))
		if err != nil {
			t.Fatal(err)
		}
		layer, _ := io.ReadAll(zr)
		if sum := sha256.Sum256(layer); len(cfg.RootFS.DiffIDs) != 1 || cfg.RootFS.DiffIDs[0] != "sha256:"+hex.EncodeToString(sum[:]) {
			t.Errorf("%s: diff_ids %v do not name the layer", arch, cfg.RootFS.DiffIDs)
		}
		entries := map[string]*tar.Header{}
		bodies := map[string][]byte{}
		lr := tar.NewReader(bytes.NewReader(layer))
		for {
			h, err := lr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			entries[strings.TrimSuffix(h.Name, "/")] = h
			bodies[h.Name], _ = io.ReadAll(lr)
		}
		entry := strings.TrimPrefix(cfg.Config.Entrypoint[0], "/")
		if h := entries[entry]; h == nil || h.Typeflag != tar.TypeReg || h.Mode&0o111 == 0 || string(bodies[entry]) != "binary for linux/"+arch {
			t.Errorf("%s: the entrypoint %s is not the linux/%s binary", arch, entry, arch)
		}
		for name := range entries {
			if name == "bin" || strings.HasPrefix(name, "bin/") || strings.HasSuffix(name, "/sh") || strings.Contains(name, "busybox") {
				t.Errorf("%s: a distroless image has no %s", arch, name)
			}
		}
		if !strings.Contains(string(bodies["etc/passwd"]), fmt.Sprintf("nonroot:x:%s:", uid)) {
			t.Errorf("%s: /etc/passwd does not name uid %s: %q", arch, uid, bodies["etc/passwd"])
		}
		if h := entries[strings.TrimPrefix(ociimage.Home, "/")]; h == nil || strconv.Itoa(h.Uid) != uid {
			t.Errorf("%s: the home %s is not the user's", arch, ociimage.Home)
		}
		if len(bodies[strings.TrimPrefix(ociimage.CAFile, "/")]) == 0 {
			t.Errorf("%s: no CA roots at %s", arch, ociimage.CAFile)
		}
	}
	if len(arches) != 2 || !arches["amd64"] || !arches["arm64"] {
		t.Errorf("the image's platforms are %v, want linux amd64 and arm64", arches)
	}
}

// checkFormula checks the formula names each darwin and linux archive
// with its sum, installs the binary and tests it; with ruby at hand, it
// must also parse.
func checkFormula(t *testing.T, path, version, dist string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f := string(b)
	for _, want := range []string{"class Wicket < Formula\n", `version "` + version + `"`, `bin.install "wicket"`,
		`generate_completions_from_executable(bin/"wicket", "completion")`, `shell_output("#{bin}/wicket --version")`} {
		if !strings.Contains(f, want) {
			t.Errorf("the formula has no %s:\n%s", want, f)
		}
	}
	for _, tg := range mcpb.Targets {
		if tg[0] == "windows" {
			continue
		}
		name := fmt.Sprintf("wicket_%s_%s_%s.tar.gz", version, tg[0], tg[1])
		body, _ := os.ReadFile(filepath.Join(dist, name))
		sum := sha256.Sum256(body)
		block := fmt.Sprintf("      url %q\n      sha256 %q\n", mcpb.Repository+"/releases/download/v"+version+"/"+name, hex.EncodeToString(sum[:]))
		if !strings.Contains(f, block) {
			t.Errorf("the formula does not fetch %s with its sum:\n%s", name, f)
		}
	}
	if opens, ends := strings.Count(f, " do\n")+strings.Count(f, "\n  def ")+strings.Count(f, "< Formula\n"), strings.Count(f, "end\n"); opens != ends {
		t.Errorf("the formula opens %d blocks and ends %d", opens, ends)
	}
	if ruby, err := exec.LookPath("ruby"); err == nil {
		if out, err := exec.Command(ruby, "-c", path).CombinedOutput(); err != nil {
			t.Errorf("ruby -c: %v\n%s", err, out)
		}
	}
	if _, err := brew.Formula(version, mcpb.Repository, outputs.Description, nil); err == nil {
		t.Error("a formula without archives was written")
	}
}
