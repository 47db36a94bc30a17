package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// builtWicket builds the real binary once per test run.
func builtWicket(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "wicket-bin-")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "wicket")
		out, err := exec.Command("go", "build", "-o", builtBin, ".").CombinedOutput()
		if err != nil {
			buildErr = &buildFailure{err, string(out)}
		}
	})
	if buildErr != nil {
		t.Fatalf("build wicket: %v", buildErr)
	}
	return builtBin
}

type buildFailure struct {
	err error
	out string
}

func (b *buildFailure) Error() string { return b.err.Error() + "\n" + b.out }

// TestToolDocsMatchServer pins docs/mcp-tools.md to the running server:
// every tool in tools/list has a section whose stable part (description,
// annotations, input table) is exactly what the server says, and the file
// documents no tool the server does not list. Regenerate with `make docs`.
func TestToolDocsMatchServer(t *testing.T) {
	bin := builtWicket(t)
	c, err := client.NewStdioMCPClientWithOptions(bin, nil, []string{"mcp", "--profile", "full"},
		transport.WithCommandFunc(func(ctx context.Context, command string, env []string, args []string) (*exec.Cmd, error) {
			cmd := exec.CommandContext(ctx, command, args...)
			cmd.Env = append(os.Environ(), "WICKET_PROJECT=")
			cmd.Dir = t.TempDir()
			return cmd, nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	list, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("../../docs/mcp-tools.md")
	if err != nil {
		t.Fatalf("docs/mcp-tools.md: %v (generate it with `make docs`)", err)
	}
	defer f.Close()
	documented, err := docSections(f)
	if err != nil {
		t.Fatal(err)
	}
	served := map[string]bool{}
	for _, tool := range list.Tools {
		served[tool.Name] = true
		got, ok := documented[tool.Name]
		if !ok {
			t.Errorf("tool %s is served but not documented in docs/mcp-tools.md (run make docs)", tool.Name)
			continue
		}
		if want := toolReference(tool); got != want {
			t.Errorf("docs/mcp-tools.md section for %s differs from the server (run make docs)\n--- docs\n%s\n--- server\n%s", tool.Name, got, want)
		}
	}
	var stale []string
	for name := range documented {
		if !served[name] {
			stale = append(stale, name)
		}
	}
	sort.Strings(stale)
	if len(stale) > 0 {
		t.Errorf("docs/mcp-tools.md documents tools the server does not list: %s (run make docs)", strings.Join(stale, ", "))
	}
}
