package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/rogpeppe/go-internal/testscript"

	"wicket/cmd/wicket/internal/trade"
	"wicket/internal/project"
	"wicket/node"
	"wicket/node/command"
	"wicket/node/guardrail"
	"wicket/node/nodetest"
)

// ---- against a real node ----

// tradeProject creates a project and hands the node's keys to wicket
// through the environment (which wins over settings/secrets.env).
func tradeProject(t *testing.T, n *nodetest.Server) string {
	t.Helper()
	t.Setenv("WICKET_PROJECT", "")
	t.Setenv(project.KeyObserve, n.ObserveKey)
	t.Setenv(project.KeyControl, n.ControlKey)
	dir := filepath.Join(t.TempDir(), "proj")
	if code, _, stderr := wicket(t, "init", dir); code != 0 {
		t.Fatalf("init: %s", stderr)
	}
	return dir
}

// wicketStdin runs the CLI in-process with stdin.
func wicketStdin(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), append([]string{"wicket"}, args...), strings.NewReader(stdin), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func auditOf(t *testing.T, n *nodetest.Server) []node.AuditEntry {
	t.Helper()
	page, err := n.Client().Audit(context.Background(), node.AuditQuery{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return page.Entries
}

// TestTradeREPLFromAPipe: n sends nothing, y sends exactly the previewed
// command, end of input at the prompt sends nothing; a piped session with
// a failed line exits 1.
func TestTradeREPLFromAPipe(t *testing.T) {
	n := nodetest.NewServer(t)
	proj := tradeProject(t, n)
	args := []string{"--project", proj, "trade", "--node", n.Addr}

	code, stdout, stderr := wicketStdin(t, "submit buy 0.5 BTC-USD limit 99 --reason \"first\"\nn\n", args...)
	if code != 0 || !strings.Contains(stdout, "send? [y/N] n\nnot sent\n") {
		t.Fatalf("answer n: code %d\n%s\n%s", code, stdout, stderr)
	}
	if a := auditOf(t, n); len(a) != 0 {
		t.Fatalf("answer n sent %d commands", len(a))
	}

	code, stdout, stderr = wicketStdin(t, "submit buy 0.5 BTC-USD limit 99 --reason \"second\"\n", args...)
	if code != 0 || !strings.Contains(stdout, "not sent: no answer") {
		t.Fatalf("no answer: code %d\n%s\n%s", code, stdout, stderr)
	}
	if a := auditOf(t, n); len(a) != 0 {
		t.Fatalf("no answer sent %d commands", len(a))
	}

	code, stdout, stderr = wicketStdin(t, "# a comment\n\nsubmit buy 0.5 BTC-USD limit 99 --reason \"third\"\ny\nsnapshot\nquit\nstate halted\ny\n", args...)
	if code != 0 {
		t.Fatalf("answer y: code %d\n%s\n%s", code, stdout, stderr)
	}
	a := auditOf(t, n)
	if len(a) != 1 || a[0].Reason != "third" || a[0].Outcome.Status != node.Accepted || a[0].KeyID != node.KeyControl {
		t.Fatalf("audit after y = %+v", a)
	}
	coid := a[0].ClientOrderID
	if !strings.HasPrefix(coid, "wk-") || !strings.Contains(stdout, "client_order_id  "+coid+"\n") ||
		!strings.Contains(stdout, "accepted (ticket "+a[0].Ticket+", client_order_id "+coid+"): ") {
		t.Errorf("the sent client order id %s is not the previewed one:\n%s", coid, stdout)
	}
	if !strings.Contains(stdout, "wicket> snapshot\ntrading state: active") || !strings.Contains(stdout, coid) {
		t.Errorf("snapshot missing:\n%s", stdout)
	}
	if strings.Contains(stdout, "state halted") {
		t.Errorf("lines after quit ran:\n%s", stdout)
	}

	code, stdout, stderr = wicketStdin(t, "frob\nsubmit buy 1 BTC-USD limit 150\ny\nhelp submit\n", args...)
	if code != exitFailure || !strings.Contains(stderr, `error: unknown command "frob"; verbs: submit_order (submit), cancel_order (cancel)`) ||
		!strings.Contains(stdout, "rejected (ticket ") || !strings.Contains(stdout, "usage: submit_order SIDE QUANTITY SYMBOL TYPE [PRICE]") ||
		!strings.Contains(stderr, "2 of 3 command lines failed") {
		t.Errorf("failed lines: code %d\n%s\n%s", code, stdout, stderr)
	}
}

// TestTradeOneShot: without --yes nothing is sent; with --yes the command
// is sent and its outcome printed; a rejection exits 1.
func TestTradeOneShot(t *testing.T) {
	n := nodetest.NewServer(t)
	proj := tradeProject(t, n)
	base := []string{"--project", proj, "trade", "--node", n.Addr}

	code, stdout, stderr := wicket(t, append(base, "submit", "buy", "0.5", "BTC-USD", "limit", "99")...)
	if code != 0 || !strings.Contains(stdout, "nothing was sent: run the same command with --yes") || len(auditOf(t, n)) != 0 {
		t.Fatalf("preview: code %d\n%s\n%s", code, stdout, stderr)
	}

	code, stdout, stderr = wicket(t, append(base, "submit_order", "buy", "0.5", "BTC-USD", "limit", "99", "--json")...)
	var res struct {
		Preview struct {
			Command   map[string]string `json:"command"`
			Guardrail guardrail.Report  `json:"guardrail"`
			DryRun    *node.Verdict     `json:"dry_run"`
		} `json:"preview"`
		Sent    bool           `json:"sent"`
		Outcome *trade.Outcome `json:"outcome"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil || code != 0 {
		t.Fatalf("--json: code %d, %v\n%s\n%s", code, err, stdout, stderr)
	}
	if res.Sent || res.Outcome != nil || res.Preview.Command["price"] != "99" || !res.Preview.Guardrail.OK || !res.Preview.DryRun.WouldAccept {
		t.Errorf("--json preview = %+v", res)
	}

	code, stdout, stderr = wicket(t, append(base, "submit", "buy", "0.5", "BTC-USD", "limit", "99", "--yes", "--json", "--reason", "one shot")...)
	res.Outcome = nil
	if err := json.Unmarshal([]byte(stdout), &res); err != nil || code != 0 {
		t.Fatalf("--yes --json: code %d, %v\n%s\n%s", code, err, stdout, stderr)
	}
	a := auditOf(t, n)
	if !res.Sent || res.Outcome == nil || res.Outcome.Status != "accepted" || len(a) != 1 ||
		a[0].ClientOrderID != res.Preview.Command["client_order_id"] || a[0].Reason != "one shot" || a[0].Outcome.OrderID != res.Outcome.OrderID {
		t.Fatalf("--yes: %+v; audit %+v", res, a)
	}

	// The same client order id again: the node refuses the duplicate and
	// reports the existing order; exit 1.
	code, stdout, stderr = wicket(t, append(base, "submit", "buy", "0.5", "BTC-USD", "limit", "99", "client_order_id="+a[0].ClientOrderID, "-y")...)
	if code != exitFailure || !strings.Contains(stdout, "rejected (ticket ") || !strings.Contains(stdout, "existing order: "+a[0].Outcome.OrderID) ||
		!strings.Contains(stderr, "wicket: the node rejected submit_order: ") {
		t.Errorf("duplicate: code %d\n%s\n%s", code, stdout, stderr)
	}

	code, stdout, _ = wicket(t, append(base, "cancel", a[0].ClientOrderID, "--yes")...)
	if code != 0 || !strings.Contains(stdout, "accepted (ticket ") || !strings.Contains(stdout, "canceled") {
		t.Errorf("cancel by client order id: code %d\n%s", code, stdout)
	}

	code, stdout, stderr = wicket(t, append(base, "ticket", a[0].Ticket)...)
	if code != 0 || !strings.Contains(stdout, "accepted (ticket "+a[0].Ticket) {
		t.Errorf("ticket: code %d\n%s\n%s", code, stdout, stderr)
	}

	// Without --node, the node is wicket.toml's [node] address.
	toml := filepath.Join(proj, project.ConfigFile)
	data, err := os.ReadFile(toml)
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.Replace(data, []byte(`address = "`+project.DefaultNodeAddress+`"`), []byte(`address = "`+n.Addr+`"`), 1)
	if err := os.WriteFile(toml, data, 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = wicket(t, "--project", proj, "trade", "snapshot")
	if code != 0 || !strings.Contains(stdout, "trading state: active") {
		t.Errorf("snapshot at the configured address: code %d\n%s\n%s", code, stdout, stderr)
	}
}

// The testscript command `nodetest` (see script_test.go): a real node for
// the rest of a script.

// scriptTBKey is where Setup leaves the script's testing.TB.
type scriptTBKey struct{}

// cmdNodetest starts a node with nodetest.NewServer (default paper venue,
// marks at 100 that move only on demand), sets $NODE to its address and
// the node keys in the script's environment, and stops it when the script
// ends.
func cmdNodetest(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: nodetest")
	}
	tb, ok := ts.Value(scriptTBKey{}).(testing.TB)
	if !ok {
		ts.Fatalf("nodetest: the script has no testing.TB (Setup stores it)")
	}
	n := nodetest.NewServer(tb)
	ts.Defer(n.Close)
	ts.Setenv("NODE", n.Addr)
	ts.Setenv(project.KeyObserve, n.ObserveKey)
	ts.Setenv(project.KeyControl, n.ControlKey)
}

// ---- the REPL and the MCP write tools send identical wire commands ----

// syncBuffer is a bytes.Buffer safe for a server goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// mcpInProcess runs `wicket mcp` through run() on pipes and returns an
// initialized mcp-go client for it; cleanup closes stdin and waits for run
// to return.
func mcpInProcess(t *testing.T, args ...string) *client.Client {
	t.Helper()
	serverIn, clientOut := io.Pipe()
	clientIn, serverOut := io.Pipe()
	var stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		code := run(context.Background(), append([]string{"wicket"}, args...), serverIn, serverOut, &stderr)
		serverOut.Close()
		done <- code
	}()
	c := client.NewClient(transport.NewIO(clientIn, clientOut, nil))
	t.Cleanup(func() {
		c.Close() // closes the server's stdin: it ends at EOF
		if code := <-done; code != 0 {
			t.Errorf("wicket mcp exited %d: %s", code, stderr.String())
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatalf("start: %v", err)
	}
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = "2025-06-18"
	req.Params.ClientInfo = mcp.Implementation{Name: "trade-test", Version: "1"}
	if _, err := c.Initialize(ctx, req); err != nil {
		t.Fatalf("initialize: %v\n%s", err, stderr.String())
	}
	return c
}

// mcpWrite calls a write tool twice, as an agent does: a preview, then the
// same arguments with confirm: true and the preview's token. It returns
// the confirmed call's structured result.
func mcpWrite(t *testing.T, c *client.Client, tool string, args map[string]any) map[string]any {
	t.Helper()
	call := func(args map[string]any) map[string]any {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		req := mcp.CallToolRequest{}
		req.Params.Name = tool
		req.Params.Arguments = args
		res, err := c.CallTool(ctx, req)
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		var txt string
		for _, ct := range res.Content {
			if tc, ok := ct.(mcp.TextContent); ok {
				txt = tc.Text
				break
			}
		}
		if res.IsError {
			t.Fatalf("%s %v: tool error: %s", tool, args, txt)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(txt), &m); err != nil {
			t.Fatalf("%s: result is not JSON: %v: %s", tool, err, txt)
		}
		return m
	}
	prev := call(args)
	tok, _ := prev["preview_token"].(string)
	if prev["status"] != "preview" || tok == "" {
		t.Fatalf("%s preview = %v", tool, prev)
	}
	confirm := map[string]any{"confirm": true, "preview_token": tok}
	for k, v := range args {
		confirm[k] = v
	}
	return call(confirm)
}

// wireShape is an audit entry with the ids that differ by design (client
// order ids are minted per call; order ids belong to each surface's own
// orders) replaced by their presence.
func wireShape(t *testing.T, e node.AuditEntry) string {
	t.Helper()
	var cmd map[string]string
	if err := json.Unmarshal([]byte(e.Command.String()), &cmd); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"order_id", "client_order_id"} {
		if v, ok := cmd[k]; ok {
			if k == "client_order_id" && e.Command.Verb == command.SubmitOrder && !strings.HasPrefix(v, command.ClientOrderIDPrefix) {
				t.Errorf("minted client order id %q lacks the %s prefix", v, command.ClientOrderIDPrefix)
			}
			cmd[k] = "<" + k + ">"
		}
	}
	b, _ := json.Marshal(map[string]any{"command": cmd, "reason": e.Reason, "key_id": e.KeyID, "status": e.Outcome.Status})
	return string(b)
}

// TestTradeAndMCPSendIdenticalWireCommands drives the same input for every
// verb through three surfaces against one real node — `wicket trade VERB
// ... --yes`, the REPL fed from a pipe and answered y, and the MCP write
// tool's preview and confirm through `wicket mcp` — and compares what the
// node's audit trail recorded: the command JSON (ids aside), the reason,
// the key and the outcome.
func TestTradeAndMCPSendIdenticalWireCommands(t *testing.T) {
	n := nodetest.NewServer(t)
	proj := tradeProject(t, n)
	agent := mcpInProcess(t, "--project", proj, "mcp", "--node", n.Addr)

	const oneShot, repl, viaMCP = 0, 1, 2
	surfaces := []string{"wicket trade VERB --yes", "wicket trade (REPL)", "wicket mcp"}
	// orders[s] is the order the surface s placed in the first step.
	var orders [3]node.AuditEntry

	steps := []struct {
		line string                                               // the trade line; %[1]s is the surface's order id, %[2]s its client order id
		mcp  func(order node.AuditEntry) (string, map[string]any) // the same input as tool arguments
	}{
		{`submit buy 0.5 BTC-USD limit 99 --reason "rest below the mark"`, func(node.AuditEntry) (string, map[string]any) {
			return "submit_order", map[string]any{"venue": "paper", "symbol": "BTC-USD", "side": "buy", "type": "limit", "quantity": "0.5", "price": "99", "reason": "rest below the mark"}
		}},
		{`modify %[1]s price=98.5 --quantity 0.25`, func(o node.AuditEntry) (string, map[string]any) {
			return "modify", map[string]any{"venue": "paper", "order_id": o.Outcome.OrderID, "price": 98.5, "quantity": "0.25"}
		}},
		{`cancel %[2]s reason='done waiting'`, func(o node.AuditEntry) (string, map[string]any) {
			return "cancel_order", map[string]any{"venue": "paper", "client_order_id": o.ClientOrderID, "reason": "done waiting"}
		}},
		{`submit_order sell 0.001 ETH-USD market venue=paper time_in_force=ioc`, func(node.AuditEntry) (string, map[string]any) {
			return "submit_order", map[string]any{"venue": "paper", "symbol": "ETH-USD", "side": "sell", "type": "market", "quantity": "0.001", "time_in_force": "ioc"}
		}},
		{`submit buy 1 SPY limit 95 --time-in-force gtc`, func(node.AuditEntry) (string, map[string]any) {
			return "submit_order", map[string]any{"venue": "paper", "symbol": "SPY", "side": "buy", "type": "limit", "quantity": 1, "price": "95.00", "time_in_force": "gtc"}
		}},
		{`mass_cancel SPY buy --reason "clear the book"`, func(node.AuditEntry) (string, map[string]any) {
			return "mass_cancel", map[string]any{"venue": "paper", "symbol": "SPY", "side": "buy", "reason": "clear the book"}
		}},
		{`flatten ETH-USD`, func(node.AuditEntry) (string, map[string]any) {
			return "flatten", map[string]any{"venue": "paper", "symbol": "ETH-USD"}
		}},
		{`state reduce_only --reason "wind down"`, func(node.AuditEntry) (string, map[string]any) {
			return "set_trading_state", map[string]any{"state": "reduce_only", "reason": "wind down"}
		}},
		{`market_exit`, func(node.AuditEntry) (string, map[string]any) {
			return "market_exit", map[string]any{}
		}},
		{`set_trading_state active`, func(node.AuditEntry) (string, map[string]any) {
			return "set_trading_state", map[string]any{"state": "active"}
		}},
	}
	seen := 0
	covered := map[command.Verb]bool{}
	for i, st := range steps {
		for s := range surfaces {
			line := st.line
			if strings.Contains(line, "%[") {
				line = fmt.Sprintf(line, orders[s].Outcome.OrderID, orders[s].ClientOrderID)
			}
			switch s {
			case oneShot:
				words, err := trade.SplitWords(line)
				if err != nil {
					t.Fatal(err)
				}
				args := append([]string{"--project", proj, "trade", "--node", n.Addr}, words...)
				if code, stdout, stderr := wicket(t, append(args, "--yes")...); code != 0 {
					t.Fatalf("step %d, %s: %q exited %d\n%s\n%s", i+1, surfaces[s], line, code, stdout, stderr)
				}
			case repl:
				if code, stdout, stderr := wicketStdin(t, line+"\ny\n", "--project", proj, "trade", "--node", n.Addr); code != 0 {
					t.Fatalf("step %d, %s: %q exited %d\n%s\n%s", i+1, surfaces[s], line, code, stdout, stderr)
				}
			case viaMCP:
				tool, args := st.mcp(orders[s])
				if got := mcpWrite(t, agent, tool, args); got["status"] != "accepted" {
					t.Fatalf("step %d, %s: %s %v = %v", i+1, surfaces[s], tool, args, got)
				}
			}
		}
		audit := auditOf(t, n)
		if len(audit) != seen+len(surfaces) {
			t.Fatalf("step %d: the audit has %d entries, want %d", i+1, len(audit), seen+len(surfaces))
		}
		got := audit[seen:]
		seen = len(audit)
		if i == 0 {
			copy(orders[:], got)
		}
		covered[got[0].Command.Verb] = true
		want := wireShape(t, got[oneShot])
		for s := range surfaces {
			if shape := wireShape(t, got[s]); shape != want {
				t.Errorf("step %d (%s): %s sent\n  %s\nbut %s sent\n  %s", i+1, st.line, surfaces[s], shape, surfaces[oneShot], want)
			}
			if got[s].Outcome.Status != node.Accepted {
				t.Errorf("step %d: %s: outcome %+v", i+1, surfaces[s], got[s].Outcome)
			}
		}
	}
	for _, v := range command.Verbs() {
		if !covered[v] {
			t.Errorf("verb %s is not compared", v)
		}
	}
}

// TestTradeREPLInterruptedAtThePrompt: an interrupt (the context ending)
// while send? [y/N] waits for an answer ends the session and sends nothing.
func TestTradeREPLInterruptedAtThePrompt(t *testing.T) {
	n := nodetest.NewServer(t)
	proj := tradeProject(t, n)
	stdin, typing := io.Pipe()
	stdoutR, stdout := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"wicket", "--project", proj, "trade", "--node", n.Addr}, stdin, stdout, &stderr)
		stdout.Close()
	}()
	go typing.Write([]byte("submit buy 0.5 BTC-USD limit 99\n"))

	// Read the conversation until the prompt waits for an answer.
	var seen bytes.Buffer
	buf := make([]byte, 4096)
	for !strings.Contains(seen.String(), "send? [y/N] ") {
		k, err := stdoutR.Read(buf)
		if err != nil {
			t.Fatalf("the REPL ended before asking: %v\n%s\n%s", err, seen.String(), stderr.String())
		}
		seen.Write(buf[:k])
	}
	cancel()
	go io.Copy(io.Discard, stdoutR)
	if code := <-done; code != 0 {
		t.Errorf("exit %d after an interrupt: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("stderr = %q, want it to say interrupted", stderr.String())
	}
	if a := auditOf(t, n); len(a) != 0 {
		t.Errorf("an interrupted prompt sent %d commands", len(a))
	}
	typing.Close()
}
