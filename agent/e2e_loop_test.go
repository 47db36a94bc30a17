package agent_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/shopspring/decimal"

	"wicket/internal/testkit"
	"wicket/node/nodetest"
	"wicket/trace"
)

// elicitor answers elicitation requests as a test tells it to and keeps
// what it was shown.
type elicitor struct {
	mu     sync.Mutex
	answer func() (*mcp.ElicitationResult, error)
	shown  []string
}

func (e *elicitor) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	e.mu.Lock()
	e.shown = append(e.shown, req.Params.Message)
	answer := e.answer
	e.mu.Unlock()
	return answer()
}

func answer(action mcp.ElicitationResponseAction, content any) func() (*mcp.ElicitationResult, error) {
	return func() (*mcp.ElicitationResult, error) {
		return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: action, Content: content}}, nil
	}
}

// startMCPWith starts wicket mcp with client options (an elicitation
// handler) and collects the notifications it sends.
func startMCPWith(t *testing.T, env []string, proj string, opts []client.ClientOption, args ...string) (*session, *logNotes) {
	t.Helper()
	argv := append([]string{"--project", proj, "mcp"}, args...)
	tr := transport.NewStdioWithOptions(wicketBin, append(append([]string{}, cleanEnv...), env...), argv,
		transport.WithCommandStderrWriter(testWriter{t}))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := tr.Start(context.Background()); err != nil { // the child lives as long as this context
		t.Fatal(err)
	}
	c := client.NewClient(tr, opts...)
	t.Cleanup(func() { c.Close() })
	n := &logNotes{}
	c.OnNotification(n.add)
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = "2025-06-18"
	req.Params.ClientInfo = mcp.Implementation{Name: "wicket-e2e", Version: "1"}
	res, err := c.Initialize(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	return &session{Client: c, init: res}, n
}

// logNotes collects the text of a client's notifications/message.
type logNotes struct {
	mu   sync.Mutex
	msgs []string
}

func (n *logNotes) add(m mcp.JSONRPCNotification) {
	if m.Method != "notifications/message" {
		return
	}
	b, _ := json.Marshal(m.Params.AdditionalFields)
	n.mu.Lock()
	n.msgs = append(n.msgs, string(b))
	n.mu.Unlock()
}

func (n *logNotes) all() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.msgs...)
}

const marketBuy = `"venue":"paper","symbol":"BTC-USD","side":"buy","type":"market","quantity":"0.01"`

// previewThenConfirm previews cmd and confirms it with the token; it
// returns the previewed client order id and the confirm's result.
func previewThenConfirm(t *testing.T, s *session, cmd string) (string, *mcp.CallToolResult) {
	t.Helper()
	prev := object(t, s.call(t, "submit_order", "{"+cmd+"}"))
	tok, _ := prev["preview_token"].(string)
	coid, _ := prev["client_order_id"].(string)
	if tok == "" || coid == "" {
		t.Fatalf("preview = %v", prev)
	}
	return coid, s.call(t, "submit_order", "{"+cmd+`,"confirm":true,"preview_token":"`+tok+`"}`)
}

