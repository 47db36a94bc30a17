package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"wicket/internal/buildinfo"
)

// TestVersionOneAnswer: --version and serverInfo report the same version,
// the one internal/buildinfo decides (a plain build used to say "dev" in
// one and "devel" in the other).
func TestVersionOneAnswer(t *testing.T) {
	want := buildinfo.Version(version)
	code, stdout, _ := wicket(t, "--version")
	if got := strings.TrimPrefix(strings.TrimSpace(stdout), "wicket version "); code != 0 || got != want {
		t.Fatalf("--version = %q (code %d), want %q", stdout, code, want)
	}
	// wicket mcp in-process: one initialize on stdin, then EOF ends it.
	t.Setenv("WICKET_PROJECT", "")
	t.Chdir(t.TempDir())
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` +
		mcp.LATEST_LEGACY_PROTOCOL_VERSION + `","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n"
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"wicket", "mcp"}, strings.NewReader(init), &out, &errOut); code != 0 {
		t.Fatalf("wicket mcp: code %d, stderr %s", code, errOut.String())
	}
	var resp struct {
		Result struct {
			ServerInfo mcp.Implementation `json:"serverInfo"`
		} `json:"result"`
	}
	line, _, _ := strings.Cut(out.String(), "\n")
	if err := json.Unmarshal([]byte(line), &resp); err != nil {
		t.Fatalf("initialize answer %q: %v", line, err)
	}
	if got := resp.Result.ServerInfo.Version; got != want {
		t.Errorf("serverInfo.version = %q, --version = %q: want one version", got, want)
	}
}
