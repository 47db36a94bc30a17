package agent

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"wicket/internal/project"
)

// TestHTTP2026CallerStateCap: a caller's modern requests share one state;
// the states are bounded by MaxSessions: at the cap a new caller evicts
// one idle for a minute and is refused while every state was used within
// it; a state idle past IdleTTL is dropped.
func TestHTTP2026CallerStateCap(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 8, 3, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	cs := &Callers{}
	alice, _ := cs.Add("alice", ProfileOffline, nil, now)
	bob, _ := cs.Add("bob", ProfileOffline, nil, now)
	h, err := NewHTTP(Options{Profile: ProfileOffline, NewID: uuid.NewString, Now: clock},
		Backends{Config: project.Defaults()}, HTTPOptions{Addr: "127.0.0.1:0", Callers: cs, MaxSessions: 1, IdleTTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	list := func(token string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+MCPPath, strings.NewReader(
			`{"jsonrpc":"2.0","id":1,"method":"prompts/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "prompts/list")
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		return res.StatusCode, string(b)
	}
	for i := range 3 {
		if code, body := list(alice); code != http.StatusOK || h.modernCount() != 1 {
			t.Fatalf("alice's request %d: %d %s, %d states", i+1, code, body, h.modernCount())
		}
	}
	if code, body := list(bob); code != http.StatusServiceUnavailable || !strings.Contains(body, "too many callers") {
		t.Fatalf("bob while alice's state was used just now: %d %s", code, body)
	}
	advance(2 * time.Minute)
	if code, body := list(bob); code != http.StatusOK {
		t.Fatalf("bob once alice's state is idle: %d %s", code, body)
	}
	h.mu.Lock()
	_, aliceKept := h.modern[Caller{Name: "alice"}.owner()]
	h.mu.Unlock()
	if aliceKept || h.modernCount() != 1 {
		t.Fatalf("alice's idle state was not evicted (%d states)", h.modernCount())
	}
	if h.sessionCount() != 0 {
		t.Fatalf("modern requests opened %d legacy sessions", h.sessionCount())
	}
	advance(2 * time.Hour)
	h.sweepModern()
	if h.modernCount() != 0 {
		t.Fatalf("a state idle past IdleTTL was kept (%d states)", h.modernCount())
	}
}

// TestModernDiscoverNoLogging: server/discover does not advertise logging
// (served to legacy sessions only), while a legacy initialize still does,
// and the other capabilities are the same in both eras.
func TestModernDiscoverNoLogging(t *testing.T) {
	s := newTestServer(t, ProfileFull, nil, nil)
	msgs := serveLines(t, s,
		`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`+"\n"+
			`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n")
	caps := map[float64]map[string]any{}
	for _, m := range msgs {
		res, _ := m["result"].(map[string]any)
		c, _ := res["capabilities"].(map[string]any)
		caps[m["id"].(float64)] = c
	}
	modern, legacy := caps[1], caps[2]
	if modern == nil || legacy == nil {
		t.Fatalf("no capabilities in %v", msgs)
	}
	if _, ok := modern["logging"]; ok {
		t.Errorf("server/discover advertises logging: %v", modern)
	}
	if _, ok := legacy["logging"]; !ok {
		t.Errorf("initialize lost logging: %v", legacy)
	}
	delete(legacy, "logging")
	if a, b := fmt.Sprint(modern), fmt.Sprint(legacy); a != b {
		t.Errorf("the eras' other capabilities differ: discover %s, initialize %s", a, b)
	}
}
