package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDocsGenerate runs what `make docs` runs, `wicket demo --docs FILE`,
// against a fresh demo project and node: every tool the server lists has
// an example that succeeds (the deployment tools against a paper
// deployment the generator creates), and the generated reference has the
// same sections as docs/mcp-tools.md.
func TestDocsGenerate(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs the docs generator")
	}
	out := filepath.Join(t.TempDir(), "mcp-tools.md")
	cmd := exec.Command(builtWicket(t), "demo", "--docs", out, "--timeout", "2m")
	cmd.Env = append(os.Environ(), "WICKET_PROJECT=")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("wicket demo --docs: %v\n%s", err, b)
	}
	gen, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer gen.Close()
	got, err := docSections(gen)
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.Open("../../docs/mcp-tools.md")
	if err != nil {
		t.Fatal(err)
	}
	defer committed.Close()
	want, err := docSections(committed)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"deploy_strategy", "stop_deployment", "deployment_report"} {
		if _, ok := got[tool]; !ok {
			t.Errorf("the generated reference has no section for %s", tool)
		}
	}
	for name, sec := range got {
		if want[name] != sec {
			t.Errorf("docs/mcp-tools.md's section %s is not what make docs generates (run make docs)", name)
		}
	}
	if len(got) != len(want) {
		t.Errorf("generated %d sections, docs/mcp-tools.md has %d", len(got), len(want))
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"id": "dep-`) {
		t.Errorf("the deployment examples show no deployment id")
	}
}
