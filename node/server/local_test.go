package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/binance/binancefake"
	"wicket/node/command"
	"wicket/node/journal"
	"wicket/node/nodetest"
	"wicket/node/server"
	"wicket/node/venuerig"
)

// conn is what the deployment runner asks of its node: node.Conn with the
// audit trail and health.
type conn interface {
	node.Conn
	Audit(ctx context.Context, q node.AuditQuery) (node.AuditPage, error)
	Health(ctx context.Context) (node.Health, error)
}

// call is one answer of a conn, as JSON: what it returned, or its error.
func call(v any, err error) string {
	if err != nil {
		if ne, ok := err.(*node.Error); ok {
			b, _ := json.Marshal(ne)
			return "error " + string(b)
		}
		return "error (not a node error) " + err.Error()
	}
	b, merr := json.Marshal(v)
	if merr != nil {
		return "unencodable " + merr.Error()
	}
	return string(b)
}

// localCases run against the HTTP client and the in-process Local alike;
// each returns the answers it got, in order.
var localCases = []struct {
	name string
	run  func(ctx context.Context, c conn) []string
	want []string // in the answers, so the case cannot pass on two equal failures
}{
	{"market order: submit, ticket, snapshot, audit", func(ctx context.Context, c conn) []string {
		cmd := order("paper", "BTC-USD", command.Buy, command.Market, "2", "")
		env := command.NewEnvelope(cmd, "deployment dep-1 (flip.star) to target 0.5")
		v, err := c.DryRun(ctx, env)
		out := []string{call(v, err)}
		id, err := c.Submit(ctx, env)
		out = append(out, call(id, err))
		o, err := c.Ticket(ctx, id, 2*time.Second)
		out = append(out, call(o, err))
		snap, err := c.Snapshot(ctx, "paper", 20)
		out = append(out, call(snap, err))
		page, err := c.Audit(ctx, node.AuditQuery{ClientOrderID: o.ClientOrderID, Limit: 10})
		return append(out, call(page, err))
	}, []string{`"status":"accepted"`, `"kind":"order_filled"`, `"key_id":"control"`, `"reason":"deployment dep-1 (flip.star) to target 0.5"`}},
	{"guardrail refuses an order over max_order_notional", func(ctx context.Context, c conn) []string {
		env := command.NewEnvelope(order("paper", "BTC-USD", command.Buy, command.Market, "300", ""), "too big")
		v, err := c.DryRun(ctx, env)
		out := []string{call(v, err)}
		id, err := c.Submit(ctx, env)
		out = append(out, call(id, err))
		o, err := c.Ticket(ctx, id, 2*time.Second)
		return append(out, call(o, err))
	}, []string{`"would_accept":false`, `"status":"rejected","verb":"submit_order"`, "max_order_notional"}},
	{"duplicate client order id", func(ctx context.Context, c conn) []string {
		cmd := order("paper", "ETH-USD", command.Sell, command.Limit, "1", "105")
		cmd.ClientOrderID = "dep-1-same"
		var out []string
		for range 2 {
			id, err := c.Submit(ctx, command.NewEnvelope(cmd, ""))
			out = append(out, call(id, err))
			o, err := c.Ticket(ctx, id, 2*time.Second)
			out = append(out, call(o, err))
		}
		v, err := c.DryRun(ctx, command.NewEnvelope(cmd, ""))
		return append(out, call(v, err))
	}, []string{`"code":"duplicate_client_order_id"`, `"existing_order"`}},
	{"resting limit, then cancel", func(ctx context.Context, c conn) []string {
		id, err := c.Submit(ctx, command.NewEnvelope(order("paper", "BTC-USD", command.Buy, command.Limit, "1", "90"), ""))
		out := []string{call(id, err)}
		o, err := c.Ticket(ctx, id, 2*time.Second)
		out = append(out, call(o, err))
		id, err = c.Submit(ctx, command.NewEnvelope(command.Command{Verb: command.CancelOrder, Venue: "paper", ClientOrderID: o.ClientOrderID}, "changed my mind"))
		out = append(out, call(id, err))
		o, err = c.Ticket(ctx, id, 2*time.Second)
		out = append(out, call(o, err))
		snap, err := c.Snapshot(ctx, "", -1)
		out = append(out, call(snap, err))
		page, err := c.Audit(ctx, node.AuditQuery{})
		return append(out, call(page, err))
	}, []string{`"status":"open"`, `"status":"canceled"`, `"reason":"changed my mind"`}},
	{"bad input", func(ctx context.Context, c conn) []string {
		noSymbol := command.Command{Verb: command.SubmitOrder, Venue: "paper", Side: command.Buy, Type: command.Market, Quantity: testkit.D("1")}
		id, err := c.Submit(ctx, command.NewEnvelope(noSymbol, ""))
		out := []string{call(id, err)}
		v, err := c.DryRun(ctx, command.NewEnvelope(noSymbol, ""))
		out = append(out, call(v, err))
		long := order("paper", "BTC-USD", command.Buy, command.Market, "1", "")
		id, err = c.Submit(ctx, command.Envelope{Command: long, Reason: strings.Repeat("x", 70<<10)})
		out = append(out, call(id, err))
		snap, err := c.Snapshot(ctx, "nowhere", 0)
		out = append(out, call(snap, err))
		o, err := c.Ticket(ctx, "tk-never", time.Second)
		return append(out, call(o, err))
	}, []string{`"code":"bad_command"`, `"code":"too_large"`, `"code":"unknown_venue"`, `"code":"unknown_ticket"`}},
	{"health", func(ctx context.Context, c conn) []string {
		h, err := c.Health(ctx)
		h.Journal = "(each node's own)"
		return []string{call(h, err)}
	}, []string{`"status":"ok"`}},
}

