package release

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"wicket/internal/release/mcpb"
)

// mcpbSchemaURL names the committed MCPB manifest schema (v0.4).
const mcpbSchemaURL = "https://raw.githubusercontent.com/modelcontextprotocol/mcpb/main/schemas/mcpb-manifest-v0.4.schema.json"

func compileMCPB(t *testing.T) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(mcpbSchemaURL, readJSON(t, filepath.Join(root, "testdata", "mcpb", "mcpb-manifest-v0.4.schema.json"))); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(mcpbSchemaURL)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func decode(t *testing.T, b []byte) any {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestMCPBManifest: each target's manifest.json matches the MCPB v0.4
// schema and runs the bundled binary as `wicket --project DIR mcp`, DIR
// being the one setting the user is asked for, on the target's platform
// only.
func TestMCPBManifest(t *testing.T) {
	schema := compileMCPB(t)
	want := map[string]string{"linux": "linux", "darwin": "darwin", "windows": "win32"}
	for _, tg := range mcpb.Targets {
		b, err := mcpb.Manifest("1.2.3", tg[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := schema.Validate(decode(t, b)); err != nil {
			t.Fatalf("%s manifest does not match the MCPB schema: %v\n%s", tg[0], err, b)
		}
		var m struct {
			Version string
			Server  struct {
				Type       string
				EntryPoint string `json:"entry_point"`
				MCPConfig  struct {
					Command string
					Args    []string
				} `json:"mcp_config"`
			}
			UserConfig map[string]struct {
				Type     string
				Required bool
			} `json:"user_config"`
			Compatibility struct{ Platforms []string }
		}
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		if m.Version != "1.2.3" || m.Server.Type != "binary" || m.Server.EntryPoint != "server/"+mcpb.Binary(tg[0]) ||
			m.Server.MCPConfig.Command != "${__dirname}/"+m.Server.EntryPoint {
			t.Errorf("%s: version %q, server %+v", tg[0], m.Version, m.Server)
		}
		if got := strings.Join(m.Server.MCPConfig.Args, " "); got != "--project ${user_config.project} mcp" {
			t.Errorf("%s: args %q", tg[0], got)
		}
		if p := m.UserConfig["project"]; p.Type != "directory" || !p.Required {
			t.Errorf("%s: user_config.project %+v", tg[0], p)
		}
		if len(m.Compatibility.Platforms) != 1 || m.Compatibility.Platforms[0] != want[tg[0]] {
			t.Errorf("%s: platforms %v", tg[0], m.Compatibility.Platforms)
		}
	}
	if _, err := mcpb.Manifest("1.2.3", "plan9"); err == nil {
		t.Error("a manifest for plan9 was made")
	}
}

// TestMCPBSchemaRefusesBrokenManifest shows the manifest check can fail.
func TestMCPBSchemaRefusesBrokenManifest(t *testing.T) {
	schema := compileMCPB(t)
	good, err := mcpb.Manifest("1.2.3", "linux")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ why, old, new string }{
		{"another manifest version", `"manifest_version": "0.4"`, `"manifest_version": "0.2"`},
		{"a server of no known type", `"type": "binary"`, `"type": "go"`},
		{"an unknown platform", `"linux"`, `"plan9"`},
		{"an author without a name", `"name": "wicket-trading"`, `"handle": "wicket-trading"`},
	} {
		broken := bytes.Replace(good, []byte(c.old), []byte(c.new), 1)
		if bytes.Equal(broken, good) {
			t.Fatalf("%s: the edit found nothing to change", c.why)
		}
		if schema.Validate(decode(t, broken)) == nil {
			t.Errorf("%s was accepted", c.why)
		}
	}
}

// TestBundleDist: from a GoReleaser dist folder, BundleDist writes one
// bundle per target (manifest.json and the executable binary) and a
// dist/server.json at the release's version that matches the registry
// schema and lists each bundle with its real SHA-256; the committed
// server.json lists the same packages at its own version, without hashes
// (a release's are known only once it is built).
func TestBundleDist(t *testing.T) {
	dist := t.TempDir()
	const version = "1.2.3"
	var arts []map[string]string
	for _, tg := range mcpb.Targets {
		dir := filepath.Join(dist, "wicket_"+tg[0]+"_"+tg[1])
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, mcpb.Binary(tg[0]))
		if err := os.WriteFile(p, []byte("binary for "+tg[0]+"/"+tg[1]), 0o755); err != nil {
			t.Fatal(err)
		}
		arts = append(arts, map[string]string{"path": p, "goos": tg[0], "goarch": tg[1], "type": "Binary"},
			map[string]string{"path": p + ".tar.gz", "goos": tg[0], "goarch": tg[1], "type": "Archive"})
	}
	write := func(name string, v any) {
		b, _ := json.Marshal(v)
		if err := os.WriteFile(filepath.Join(dist, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("artifacts.json", arts)
	write("metadata.json", map[string]any{"version": version, "date": time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)})
	var log bytes.Buffer
	if err := mcpb.BundleDist(dist, filepath.Join(root, "server.json"), &log); err != nil {
		t.Fatal(err)
	}

	raw, err := os.ReadFile(filepath.Join(dist, "server.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := compile(t).Validate(decode(t, raw)); err != nil {
		t.Fatalf("dist/server.json does not match the registry schema: %v", err)
	}
	var out struct {
		Version  string
		Packages []map[string]any
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	if out.Version != version || len(out.Packages) != len(mcpb.Targets) {
		t.Fatalf("dist/server.json: version %q, %d packages", out.Version, len(out.Packages))
	}
	for i, tg := range mcpb.Targets {
		name := mcpb.Name(version, tg[0], tg[1])
		b, err := os.ReadFile(filepath.Join(dist, name))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if p := out.Packages[i]; p["fileSha256"] != hex.EncodeToString(sum[:]) || !strings.HasSuffix(p["identifier"].(string), "/v"+version+"/"+name) {
			t.Errorf("package %d: %v; the bundle's sum is %x", i, p, sum)
		}
		if !strings.Contains(log.String(), hex.EncodeToString(sum[:])+"  "+name) {
			t.Errorf("the log does not name %s with its sum", name)
		}
		zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		files := map[string]*zip.File{}
		for _, f := range zr.File {
			files[f.Name] = f
		}
		bin := files["server/"+mcpb.Binary(tg[0])]
		if len(files) != 2 || files["manifest.json"] == nil || bin == nil || bin.Mode().Perm() != 0o755 {
			t.Fatalf("%s holds %v", name, zr.File)
		}
		rc, _ := bin.Open()
		body, _ := io.ReadAll(rc)
		rc.Close()
		if string(body) != "binary for "+tg[0]+"/"+tg[1] {
			t.Errorf("%s carries %q", name, body)
		}
		rc, _ = files["manifest.json"].Open()
		manifest, _ := io.ReadAll(rc)
		rc.Close()
		if wantManifest, _ := mcpb.Manifest(version, tg[0]); !bytes.Equal(manifest, wantManifest) {
			t.Errorf("%s: manifest.json differs from Manifest", name)
		}
	}

	var committed struct {
		Version  string
		Packages []map[string]any
	}
	b, _ := os.ReadFile(filepath.Join(root, "server.json"))
	if err := json.Unmarshal(b, &committed); err != nil {
		t.Fatal(err)
	}
	for i, tg := range mcpb.Targets {
		want, _ := json.Marshal(mcpb.Package(committed.Version, tg[0], tg[1], ""))
		if i >= len(committed.Packages) {
			t.Fatalf("server.json lists %d packages, want one per target (%d)", len(committed.Packages), len(mcpb.Targets))
		}
		if got, _ := json.Marshal(committed.Packages[i]); !bytes.Equal(got, want) {
			t.Errorf("server.json package %d is %s, want %s", i, got, want)
		}
	}
}
