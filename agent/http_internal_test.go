package agent

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"wicket/internal/project"
)

// TestHTTPSessionCap: at the cap a new session evicts one idle for a
// minute, and is refused while every session is in use.
func TestHTTPSessionCap(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 5, 14, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	h, err := NewHTTP(Options{Profile: ProfileOffline, NewID: uuid.NewString, Now: clock},
		Backends{Config: project.Defaults()}, HTTPOptions{Addr: "127.0.0.1:0", MaxSessions: 1})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	initialize := func() (int, string) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+MCPPath, strings.NewReader(
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode, res.Header.Get("Mcp-Session-Id")
	}
	code, first := initialize()
	if code != http.StatusOK || first == "" {
		t.Fatalf("first session: %d %q", code, first)
	}
	if code, _ := initialize(); code != http.StatusServiceUnavailable {
		t.Fatalf("second session while the first is in use: %d, want 503", code)
	}
	mu.Lock()
	now = now.Add(2 * time.Minute)
	mu.Unlock()
	code, second := initialize()
	if code != http.StatusOK || second == first || h.Sessions() != 1 {
		t.Fatalf("after a minute idle: %d, sessions %d", code, h.Sessions())
	}
}