// twinNodes are two nodes alike in everything (configuration, clock, ids,
// marks); one is driven over HTTP, the other in process.
func twinNodes(t *testing.T) (httpNode, localNode *nodetest.Server, clk *testkit.Clock) {
	clk = testkit.NewClock(time.Date(2026, 3, 2, 9, 30, 0, 0, time.UTC))
	mk := func() *nodetest.Server {
		return nodetest.NewServer(t, nodetest.WithClock(clk.Now), nodetest.WithIDs(counter()))
	}
	return mk(), mk(), clk
}

func counter() func() string {
	var mu sync.Mutex
	n := 0
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		n++
		return fmt.Sprintf("%016d", n)
	}
}

// TestLocalAnswersAsHTTP runs one table of cases against the node's HTTP
// client and its in-process Local, each on its own twin node, and wants
// the same answers, the same audit trail (under the control key) and the
// same journal.
func TestLocalAnswersAsHTTP(t *testing.T) {
	for _, tc := range localCases {
		t.Run(tc.name, func(t *testing.T) {
			hn, ln, clk := twinNodes(t)
			ctx := context.Background()
			viaHTTP := tc.run(ctx, hn.Client(node.WithClock(clk.Now)))
			local := ln.Local(node.KeyControl)
			inProcess := tc.run(ctx, local)
			if len(viaHTTP) != len(inProcess) {
				t.Fatalf("%d answers over HTTP, %d in process", len(viaHTTP), len(inProcess))
			}
			for i := range viaHTTP {
				if viaHTTP[i] != inProcess[i] {
					t.Errorf("answer %d differs:\nHTTP:       %s\nin process: %s", i, viaHTTP[i], inProcess[i])
				}
			}
			all := strings.Join(inProcess, "\n")
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("no %s in the answers:\n%s", w, all)
				}
			}
			hAudit, lAudit := call(hn.Client(node.WithClock(clk.Now)).Audit(ctx, node.AuditQuery{Limit: 1000})), call(local.Audit(ctx, node.AuditQuery{Limit: 1000}))
			if hAudit != lAudit {
				t.Errorf("audit trails differ:\nHTTP:       %s\nin process: %s", hAudit, lAudit)
			}
			page, _ := local.Audit(ctx, node.AuditQuery{Limit: 1000})
			for _, e := range page.Entries {
				if e.Command.Verb != "" && e.KeyID != node.KeyControl {
					t.Errorf("in-process audit entry %d names key %q, want %q", e.Seq, e.KeyID, node.KeyControl)
				}
			}
			hn.Close()
			ln.Close()
			if h, l := journalEvents(t, hn.Journal), journalEvents(t, ln.Journal); h != l {
				t.Errorf("journals differ:\nHTTP:       %s\nin process: %s", h, l)
			}
		})
	}
}

