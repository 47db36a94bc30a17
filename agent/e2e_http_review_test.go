package agent_test

import (
	"crypto/tls"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"

	"wicket/agent"
	"wicket/agent/front"
	"wicket/internal/testcert"
)

// TestHTTPTLS: with --tls-cert and --tls-key the server speaks HTTPS (its
// URL says so), a caller's session works over it, and plain HTTP to the
// same port gets no MCP answer.
func TestHTTPTLS(t *testing.T) {
	proj := newProject(t)
	tok := addCaller(t, proj, "remote-desk", agent.ProfileOffline)
	ca := testcert.NewCA(t)
	cert, key := ca.ServerFiles(t)
	pool := ca.Pool()
	h := startHTTP(t, nil, proj, "--tls-cert", cert, "--tls-key", key)
	if !strings.HasPrefix(h.url, "https://127.0.0.1:") {
		t.Fatalf("served at %s, want https://127.0.0.1:PORT/mcp", h.url)
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	s := h.connect(t, tok, transport.WithHTTPBasicClient(hc))
	if res := s.call(t, "list_templates", `{}`); res.IsError {
		t.Fatalf("list_templates over HTTPS: %s", text(res))
	}
	plain := "http://" + strings.TrimPrefix(h.url, "https://")
	res, err := http.Post(plain, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err == nil {
		res.Body.Close()
		if res.StatusCode != http.StatusBadRequest {
			t.Errorf("plain HTTP to the TLS port: %d, want the TLS server's 400", res.StatusCode)
		}
	}
}

// TestHTTPCancelledGetsNoResponse: over HTTP a request the client cancelled
// gets no JSON-RPC response: its POST ends as an SSE stream with no event
// (issue 31, item 12: not 202, which Streamable HTTP keeps for a POST of
// notifications and responses; not a 200 whose JSON body is missing), and
// the session goes on.
func TestHTTPCancelledGetsNoResponse(t *testing.T) {
	proj := newProject(t)
	runWicket(t, nil, "--project", proj, "data", "seed-demo")
	runWicket(t, nil, "--project", proj, "strategy", "new", "mine", "--from", "sma_cross_bar") // on_bar: slow enough to be in flight when the cancellation comes, however fast sweeps get
	h := startHTTP(t, nil, proj, "--no-auth")
	sid := ""
	post := func(body string) (*http.Response, string) {
		req, _ := http.NewRequest(http.MethodPost, h.url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return nil, ""
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, string(b)
	}
	res, _ := post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	sid = res.Header.Get("Mcp-Session-Id")
	post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	type answer struct {
		code        int
		contentType string
		body        string
	}
	slow := make(chan answer, 1)
	go func() {
		res, body := post(`{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"run_sweep","arguments":{"name":"mine","series":"BTC-USD@1h","grid":{"fast":{"from":2,"to":60},"slow":{"from":61,"to":120}},"max_combinations":5000}}}`)
		if res == nil {
			slow <- answer{}
			return
		}
		slow <- answer{res.StatusCode, res.Header.Get("Content-Type"), body}
	}()
	time.Sleep(700 * time.Millisecond)
	post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow","reason":"the user gave up"}}`)
	select {
	case a := <-slow:
		if a.code != http.StatusOK || a.contentType != "text/event-stream" || strings.TrimSpace(a.body) != "" {
			t.Errorf("the cancelled call's POST ended %d %q with %q; want 200, an SSE stream and no event", a.code, a.contentType, a.body)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the cancelled call's POST never ended")
	}
	if res, body := post(`{"jsonrpc":"2.0","id":2,"method":"ping"}`); res == nil || !strings.Contains(body, `"id":2`) {
		t.Errorf("ping after the cancellation: %q", body)
	}
}

// TestHTTPCallersFileWritableByOthers: a callers.toml that others may write
// (they could add a caller of their own) stops the server before it
// listens; one others may only read is served with a warning.
func TestHTTPCallersFileWritableByOthers(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("unix file modes")
	}
	proj := newProject(t)
	addCaller(t, proj, "desk", agent.ProfileOffline)
	file := filepath.Join(proj, "settings", front.CallersFile)
	if err := os.Chmod(file, 0o620); err != nil {
		t.Fatal(err)
	}
	code, stderr := runWicketCode(t, proj, "mcp", "--http", "127.0.0.1:0")
	if code != 2 || !strings.Contains(stderr, "is writable by others (mode 620)") || !strings.Contains(stderr, "chmod 600") {
		t.Fatalf("group-writable callers.toml: exit %d, stderr %q; want 2 and the advice", code, stderr)
	}
	if err := os.Chmod(file, 0o644); err != nil {
		t.Fatal(err)
	}
	startHTTP(t, nil, proj) // served; the warning goes to the log
}
