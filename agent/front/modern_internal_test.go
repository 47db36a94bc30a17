package front

import (
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
	alice, _ := cs.Add("alice", agent.ProfileOffline, nil, now)
	bob, _ := cs.Add("bob", agent.ProfileOffline, nil, now)
	h, err := NewHTTP(agent.Options{Profile: agent.ProfileOffline, NewID: uuid.NewString, Now: clock},
		agent.Backends{Config: project.Defaults()}, HTTPOptions{Addr: "127.0.0.1:0", Callers: cs, MaxSessions: 1, IdleTTL: time.Hour})
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