func readTrace(t *testing.T, dir string) []trace.Entry {
	t.Helper()
	entries, err := (&trace.Reader{Dir: dir}).Read(trace.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

// confirms are the trace entries of confirming calls (a token and not a
// preview).
func confirms(entries []trace.Entry) []trace.Entry {
	var out []trace.Entry
	for _, e := range entries {
		if e.Verdict != trace.Preview && e.Token != "" {
			out = append(out, e)
		}
	}
	return out
}

// TestElicitApprovalEndToEnd: with --approval elicit, only an explicit
// accept sends (exactly one order, the previewed client order id); decline,
// cancel and timeout send nothing; every outcome is traced.
func TestElicitApprovalEndToEnd(t *testing.T) {
	n := nodetest.NewServer(t)
	proj := newProject(t)
	traceDir := filepath.Join(t.TempDir(), "trace")
	el := &elicitor{}
	s, _ := startMCPWith(t, nodeEnv(n), proj, []client.ClientOption{client.WithElicitationHandler(el)},
		"--node", n.Addr, "--trace-dir", traceDir, "--approval", "elicit", "--approval-timeout", "1500ms")

	// Decline, cancel, accept-without-yes and timeout: refused, nothing sent.
	for _, tc := range []struct {
		name   string
		answer func() (*mcp.ElicitationResult, error)
		want   string
	}{
		{"decline", answer(mcp.ElicitationResponseActionDecline, nil), "declined"},
		{"cancel", answer(mcp.ElicitationResponseActionCancel, nil), "cancelled"},
		{"accept without yes", answer(mcp.ElicitationResponseActionAccept, map[string]any{"approve": false}), "declined"},
		{"timeout", func() (*mcp.ElicitationResult, error) {
			time.Sleep(3 * time.Second)
			return answer(mcp.ElicitationResponseActionAccept, map[string]any{"approve": true})()
		}, "nobody answered"},
	} {
		el.mu.Lock()
		el.answer = tc.answer
		el.mu.Unlock()
		_, res := previewThenConfirm(t, s, marketBuy)
		if !res.IsError || !strings.HasPrefix(text(res), "REFUSED [approval] ") || !strings.Contains(text(res), tc.want) || !strings.Contains(text(res), "Nothing was sent") {
			t.Errorf("%s: %q", tc.name, text(res))
		}
		assertOrders(t, n, 0)
	}
	time.Sleep(1600 * time.Millisecond) // let the late answer of the timeout case arrive and be dropped
	assertOrders(t, n, 0)

	// Accept: exactly one order, with the previewed client order id.
	el.mu.Lock()
	el.answer = answer(mcp.ElicitationResponseActionAccept, map[string]any{"approve": true})
	el.mu.Unlock()
	coid, res := previewThenConfirm(t, s, marketBuy)
	done := object(t, res)
	if done["status"] != "accepted" || done["client_order_id"] != coid {
		t.Fatalf("accepted write = %v", done)
	}
	if a, _ := done["approval"].(map[string]any); a["outcome"] != "accepted" || a["mode"] != "elicit" {
		t.Errorf("approval in the result = %v", done["approval"])
	}
	audit := auditEntries(t, n)
	if len(audit) != 1 || audit[0].ClientOrderID != coid {
		t.Fatalf("node audit = %+v", audit)
	}

	// What the person was shown, in plain words.
	el.mu.Lock()
	shown := el.shown[len(el.shown)-1]
	el.mu.Unlock()
	for _, w := range []string{"submit_order: buy 0.01 BTC-USD at market", coid, "guardrail: all checks passed",
		"dry run: the node would accept it", "environment paper", "node trading state active", "decide within"} {
		if !strings.Contains(shown, w) {
			t.Errorf("elicitation message lacks %q:\n%s", w, shown)
		}
	}

	// The session resource shows the mode.
	if info := loopSession(t, s); info["approval"].(map[string]any)["mode"] != "elicit" {
		t.Errorf("wicket://session approval = %v", info["approval"])
	}
	if !strings.Contains(s.init.Instructions, "elicitation request") {
		t.Errorf("instructions do not say a person approves:\n%s", s.init.Instructions)
	}

	s.Close()
	var got []string
	for _, e := range confirms(readTrace(t, traceDir)) {
		got = append(got, e.Verdict.String()+":"+e.Approval)
	}
	want := "refused:declined refused:declined refused:declined refused:timeout ok:accepted"
	if strings.Join(got, " ") != want {
		t.Errorf("traced confirms %v, want %s", got, want)
	}
}

// TestElicitWithoutCapability: a client that did not declare elicitation
// is refused with the reason, nothing is sent, and the trace says
// unsupported.
func TestElicitWithoutCapability(t *testing.T) {
	n := nodetest.NewServer(t)
	proj := newProject(t)
	traceDir := filepath.Join(t.TempDir(), "trace")
	s := startMCP(t, nodeEnv(n), proj, "--node", n.Addr, "--trace-dir", traceDir, "--approval", "elicit")
	_, res := previewThenConfirm(t, s, marketBuy)
	if !res.IsError || !strings.HasPrefix(text(res), "REFUSED [approval] ") || !strings.Contains(text(res), "did not declare the elicitation capability") {
		t.Errorf("no capability: %q", text(res))
	}
	assertOrders(t, n, 0)
	s.Close()
	c := confirms(readTrace(t, traceDir))
	if len(c) != 1 || c[0].Verdict != trace.Refused || c[0].Approval != "unsupported" {
		t.Errorf("trace = %+v", c)
	}
}

func loopSession(t *testing.T, s *session) map[string]any {
	t.Helper()
	req := mcp.ReadResourceRequest{}
	req.Params.URI = "wicket://session"
	res, err := s.ReadResource(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(res.Contents[0].(mcp.TextResourceContents).Text), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestBudgetsEndToEnd: --max-writes 3 and --max-notional at the preview's
// mark: N-1 and N pass, N+1 is refused saying what is left, previews stay
// free, the 80 % warning arrives as notifications/message, wicket://session
// shows what is left, and the refusal is traced.
func TestBudgetsEndToEnd(t *testing.T) {
	n := nodetest.NewServer(t)
	proj := newProject(t)
	traceDir := filepath.Join(t.TempDir(), "trace")
	s, msgs := startMCPWith(t, nodeEnv(n), proj, nil, "--node", n.Addr, "--trace-dir", traceDir, "--max-writes", "3")
	if !strings.Contains(s.init.Instructions, "write budgets (--max-writes 3)") || !strings.Contains(s.init.Instructions, "REFUSED [budget]") {
		t.Errorf("instructions do not tell the budgets:\n%s", s.init.Instructions)
	}
	if info := loopSession(t, s); info["budgets"].(map[string]any)["max-writes"].(map[string]any)["left"] != "3" {
		t.Errorf("budgets = %v", info["budgets"])
	}
	// Previews are free.
	for i := 0; i < 5; i++ {
		object(t, s.call(t, "submit_order", "{"+marketBuy+"}"))
	}
	for i := 1; i <= 3; i++ {
		_, res := previewThenConfirm(t, s, marketBuy)
		done := object(t, res)
		left := done["budget"].(map[string]any)["max-writes"].(map[string]any)["left"]
		if done["status"] != "accepted" || left != string(rune('0'+3-i)) {
			t.Fatalf("write %d: %v", i, done)
		}
		if w, _ := done["warnings"].([]any); (i == 3) != (len(w) == 1) {
			t.Errorf("write %d warnings %v", i, w)
		}
	}
	_, res := previewThenConfirm(t, s, marketBuy)
	if !res.IsError || !strings.HasPrefix(text(res), "REFUSED [budget] max-writes: 3 of 3") || !strings.Contains(text(res), "0 left") ||
		!strings.Contains(text(res), "Only the operator can widen") {
		t.Errorf("4th write: %q", text(res))
	}
	assertOrders(t, n, 3)
	if info := loopSession(t, s); info["budgets"].(map[string]any)["max-writes"].(map[string]any)["left"] != "0" {
		t.Errorf("budgets after = %v", info["budgets"])
	}
	deadline := time.Now().Add(2 * time.Second)
	for len(msgs.all()) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if m := msgs.all(); len(m) != 1 || !strings.Contains(m[0], "max-writes is 100% used: 3 of 3 confirmed writes, 0 left") || !strings.Contains(m[0], `"level":"warning"`) {
		t.Errorf("notifications/message = %v", m)
	}
	s.Close()
	c := confirms(readTrace(t, traceDir))
	if len(c) != 4 || c[3].Verdict != trace.Refused || !strings.HasPrefix(c[3].Error, "REFUSED [budget]") {
		t.Errorf("trace = %+v", c)
	}
}

// TestNotionalBudgetEndToEnd: the notional budget counts a market order at
// the mark its preview read, exactly.
func TestNotionalBudgetEndToEnd(t *testing.T) {
	n := nodetest.NewServer(t)
	proj := newProject(t)
	s := startMCP(t, nodeEnv(n), proj, "--node", n.Addr)
	mark := paperMark(t, s, "BTC-USD")
	// Allow exactly two 0.01 BTC orders at this mark.
	s.Close()
	limit := mark.Mul(testkit.D("0.02"))
	s = startMCP(t, nodeEnv(n), proj, "--node", n.Addr, "--max-notional", limit.String())
	prev := object(t, s.call(t, "submit_order", "{"+marketBuy+"}"))
	if note, _ := prev["note"].(string); !strings.Contains(note, "session budget: max-notional "+limit.String()+" of "+limit.String()+
		" left; if confirmed, it counts as one write and "+mark.Mul(testkit.D("0.01")).String()+" of notional") {
		t.Errorf("preview note: %s", note)
	}
	for i := 0; i < 2; i++ {
		_, res := previewThenConfirm(t, s, marketBuy)
		if done := object(t, res); done["status"] != "accepted" {
			t.Fatalf("write %d: %v", i+1, done)
		}
	}
	_, res := previewThenConfirm(t, s, marketBuy)
	if !res.IsError || !strings.Contains(text(res), "REFUSED [budget] max-notional: this order's notional "+mark.Mul(testkit.D("0.01")).String()+" exceeds what is left") ||
		!strings.Contains(text(res), ", 0 left") {
		t.Errorf("3rd: %q", text(res))
	}
	// A cancel-type write (zero notional) still fits.
	if r := s.call(t, "mass_cancel", `{"venue":"paper"}`); r.IsError {
		t.Errorf("mass_cancel preview: %s", text(r))
	}
}

// paperMark reads a symbol's mark on the paper venue through node_snapshot.
func paperMark(t *testing.T, s *session, symbol string) decimal.Decimal {
	t.Helper()
	snap := object(t, s.call(t, "node_snapshot", `{"venue":"paper"}`))
	b, _ := json.Marshal(snap)
	var v struct {
		Venues []struct {
			Name  string            `json:"name"`
			Marks map[string]string `json:"marks"`
		} `json:"venues"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	for _, ven := range v.Venues {
		if m, ok := ven.Marks[symbol]; ok {
			return testkit.D(m)
		}
	}
	t.Fatalf("no mark for %s in %s", symbol, b)
	return decimal.Zero
}
