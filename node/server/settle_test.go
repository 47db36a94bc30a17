package server_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/binance/binancefake"
	"wicket/node/command"
	"wicket/node/nodetest"
	"wicket/node/venuerig"
)

// waitSettled reads a ticket until it is no longer pending.
func waitSettled(t *testing.T, c *node.Client, ticket string) node.Outcome {
	t.Helper()
	var out node.Outcome
	waitFor(t, "ticket "+ticket+" settled", func() bool {
		var err error
		if out, err = c.Ticket(context.Background(), ticket, 0); err != nil {
			t.Fatalf("ticket %s: %v", ticket, err)
		}
		return out.Status != node.Pending
	})
	return out
}

// checkSettledCancel: the ticket of a cancel whose answer was lost settles
// accepted with the order canceled, in its audit entry too, and stays so
// across a restart.
func checkSettledCancel(t *testing.T, srv *nodetest.Server, c *node.Client, ticket string) {
	t.Helper()
	out := waitSettled(t, c, ticket)
	if out.Status != node.Accepted || out.Order == nil || out.Order.Status != node.OrderCanceled || !strings.Contains(out.Detail, "settled by reconciliation") {
		t.Errorf("the lost cancel's ticket settled as %+v", out)
	}
	page, err := c.Audit(context.Background(), node.AuditQuery{ClientOrderID: out.ClientOrderID})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range page.Entries {
		if e.Ticket == ticket {
			found = true
			if e.Outcome.Status != node.Accepted || e.Command.Verb != command.CancelOrder {
				t.Errorf("the cancel's audit entry: %+v", e)
			}
		}
	}
	if !found {
		t.Errorf("no audit entry for ticket %s in %+v", ticket, page.Entries)
	}
	srv.Restart(t)
	if again, err := srv.Client().Ticket(context.Background(), ticket, 0); err != nil || again.Status != node.Accepted || again.Order.Status != node.OrderCanceled {
		t.Errorf("the settled ticket after a restart: %+v, %v", again, err)
	}
}

// TestLostCancelSettlesBinance: Binance cancels the order but the answer
// is lost; the ticket answers pending, and the next reconciliation settles
// it canceled (the stream told the node of the cancel meanwhile).
func TestLostCancelSettlesBinance(t *testing.T) {
	vn := startVenueNode(t, func(f *binancefake.Fake) venuerig.Venue { return binanceVenue("bn", "testnet", true, f) })
	vn.arm(t, "bn", time.Hour)
	lim := accepted(t, vn.c, order("bn", "BTCUSDT", command.Buy, command.Limit, "0.01", "59000"))
	vn.fake.DropResponses("/api/v3/order", 1)
	out := sendAny(t, vn.c, command.Command{Verb: command.CancelOrder, Venue: "bn", OrderID: lim.OrderID})
	if out.Status != node.Pending {
		t.Fatalf("a cancel whose answer was lost: %+v", out)
	}
	checkSettledCancel(t, vn.srv, vn.c, out.Ticket)
	if n := vn.fake.Requests("DELETE /api/v3/order"); n != 1 {
		t.Errorf("the cancel reached binance %d times, want once", n)
	}
}

// TestLostCancelSettlesAlpaca is the same at Alpaca.
func TestLostCancelSettlesAlpaca(t *testing.T) {
	f := venuerig.Alpaca(t, "50000", "BTC/USD")
	vn := startAlpacaVenue(t, f, true, "BTC-USD")
	lim := accepted(t, vn.c, order("al", "BTC-USD", command.Buy, command.Limit, "0.01", "59000"))
	f.DropResponses("/v2/orders/"+lim.Order.VenueOrderID, 1)
	out := sendAny(t, vn.c, command.Command{Verb: command.CancelOrder, Venue: "al", OrderID: lim.OrderID})
	if out.Status != node.Pending {
		t.Fatalf("a cancel whose answer was lost: %+v", out)
	}
	checkSettledCancel(t, vn.srv, vn.c, out.Ticket)
	if n := f.Requests("DELETE /v2/orders/" + lim.Order.VenueOrderID); n != 1 {
		t.Errorf("the cancel reached alpaca %d times, want once", n)
	}
}

