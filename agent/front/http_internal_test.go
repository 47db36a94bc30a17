package front

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"wicket/agent"
	"wicket/internal/project"
)

// TestHTTPSessionCap: at the cap a new session evicts one idle for a
// minute, and is refused while every session is in use.
func TestHTTPSessionCap(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 5, 14, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	h, err := NewHTTP(agent.Options{Profile: agent.ProfileOffline, NewID: uuid.NewString, Now: clock},
		agent.Backends{Config: project.Defaults()}, HTTPOptions{Addr: "127.0.0.1:0", MaxSessions: 1})
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
	if code != http.StatusOK || second == first || h.sessionCount() != 1 {
		t.Fatalf("after a minute idle: %d, sessions %d", code, h.sessionCount())
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
	h, err := NewHTTP(agent.Options{Profile: agent.ProfileOffline, NewID: uuid.NewString, Now: clock},
		agent.Backends{Config: project.Defaults()}, HTTPOptions{Addr: "127.0.0.1:0", MaxSessions: 1})
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
	if h.sessionCount() != 1 {
		t.Fatalf("sessions = %d", h.sessionCount())
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

// TestHTTPAuthEveryMethod: POST, GET (the SSE stream) and DELETE each need
// the bearer token (401 with WWW-Authenticate without it), and a session
// answers only its own caller (403 with another caller's token), whatever
// the method; the owner's DELETE ends it.
func TestHTTPAuthEveryMethod(t *testing.T) {
	cs := &Callers{}
	alice, err := cs.Add("alice", agent.ProfileOffline, nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	bob, _ := cs.Add("bob", agent.ProfileOffline, nil, time.Now())
	h, err := NewHTTP(agent.Options{Profile: agent.ProfileOffline, NewID: uuid.NewString},
		agent.Backends{Config: project.Defaults()}, HTTPOptions{Addr: "127.0.0.1:0", Callers: cs})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	do := func(method, token, sid, body string) *http.Response {
		req, _ := http.NewRequest(method, srv.URL+MCPPath, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	res := do(http.MethodPost, alice, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	sid := res.Header.Get("Mcp-Session-Id")
	if res.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("alice initialize: %d %q", res.StatusCode, sid)
	}
	ping := `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	for _, m := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
		body := ""
		if m == http.MethodPost {
			body = ping
		}
		for _, tok := range []string{"", "wkc_wrong", "Bearer"} {
			if r := do(m, tok, sid, body); r.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("%s with token %q: %d, WWW-Authenticate %q; want 401", m, tok, r.StatusCode, r.Header.Get("WWW-Authenticate"))
			}
		}
		if r := do(m, bob, sid, body); r.StatusCode != http.StatusForbidden {
			t.Errorf("%s of alice's session with bob's token: %d, want 403", m, r.StatusCode)
		}
	}
	if h.sessionCount() != 1 {
		t.Fatalf("a refused DELETE ended the session: %d sessions", h.sessionCount())
	}
	if r := do(http.MethodDelete, alice, sid, ""); r.StatusCode != http.StatusOK || h.sessionCount() != 0 {
		t.Fatalf("alice's DELETE: %d, %d sessions left", r.StatusCode, h.sessionCount())
	}
	if r := do(http.MethodPost, alice, sid, ping); r.StatusCode != http.StatusNotFound {
		t.Errorf("an ended session answered %d, want 404", r.StatusCode)
	}
}

// TestHTTPBodyLimit: a POST body over --max-message is answered 413 with
// the -32600 that names the limit, unread beyond it; one at the limit is
// served.
func TestHTTPBodyLimit(t *testing.T) {
	const limit = 1024
	h, err := NewHTTP(agent.Options{Profile: agent.ProfileOffline, NewID: uuid.NewString, MaxMessage: limit},
		agent.Backends{Config: project.Defaults()}, HTTPOptions{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	post := func(body string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+MCPPath, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`
	pad := func(n int) string { return initialize + `,"pad":"` + strings.Repeat("x", n-len(initialize)-10) + `"}` }
	if code, body := post(pad(64 << 10)); code != http.StatusRequestEntityTooLarge || !strings.Contains(body, "-32600") || !strings.Contains(body, "1 KiB") {
		t.Errorf("a 64 KiB body: %d %s; want 413 naming the 1 KiB limit", code, body)
	}
	if body := pad(limit); len(body) != limit {
		t.Fatalf("pad made %d bytes", len(body))
	}
	if code, body := post(pad(limit)); code != http.StatusOK || !strings.Contains(body, `"protocolVersion"`) {
		t.Errorf("a body at the limit: %d %s", code, body)
	}
	if h.sessionCount() != 1 {
		t.Errorf("sessions = %d, want 1 (the refused body opened none)", h.sessionCount())
	}
}

// TestHTTPSessionShare: with several callers each may hold its share of
// the cap, so one that opens session after session cannot lock the others
// out; at its share a caller's new session evicts its own idle one, never
// another caller's.
func TestHTTPSessionShare(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 5, 14, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	cs := &Callers{}
	alice, _ := cs.Add("alice", agent.ProfileOffline, nil, now)
	bob, _ := cs.Add("bob", agent.ProfileOffline, nil, now)
	h, err := NewHTTP(agent.Options{Profile: agent.ProfileOffline, NewID: uuid.NewString, Now: clock},
		agent.Backends{Config: project.Defaults()}, HTTPOptions{Addr: "127.0.0.1:0", Callers: cs, MaxSessions: 4})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	initialize := func(token string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+MCPPath, strings.NewReader(
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		return res.StatusCode, string(b)
	}
	for i := range 2 {
		if code, body := initialize(alice); code != http.StatusOK {
			t.Fatalf("alice's session %d: %d %s", i+1, code, body)
		}
	}
	if code, body := initialize(alice); code != http.StatusServiceUnavailable || !strings.Contains(body, "its share") {
		t.Fatalf("alice's third session (her share is 2 of 4): %d %s", code, body)
	}
	mu.Lock()
	now = now.Add(2 * time.Minute) // alice's sessions are idle now
	mu.Unlock()
	for i := range 2 {
		if code, body := initialize(bob); code != http.StatusOK {
			t.Fatalf("bob's session %d: %d %s", i+1, code, body)
		}
	}
	if code, _ := initialize(alice); code != http.StatusOK {
		t.Fatalf("alice at her share with an idle session: %d", code)
	}
	if n := h.count(func(s *httpSession) bool { return s.caller == "bob" }); n != 2 || h.sessionCount() != 4 {
		t.Fatalf("bob holds %d sessions (want 2: alice evicted only her own), %d in all", n, h.sessionCount())
	}
}

// TestHTTPOriginHost: DNS-rebinding protection on the Host and Origin
// headers, IPv6 loopback included. A loopback name is accepted on any port
// (as the SDKs' "localhost:*"): a browser page on another local port
// cannot read a cross-origin answer, and its simple requests are refused
// for their content type.
func TestHTTPOriginHost(t *testing.T) {
	h, err := NewHTTP(agent.Options{Profile: agent.ProfileOffline, NewID: uuid.NewString},
		agent.Backends{Config: project.Defaults()}, HTTPOptions{Addr: "[::1]:8765", AllowOrigins: []string{"https://desk.example.com/"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		host, origin string
		ok           bool
	}{
		{"[::1]:8765", "", true},
		{"[::1]", "", true},
		{"localhost:8765", "", true},
		{"127.0.0.1:8765", "http://127.0.0.1:8765", true},
		{"[::1]:8765", "http://[::1]:8765", true},
		{"[::1]:8765", "http://localhost:6274", true},
		{"[::1]:8765", "https://desk.example.com", true},
		{"evil.example.com:8765", "", false},
		{"127.0.0.1.evil.example.com:8765", "", false},
		{"[::2]:8765", "", false},
		{"0.0.0.0:8765", "", false},
		{"[::1]:8765", "http://evil.example.com:8765", false},
		{"[::1]:8765", "http://localhost.evil.example.com", false},
		{"[::1]:8765", "null", false},
		{"[::1]:8765", "https://desk.example.com.evil.example.com", false},
		{"[::1]:8765", "http://[::1]@evil.example.com", false},
	} {
		r := httptest.NewRequest(http.MethodPost, "http://x"+MCPPath, nil)
		r.Host = tc.host
		if tc.origin != "" {
			r.Header.Set("Origin", tc.origin)
		}
		if why := h.checkOrigin(r); (why == "") != tc.ok {
			t.Errorf("Host %q Origin %q: refused=%v (%s), want ok=%v", tc.host, tc.origin, why != "", why, tc.ok)
		}
	}
}

// TestHTTPConcurrentInitializeEvicts (issue 31, item 12): initializes that
// arrive together while a caller sits at its share with idle sessions all
// get a session (each evicts an idle one), none a 503.
func TestHTTPConcurrentInitializeEvicts(t *testing.T) {
	const n = 8
	var mu sync.Mutex
	now := time.Date(2026, 5, 14, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	h, err := NewHTTP(agent.Options{Profile: agent.ProfileOffline, NewID: uuid.NewString, Now: clock},
		agent.Backends{Config: project.Defaults()}, HTTPOptions{Addr: "127.0.0.1:0", MaxSessions: n})
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
			t.Error(err)
			return 0, ""
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		return res.StatusCode, string(b)
	}
	for range n {
		if code, body := initialize(); code != http.StatusOK {
			t.Fatalf("filling the cap: %d %s", code, body)
		}
	}
	mu.Lock()
	now = now.Add(2 * time.Minute) // every session is idle now
	mu.Unlock()
	for round := range 5 {
		var wg sync.WaitGroup
		codes := make([]string, n)
		for i := range n {
			wg.Go(func() {
				code, body := initialize()
				if code != http.StatusOK {
					codes[i] = fmt.Sprintf("%d %s", code, body)
				}
			})
		}
		wg.Wait()
		for _, c := range codes {
			if c != "" {
				t.Fatalf("round %d: an initialize at the cap with idle sessions was refused: %s", round, c)
			}
		}
		if h.sessionCount() != n {
			t.Fatalf("round %d: %d sessions, want %d", round, h.sessionCount(), n)
		}
		mu.Lock()
		now = now.Add(2 * time.Minute)
		mu.Unlock()
	}
}
