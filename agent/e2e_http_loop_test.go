package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"wicket/agent"
	"wicket/node/nodetest"
	"wicket/trace"
)

// connectWith opens an initialized MCP session over HTTP with token and
// client options (an elicitation handler), collecting the session's
// notifications/message.
func (h *httpServer) connectWith(t *testing.T, token string, opts ...client.ClientOption) (*session, *logNotes) {
	t.Helper()
	tr, err := transport.NewStreamableHTTP(h.url, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr, opts...)
	t.Cleanup(func() { c.Close() })
	n := &logNotes{}
	c.OnNotification(n.add)
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	req.Params.ClientInfo = mcp.Implementation{Name: "wicket-e2e-http", Version: "1"}
	res, err := c.Initialize(ctx, req)
	if err != nil {
		t.Fatalf("initialize over HTTP: %v", err)
	}
	return &session{Client: c, init: res}, n
}

// budgetOf is one budget's entry in a session's wicket://session.
func budgetOf(t *testing.T, s *session, name string) map[string]any {
	t.Helper()
	b, _ := loopSession(t, s)["budgets"].(map[string]any)[name].(map[string]any)
	if b == nil {
		t.Fatalf("wicket://session has no budget %s: %v", name, loopSession(t, s)["budgets"])
	}
	return b
}

// waitNotes waits until notes holds want messages (or a second passes) and
// returns them.
func waitNotes(n *logNotes, want int) []string {
	deadline := time.Now().Add(2 * time.Second)
	for len(n.all()) < want && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // and nothing more arrives
	return n.all()
}

// TestHTTPBudgetsPerSession: over `wicket mcp --http`, two callers' sessions
// each get their own --max-writes 5: alice's 4th write (80 %) warns her with
// notifications/message on her session only, her 5th passes, her 6th is
// REFUSED [budget] and sends nothing, while bob's session still has all
// five and his writes pass; each session's wicket://session shows its own
// budget and the approval mode, and the refusal is traced under alice.
func TestHTTPBudgetsPerSession(t *testing.T) {
	n := nodetest.NewServer(t)
	proj := newProject(t)
	traceDir := filepath.Join(t.TempDir(), "trace")
	alice := addCaller(t, proj, "alice", agent.ProfileFull)
	bob := addCaller(t, proj, "bob", agent.ProfileFull)
	h := startHTTP(t, nodeEnv(n), proj, "--node", n.Addr, "--trace-dir", traceDir, "--max-writes", "5")
	a, aNotes := h.connectWith(t, alice)
	b, bNotes := h.connectWith(t, bob)
	for _, s := range []*session{a, b} {
		if !strings.Contains(s.init.Instructions, "write budgets (--max-writes 5)") {
			t.Errorf("instructions do not tell the budget:\n%s", s.init.Instructions)
		}
		info := loopSession(t, s)
		if info["approval"].(map[string]any)["mode"] != "none" || !strings.HasPrefix(fmt.Sprint(info["transport"]), "streamable HTTP") {
			t.Errorf("wicket://session approval %v, transport %v", info["approval"], info["transport"])
		}
		if bud := budgetOf(t, s, "max-writes"); bud["limit"] != "5" || bud["left"] != "5" || bud["used"] != "0" {
			t.Errorf("fresh budget %v", bud)
		}
	}

	for i := 1; i <= 5; i++ {
		_, res := previewThenConfirm(t, a, marketBuy)
		done := object(t, res)
		if done["status"] != "accepted" {
			t.Fatalf("alice write %d: %v", i, done)
		}
		if w, _ := done["warnings"].([]any); (i == 4) != (len(w) == 1) {
			t.Errorf("alice write %d warnings %v", i, w)
		}
		if i == 3 {
			if m := waitNotes(aNotes, 0); len(m) != 0 {
				t.Errorf("a warning before 80 %%: %v", m)
			}
		}
	}
	m := waitNotes(aNotes, 1)
	if len(m) != 1 || !strings.Contains(m[0], "max-writes is 80% used: 4 of 5 confirmed writes, 1 left") || !strings.Contains(m[0], `"level":"warning"`) {
		t.Errorf("alice's notifications/message = %v", m)
	}
	_, res := previewThenConfirm(t, a, marketBuy)
	if !res.IsError || !strings.HasPrefix(text(res), "REFUSED [budget] max-writes: 5 of 5 confirmed writes used in this session, 0 left") ||
		!strings.Contains(text(res), "Only the operator can widen") {
		t.Errorf("alice's 6th write: %q", text(res))
	}
	assertOrders(t, n, 5)
	if bud := budgetOf(t, a, "max-writes"); bud["left"] != "0" || bud["used"] != "5" {
		t.Errorf("alice's budget after: %v", bud)
	}

	// Bob's session is untouched by alice's spending.
	if bud := budgetOf(t, b, "max-writes"); bud["left"] != "5" {
		t.Errorf("bob's budget after alice spent hers: %v", bud)
	}
	if m := bNotes.all(); len(m) != 0 {
		t.Errorf("bob heard alice's warning: %v", m)
	}
	for i := 1; i <= 2; i++ {
		coid, res := previewThenConfirm(t, b, marketBuy)
		if done := object(t, res); done["status"] != "accepted" || done["client_order_id"] != coid {
			t.Fatalf("bob write %d: %v", i, done)
		}
	}
	assertOrders(t, n, 7)
	if bud := budgetOf(t, b, "max-writes"); bud["left"] != "3" || bud["used"] != "2" {
		t.Errorf("bob's budget: %v", bud)
	}
	// A second session of alice's starts with a budget of its own.
	a2, _ := h.connectWith(t, alice)
	if bud := budgetOf(t, a2, "max-writes"); bud["left"] != "5" {
		t.Errorf("alice's second session: %v", bud)
	}

	var refused []trace.Entry
	for _, e := range confirms(readTrace(t, traceDir)) {
		if e.Verdict == trace.Refused {
			refused = append(refused, e)
		}
	}
	if len(refused) != 1 || refused[0].Caller != "alice" || !strings.HasPrefix(refused[0].Error, "REFUSED [budget] max-writes") {
		t.Errorf("traced refusals: %+v", refused)
	}
}

