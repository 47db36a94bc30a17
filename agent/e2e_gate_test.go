package agent_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"

	"wicket/node"
	"wicket/node/nodetest"
	"wicket/trace"
)

// nodeEnv returns the environment that hands a node's keys to wicket mcp.
func nodeEnv(n *nodetest.Server) []string {
	return []string{"WICKET_NODE_OBSERVE_KEY=" + n.ObserveKey, "WICKET_NODE_CONTROL_KEY=" + n.ControlKey}
}

// TestGateEndToEnd drives the preview gate through the real binary against
// a real node, and checks every step's trace verdict.
func TestGateEndToEnd(t *testing.T) {
	n := nodetest.NewServer(t)
	proj := newProject(t)
	traceDir := filepath.Join(t.TempDir(), "trace")
	s := startMCP(t, nodeEnv(n), proj, "--node", n.Addr, "--trace-dir", traceDir)
	order := `"venue":"paper","symbol":"BTC-USD","side":"buy","type":"market","quantity":"0.5"`

	// 1. No confirm: a preview, nothing sent.
	prev := object(t, s.call(t, "submit_order", "{"+order+`,"reason":"e2e test"}`))
	tok, _ := prev["preview_token"].(string)
	cmd, _ := prev["command"].(map[string]any)
	coid, _ := cmd["client_order_id"].(string)
	if prev["status"] != "preview" || tok == "" || !strings.HasPrefix(coid, "wk-") || prev["guardrail"] == nil {
		t.Fatalf("preview = %v", prev)
	}
	if id, err := uuid.Parse(strings.TrimPrefix(coid, "wk-")); err != nil || id.Version() != 7 {
		t.Errorf("minted client_order_id %q is not wk-<uuidv7>, as the tool's description says", coid)
	}
	if dr, _ := prev["dry_run"].(map[string]any); dr == nil || dr["would_accept"] != true {
		t.Errorf("dry run = %v", prev["dry_run"])
	}
	assertOrders(t, n, 0)

	// 2. The string "true" is not confirm: another preview, nothing sent.
	again := object(t, s.call(t, "submit_order", "{"+order+`,"confirm":"true","preview_token":"`+tok+`"}`))
	if again["status"] != "preview" {
		t.Fatalf(`confirm:"true" did not preview: %v`, again)
	}
	assertOrders(t, n, 0)

	// 3. A token for submit_order cannot confirm cancel_order, and the
	// failed attempt spends it.
	tok2 := again["preview_token"].(string)
	wrong := s.call(t, "cancel_order", `{"venue":"paper","client_order_id":"`+coid+`","confirm":true,"preview_token":"`+tok2+`"}`)
	if !wrong.IsError || !strings.Contains(text(wrong), "submit_order") {
		t.Errorf("cross-tool confirm: %q", text(wrong))
	}

	// 4. A changed quantity is a mismatch naming the field.
	third := object(t, s.call(t, "submit_order", "{"+order+"}"))
	changed := s.call(t, "submit_order", `{"venue":"paper","symbol":"BTC-USD","side":"buy","type":"market","quantity":"0.7","confirm":true,"preview_token":"`+third["preview_token"].(string)+`"}`)
	if !changed.IsError || !strings.Contains(text(changed), "quantity") || !strings.Contains(text(changed), "0.7") {
		t.Errorf("mismatch: %q", text(changed))
	}
	assertOrders(t, n, 0)

	// 5. Confirm with the first token and the same arguments ("0.50" is the
	// same quantity): exactly one order, with the previewed client order id.
	done := object(t, s.call(t, "submit_order", `{"venue":"paper","symbol":"BTC-USD","side":"buy","type":"market","quantity":"0.50","confirm":true,"preview_token":"`+tok+`"}`))
	if done["status"] != "accepted" || done["client_order_id"] != coid || done["ticket"] == "" {
		t.Fatalf("confirmed write = %v", done)
	}
	audit := auditEntries(t, n)
	if len(audit) != 1 || audit[0].ClientOrderID != coid || audit[0].Reason != "e2e test" {
		t.Fatalf("node audit = %+v", audit)
	}

	// 6. The same token again is refused; nothing more reaches the node.
	replay := s.call(t, "submit_order", `{"venue":"paper","symbol":"BTC-USD","side":"buy","type":"market","quantity":"0.5","confirm":true,"preview_token":"`+tok+`"}`)
	if !replay.IsError || !strings.Contains(strings.ToLower(text(replay)), "already") {
		t.Errorf("replay: %q", text(replay))
	}
	if got := len(auditEntries(t, n)); got != 1 {
		t.Errorf("%d audit entries after replay, want 1", got)
	}

	// Every step traced with the right verdict.
	s.Close()
	entries, err := (&trace.Reader{Dir: traceDir}).Read(trace.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, fmt.Sprintf("%s:%s", e.Tool, e.Verdict))
	}
	want := []string{"submit_order:preview", "submit_order:preview", "cancel_order:refused", "submit_order:preview",
		"submit_order:refused", "submit_order:ok", "submit_order:refused"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("trace verdicts\n got %v\nwant %v", got, want)
	}
	for _, e := range entries {
		if e.Verdict == trace.OK && (e.Token != tok || e.ClientOrderID != coid || e.Ticket == "" || e.Outcome != "accepted") {
			t.Errorf("confirmed entry lacks its chain: %+v", e)
		}
		if !e.Write {
			t.Errorf("write tool traced with write=false: %+v", e)
		}
	}
}

// TestNodeToolsWithoutNodeOrKeys: no --node, or missing keys, give node
// tools one clean error while the other tools keep working.
func TestNodeToolsWithoutNodeOrKeys(t *testing.T) {
	proj := newProject(t)
	s := startMCP(t, nil, "", "--profile", "full")
	res := s.call(t, "node_snapshot", `{}`)
	if !res.IsError || !strings.Contains(text(res), "wicket node serve") {
		t.Errorf("no node: %q", text(res))
	}
	if r := s.call(t, "list_indicators", `{}`); r.IsError {
		t.Errorf("list_indicators failed without a node: %s", text(r))
	}
	// With a node but no keys anywhere (the project's secrets.env emptied).
	n := nodetest.NewServer(t)
	writeFile(t, filepath.Join(proj, "settings", "secrets.env"), "# no keys\n")
	s2 := startMCP(t, nil, proj, "--node", n.Addr)
	for tool, args := range map[string]string{
		"node_snapshot": `{"venue":"paper"}`,
		"submit_order":  `{"venue":"paper","symbol":"BTC-USD","side":"buy","type":"market","quantity":"1"}`,
	} {
		r := s2.call(t, tool, args)
		if !r.IsError || !strings.Contains(text(r), "WICKET_NODE_OBSERVE_KEY") || !strings.Contains(text(r), "secrets.env") {
			t.Errorf("%s without keys: %q", tool, text(r))
		}
	}
	if r := s2.call(t, "list_templates", `{}`); r.IsError {
		t.Errorf("list_templates failed without keys: %s", text(r))
	}
}

func assertOrders(t *testing.T, n *nodetest.Server, want int) {
	t.Helper()
	if got := len(auditEntries(t, n)); got != want {
		t.Fatalf("node took %d commands, want %d", got, want)
	}
}

func auditEntries(t *testing.T, n *nodetest.Server) []node.AuditEntry {
	t.Helper()
	page, err := n.Client().Audit(context.Background(), node.AuditQuery{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return page.Entries
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