// journalEvents is every event a closed node's journal holds, as JSON.
func journalEvents(t *testing.T, path string) string {
	t.Helper()
	j, err := journal.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	var evs []node.Event
	if err := j.Replay(func(ev node.Event) error { evs = append(evs, ev); return nil }); err != nil {
		t.Fatal(err)
	}
	return call(evs, nil)
}

// TestLocalKeyScope: a Local bound to the observe key reads and dry-runs
// but cannot write, as the observe key cannot over HTTP; a key id the
// node does not hold is refused at wiring.
func TestLocalKeyScope(t *testing.T) {
	srv := nodetest.NewServer(t)
	ctx := context.Background()
	env := command.NewEnvelope(order("paper", "BTC-USD", command.Buy, command.Market, "1", ""), "")
	observeOnly, err := node.NewClient(srv.Addr, srv.ObserveKey, "")
	if err != nil {
		t.Fatal(err)
	}
	// Over HTTP: a write signed with the observe key is refused by the node.
	body, _ := json.Marshal(env)
	req, _ := http.NewRequest(http.MethodPost, "http://"+srv.Addr+"/v1/commands", bytes.NewReader(body))
	ts, nonce := node.Timestamp(time.Now()), node.NewNonce()
	req.Header.Set(node.HeaderKey, node.KeyObserve)
	req.Header.Set(node.HeaderTimestamp, ts)
	req.Header.Set(node.HeaderNonce, nonce)
	req.Header.Set(node.HeaderSignature, node.Sign(srv.ObserveKey, http.MethodPost, "/v1/commands", ts, nonce, body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var eb struct{ Error *node.Error }
	json.NewDecoder(resp.Body).Decode(&eb) //nolint:errcheck // checked below
	resp.Body.Close()
	if eb.Error == nil {
		t.Fatalf("HTTP write with the observe key: status %d, no error", resp.StatusCode)
	}

	obs := srv.Local(node.KeyObserve)
	_, err = obs.Submit(ctx, env)
	if got, want := call(nil, err), call(nil, eb.Error); got != want {
		t.Fatalf("observe-bound Submit: %s, want as over HTTP: %s", got, want)
	}
	if v, err := obs.DryRun(ctx, env); err != nil || !v.WouldAccept {
		t.Fatalf("observe-bound DryRun: %+v, %v", v, err)
	}
	if _, err := obs.Snapshot(ctx, "", 0); err != nil {
		t.Fatalf("observe-bound Snapshot: %v", err)
	}
	if page, err := observeOnly.Audit(ctx, node.AuditQuery{}); err != nil || len(page.Entries) != 0 {
		t.Fatalf("a refused write reached the audit trail: %+v, %v", page.Entries, err)
	}

	n, err := server.New(server.Config{Project: srv.Config, JournalPath: filepath.Join(t.TempDir(), "node.db"),
		ObserveKey: testkit.Secret(t, 32), ControlKey: testkit.Secret(t, 32)})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	for _, id := range []string{"", node.KeyNode, node.KeyOperator, "root"} {
		if _, err := n.Local(id); err == nil {
			t.Errorf("Local(%q) was allowed; only the node's own key ids may be bound", id)
		}
	}
	if _, err := n.Local(node.KeyControl); err != nil {
		t.Errorf("Local(control): %v", err)
	}
}

// TestLocalAfterClose: a Local does not outlive its node.
func TestLocalAfterClose(t *testing.T) {
	srv := nodetest.NewServer(t)
	l := srv.Local(node.KeyControl)
	srv.Close()
	_, err := l.Submit(context.Background(), command.NewEnvelope(order("paper", "BTC-USD", command.Buy, command.Market, "1", ""), ""))
	if ne, ok := err.(*node.Error); !ok || ne.Kind != node.KindUnavailable {
		t.Fatalf("Submit after Close: %v, want unavailable", err)
	}
	if _, err := l.Snapshot(context.Background(), "", 0); err == nil {
		t.Fatal("Snapshot after Close answered")
	}
}

// localSend submits cmd through l and reads its ticket (up to 5 s).
func localSend(t *testing.T, l *server.Local, cmd command.Command) node.Outcome {
	t.Helper()
	ctx := context.Background()
	id, err := l.Submit(ctx, command.NewEnvelope(cmd, "in process"))
	if err != nil {
		t.Fatalf("submit %s: %v", cmd, err)
	}
	out, err := l.Ticket(ctx, id, 5*time.Second)
	if err != nil {
		t.Fatalf("ticket %s: %v", id, err)
	}
	return out
}

// TestLocalOnRealVenue: on a real venue (the Binance fake) an in-process
// order meets the node's arming rule (refused while the venue is
// disarmed, as over HTTP, nothing sent), goes to the venue once armed,
// and one whose answer is lost is never resent and settles by
// reconciliation (the node's pending rule).
func TestLocalOnRealVenue(t *testing.T) {
	vn := startVenueNode(t, func(f *binancefake.Fake) venuerig.Venue { return binanceVenue("bn", "testnet", true, f) })
	l := vn.srv.Local(node.KeyControl)

	disarmed := localSend(t, l, order("bn", "BTCUSDT", command.Buy, command.Market, "0.01", ""))
	overHTTP := sendAny(t, vn.c, order("bn", "BTCUSDT", command.Buy, command.Market, "0.01", ""))
	if disarmed.Status != node.Rejected || disarmed.Code == "" || disarmed.Code != overHTTP.Code || disarmed.Reason != overHTTP.Reason {
		t.Fatalf("in process while disarmed: %s %s (%s); over HTTP: %s %s (%s)", disarmed.Status, disarmed.Code, disarmed.Reason, overHTTP.Status, overHTTP.Code, overHTTP.Reason)
	}
	if n := len(vn.fake.Orders()); n != 0 {
		t.Fatalf("%d orders reached the venue while it was disarmed", n)
	}

	vn.arm(t, "bn", time.Hour)
	buy := localSend(t, l, order("bn", "BTCUSDT", command.Buy, command.Market, "0.01", ""))
	if buy.Status != node.Accepted || buy.Order == nil || buy.Order.VenueOrderID == "" {
		t.Fatalf("in-process market buy on the armed venue: %+v", buy)
	}

	vn.fake.DropResponses("/api/v3/order", 1)
	lost := localSend(t, l, order("bn", "BTCUSDT", command.Buy, command.Limit, "0.01", "59000"))
	// The node resolves its ticket pending; a read of the ticket after the
	// reconciliation has found the order answers it settled.
	out := lost
	waitFor(t, "ticket "+lost.Ticket+" settled", func() bool {
		var err error
		if out, err = l.Ticket(context.Background(), lost.Ticket, 0); err != nil {
			t.Fatalf("ticket: %v", err)
		}
		return out.Status != node.Pending
	})
	if out.Status != node.Accepted || !strings.Contains(out.Detail, "settled by reconciliation") {
		t.Errorf("the lost order's ticket settled as %+v", out)
	}
	if n := vn.fake.Requests("POST /api/v3/order"); n != 2 {
		t.Errorf("%d new orders reached the venue, want 2 (the market buy, and the limit whose answer was lost, once)", n)
	}
	page, err := l.Audit(context.Background(), node.AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range page.Entries {
		if e.Command.Verb == command.SubmitOrder && e.KeyID != node.KeyControl {
			t.Errorf("audit entry %d (%s) names key %q", e.Seq, e.ClientOrderID, e.KeyID)
		}
	}
}
