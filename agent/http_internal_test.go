package agent

import (
	"context"
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

// TestHTTPSessionCapKeepsBusy: a session serving a request (here an open
// GET stream) is never evicted for idleness, however long ago it began;
// once the stream ends it may be.
func TestHTTPSessionCapKeepsBusy(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 5, 14, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	h, err := NewHTTP(Options{Profile: ProfileOffline, NewID: uuid.NewString, Now: clock},
		Backends{Config: project.Defaults()}, HTTPOptions{Addr: "127.0.0.1:0", MaxSessions: 1})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	post := func(sid, body string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+MCPPath, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode, res.Header.Get("Mcp-Session-Id")
	}
	initBody := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	code, first := post("", initBody)
	if code != http.StatusOK || first == "" {
		t.Fatalf("first session: %d %q", code, first)
	}
	post(first, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+MCPPath, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", first)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET stream: %d", res.StatusCode)
	}
	advance(2 * time.Minute)
	if code, _ := post("", initBody); code != http.StatusServiceUnavailable {
		t.Fatalf("a session with an open GET stream was evicted: initialize got %d, want 503", code)
	}
	if h.Sessions() != 1 {
		t.Fatalf("sessions = %d", h.Sessions())
	}
	cancel()
	res.Body.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		h.mu.Lock()
		s := h.sessions[first]
		h.mu.Unlock()
		if _, idle := s.idleSince(); idle {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the GET stream never ended")
		}
		time.Sleep(10 * time.Millisecond)
	}
	advance(2 * time.Minute)
	if code, second := post("", initBody); code != http.StatusOK || second == first {
		t.Fatalf("after the stream ended and a minute idle: %d %q", code, second)
	}
}