// TestHTTPElicitPerSession: --approval elicit over HTTP asks the person of
// the session that confirms (through its own client), a decline in one
// session sends nothing and leaves its budget whole, and each session's
// wicket://session shows the mode and its own budget.
func TestHTTPElicitPerSession(t *testing.T) {
	n := nodetest.NewServer(t)
	proj := newProject(t)
	alice := addCaller(t, proj, "alice", agent.ProfileFull)
	bob := addCaller(t, proj, "bob", agent.ProfileFull)
	h := startHTTP(t, nodeEnv(n), proj, "--node", n.Addr, "--approval", "elicit", "--max-writes", "1")
	aEl := &elicitor{answer: answer(mcp.ElicitationResponseActionDecline, nil)}
	bEl := &elicitor{answer: answer(mcp.ElicitationResponseActionAccept, map[string]any{"approve": true})}
	a, _ := h.connectWith(t, alice, client.WithElicitationHandler(aEl))
	b, _ := h.connectWith(t, bob, client.WithElicitationHandler(bEl))
	for _, s := range []*session{a, b} {
		if info := loopSession(t, s); info["approval"].(map[string]any)["mode"] != "elicit" {
			t.Errorf("wicket://session approval %v", info["approval"])
		}
		if !strings.Contains(s.init.Instructions, "elicitation request") {
			t.Errorf("instructions do not say a person approves:\n%s", s.init.Instructions)
		}
	}
	_, res := previewThenConfirm(t, a, marketBuy)
	if !res.IsError || !strings.HasPrefix(text(res), "REFUSED [approval] the person declined") {
		t.Fatalf("alice declined: %q", text(res))
	}
	assertOrders(t, n, 0)
	if bud := budgetOf(t, a, "max-writes"); bud["left"] != "1" {
		t.Errorf("a declined write spent alice's budget: %v", bud)
	}
	coid, res := previewThenConfirm(t, b, marketBuy)
	if done := object(t, res); done["status"] != "accepted" || done["client_order_id"] != coid {
		t.Fatalf("bob accepted: %v", done)
	}
	assertOrders(t, n, 1)
	aEl.mu.Lock()
	bEl.mu.Lock()
	asked := fmt.Sprint(len(aEl.shown), len(bEl.shown))
	shown := strings.Join(bEl.shown, "")
	aEl.mu.Unlock()
	bEl.mu.Unlock()
	if asked != "1 1" || !strings.Contains(shown, coid) || !strings.Contains(shown, "environment paper") {
		t.Errorf("asked alice/bob %s times; bob was shown %q", asked, shown)
	}
	if bud := budgetOf(t, b, "max-writes"); bud["left"] != "0" {
		t.Errorf("bob's budget: %v", bud)
	}
	_, res = previewThenConfirm(t, b, marketBuy)
	if !res.IsError || !strings.HasPrefix(text(res), "REFUSED [budget] max-writes: 1 of 1") {
		t.Errorf("bob's second write: %q", text(res))
	}
	bEl.mu.Lock()
	if len(bEl.shown) != 1 {
		t.Errorf("a write over budget asked the person anyway (%d asks)", len(bEl.shown))
	}
	bEl.mu.Unlock()
	assertOrders(t, n, 1)
}