// TestModifyCutOffSettlesAtRestart: the node dies while Binance has done a
// modify (cancel-replace) whose answer has not come back. The journal as
// the process left it (copied while the call is in flight) gives a node
// that knows the ticket, and its start's reconciliation settles it: the
// order replaced, never sent again.
func TestModifyCutOffSettlesAtRestart(t *testing.T) {
	f := newBinanceFake(t)
	dir := t.TempDir()
	srv := startWith(t, binanceVenue("bn", "testnet", true, f), nodetest.WithJournal(filepath.Join(dir, "node.db")))
	vn := &venueNode{srv: srv, fake: f, c: srv.Client()}
	vn.waitSynced(t, "bn")
	vn.arm(t, "bn", time.Hour)
	lim := accepted(t, vn.c, order("bn", "BTCUSDT", command.Buy, command.Limit, "0.02", "59000"))

	held, release := f.HoldResponses("/api/v3/order/cancelReplace")
	t.Cleanup(release) // before the first node's Close, which waits for the call
	ticket, err := vn.c.Submit(context.Background(), command.NewEnvelope(
		command.Command{Verb: command.Modify, Venue: "bn", OrderID: lim.OrderID, Price: testkit.D("59500")}, "cut off"))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-held:
	case <-time.After(10 * time.Second):
		t.Fatal("the modify never reached binance")
	}
	// The fold waits for the venue's answer: node.db is what SIGKILL now
	// would leave.
	crashed := filepath.Join(t.TempDir(), "node.db")
	data, err := os.ReadFile(filepath.Join(dir, "node.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(crashed, data, 0o600); err != nil {
		t.Fatal(err)
	}

	after := startWith(t, binanceVenue("bn", "testnet", true, f), nodetest.WithJournal(crashed), nodetest.WithOperatorKey(srv.OperatorKey))
	c := after.Client()
	out := waitSettled(t, c, ticket)
	if out.Status != node.Accepted || out.Verb != command.Modify || out.Order == nil || !out.Order.Price.Equal(testkit.D("59500")) ||
		out.Order.VenueOrderID == lim.Order.VenueOrderID || !strings.Contains(out.Detail, "settled by reconciliation") {
		t.Errorf("the cut-off modify's ticket after the restart: %+v", out)
	}
	if n := f.Requests("POST /api/v3/order/cancelReplace"); n != 1 {
		t.Errorf("the modify reached binance %d times, want once", n)
	}
}

// TestCancelThatNeverArrivedSettlesNotApplied: the cancel is lost before
// Binance processed it; once a reconciliation after the timeout finds the
// order still open, the ticket settles rejected (not_applied), and the
// cancel is not sent again.
func TestCancelThatNeverArrivedSettlesNotApplied(t *testing.T) {
	vn := startVenueNode(t, func(f *binancefake.Fake) venuerig.Venue { return binanceVenue("bn", "testnet", true, f) })
	vn.arm(t, "bn", time.Hour)
	lim := accepted(t, vn.c, order("bn", "BTCUSDT", command.Buy, command.Limit, "0.01", "59000"))
	vn.fake.LoseRequests("/api/v3/order", 1)
	out := sendAny(t, vn.c, command.Command{Verb: command.CancelOrder, Venue: "bn", OrderID: lim.OrderID})
	if out.Status != node.Pending {
		t.Fatalf("a cancel lost on its way: %+v", out)
	}
	got := waitSettled(t, vn.c, out.Ticket)
	if got.Status != node.Rejected || got.Code != "not_applied" || got.Order == nil || got.Order.Status != node.OrderOpen ||
		!strings.Contains(got.Reason, "did not take effect") {
		t.Errorf("the lost cancel's ticket settled as %+v", got)
	}
	if v := vn.venue(t, "bn"); len(v.OpenOrders) != 1 {
		t.Errorf("the order is no longer open: %+v", v.OpenOrders)
	}
	if n := vn.fake.Requests("DELETE /api/v3/order"); n != 1 {
		t.Errorf("the cancel reached binance %d times, want once (lost, never resent)", n)
	}
}
