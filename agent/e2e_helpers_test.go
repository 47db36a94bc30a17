package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// wicketBin is the real binary, built once for the end-to-end tests.
var wicketBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "wicket-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	wicketBin = filepath.Join(dir, "wicket")
	build := exec.Command("go", "build", "-o", wicketBin, "wicket/cmd/wicket")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build wicket:", err)
		os.Exit(1)
	}
	code := m.Run()
	for _, line := range benchRatios {
		fmt.Println(line)
	}
	if stdioP50ListTemplates > 0 && httpP50ListTemplates > 0 {
		fmt.Printf("ratio mcp list_templates p50 over HTTP / stdio, both traced: %.2fx (%v vs %v)\n",
			float64(httpP50ListTemplates)/float64(stdioP50ListTemplates), httpP50ListTemplates, stdioP50ListTemplates)
	}
	if wireP50ListTemplates > 0 {
		fmt.Printf("ratio mcp list_templates p50 over stdio, trace on / 1 ms: %.2fx (%v)\n",
			float64(wireP50ListTemplates)/float64(time.Millisecond), wireP50ListTemplates)
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// cleanEnv keeps the host's project and keys out of a child.
var cleanEnv = []string{
	"WICKET_PROJECT=", "WICKET_NODE_OBSERVE_KEY=", "WICKET_NODE_CONTROL_KEY=", "WICKET_DATA_TOKEN=", "WICKET_OPERATOR_KEY=",
}

// runWicket runs the binary to completion (for set-up commands).
func runWicket(t *testing.T, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(wicketBin, args...)
	cmd.Env = append(append(os.Environ(), cleanEnv...), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("wicket %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// newProject creates a project in a temp dir.
func newProject(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "proj")
	runWicket(t, nil, "init", dir)
	return dir
}

// smallWorkerMemory sets proj's strategy worker memory limit to 256 MiB
// (from the 2,048 of wicket init), so a memory bomb dies in a moment
// rather than after filling 2 GiB.
func smallWorkerMemory(t *testing.T, proj string) {
	t.Helper()
	path := filepath.Join(proj, "wicket.toml")
	cfg, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(cfg), "worker_memory_mib = 2048") {
		t.Fatalf("wicket.toml has no worker_memory_mib = 2048: %v", err)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(cfg), "worker_memory_mib = 2048", "worker_memory_mib = 256", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
}

// session is one running `wicket mcp` driven by mcp-go's client.
type session struct {
	*client.Client
	init *mcp.InitializeResult
}

// startMCP starts `wicket [--project proj] mcp args...` and initializes it.
func startMCP(t testing.TB, env []string, proj string, args ...string) *session {
	t.Helper()
	return startMCPTo(t, testWriter{t}, env, proj, args...)
}

// startMCPTo is startMCP with the server's stderr sent to stderr.
func startMCPTo(t testing.TB, stderr io.Writer, env []string, proj string, args ...string) *session {
	t.Helper()
	argv := []string{"mcp"}
	if proj != "" {
		argv = []string{"--project", proj, "mcp"}
	}
	c, err := client.NewStdioMCPClientWithOptions(wicketBin, append(append([]string{}, cleanEnv...), env...), append(argv, args...),
		transport.WithCommandStderrWriter(stderr))
	if err != nil {
		t.Fatalf("start wicket mcp: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// The stdio constructor starts the transport but not the client, whose
	// Start wires notification handlers (progress) to it.
	if err := c.Start(ctx); err != nil {
		t.Fatalf("start the client: %v", err)
	}
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = "2025-06-18"
	req.Params.ClientInfo = mcp.Implementation{Name: "wicket-e2e", Version: "1"}
	res, err := c.Initialize(ctx, req)
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return &session{Client: c, init: res}
}

// testWriter sends a child's stderr to the test log.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Logf("mcp stderr: %s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// call invokes a tool with args given as JSON text.
func (s *session) call(t testing.TB, tool, args string) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	if args != "" {
		req.Params.Arguments = json.RawMessage(args)
	}
	res, err := s.CallTool(ctx, req)
	if err != nil {
		t.Fatalf("call %s: %v", tool, err)
	}
	return res
}

// text is a result's first text content.
func text(r *mcp.CallToolResult) string {
	for _, c := range r.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			return tc.Text
		}
	}
	return ""
}

// object decodes a successful result's structured JSON.
func object(t *testing.T, r *mcp.CallToolResult) map[string]any {
	t.Helper()
	if r.IsError {
		t.Fatalf("tool error: %s", text(r))
	}
	var m map[string]any
	body := []byte(text(r))
	if r.StructuredContent != nil { // a large result's text is a summary (compact.go)
		body, _ = json.Marshal(r.StructuredContent)
	}
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("result is not a JSON object: %v: %s", err, text(r))
	}
	return m
}

// toolNames lists tools/list.
func (s *session) toolNames(t *testing.T) []string {
	t.Helper()
	res, err := s.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// runWicketCode runs the binary in dir and returns its exit code and stderr.
func runWicketCode(t *testing.T, dir string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(wicketBin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), cleanEnv...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), stderr.String()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, stderr.String()
}