// TestHTTPRunLinks: over HTTP a run_backtest answer's resource_link
// resolves in its session, the trades page through to the end (each once),
// a sweep's link resolves too, and another caller's session cannot read
// the run (each session keeps its own runs).
func TestHTTPRunLinks(t *testing.T) {
	proj := seededProject(t)
	alice := addCaller(t, proj, "alice", agent.ProfileReadOnly)
	bob := addCaller(t, proj, "bob", agent.ProfileReadOnly)
	h := startHTTP(t, nil, proj)
	a, b := h.connect(t, alice), h.connect(t, bob)
	src := templateSource(t, a, "ema_long_short")
	r := a.call(t, "run_backtest", fmt.Sprintf(`{"source":%q,"series":"BTC-USD@1h","params":{"fast":2,"slow":4},"trades_limit":0}`, src))
	ans := object(t, r)
	link, ok := runLinkOf(r)
	if !ok || link.URI != ans["run_uri"] || len(ans["trades"].([]any)) != 0 {
		t.Fatalf("answer: link %+v, run_uri %v, %d trades", link, ans["run_uri"], len(ans["trades"].([]any)))
	}
	full := resourceJSON(t, a, link.URI)
	total := int(full["trades_count"].(float64))
	if total != 500 || full["equity"] == nil {
		t.Fatalf("run resource over HTTP: trades_count %v, keys %v", full["trades_count"], keys(full))
	}
	seen := map[string]bool{}
	for uri, pages := full["trades_uri"].(string), 0; uri != ""; pages++ {
		if pages > total/100+1 {
			t.Fatal("paging does not end")
		}
		page := resourceJSON(t, a, uri)
		for _, tr := range page["trades"].([]any) {
			j, _ := json.Marshal(tr)
			if seen[string(j)] {
				t.Errorf("trade listed twice: %s", j)
			}
			seen[string(j)] = true
		}
		uri, _ = page["next"].(string)
	}
	if len(seen) != total {
		t.Errorf("paged %d distinct trades of %d", len(seen), total)
	}

	sw := a.call(t, "run_sweep", fmt.Sprintf(`{"source":%q,"series":"BTC-USD@1d","grid":{"fast":[5,10],"slow":[30,50]}}`, templateSource(t, a, "sma_cross")))
	if l, ok := runLinkOf(sw); !ok || resourceJSON(t, a, l.URI)["series"] != "BTC-USD@1d" {
		t.Errorf("sweep link over HTTP: %+v", l)
	}

	req := mcp.ReadResourceRequest{}
	req.Params.URI = link.URI
	if _, err := b.ReadResource(context.Background(), req); err == nil || !strings.Contains(err.Error(), "no stored run") {
		t.Errorf("bob read alice's run: %v", err)
	}
}
