package server_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/binance/binancefake"
	"wicket/node/command"
	"wicket/node/nodetest"
	"wicket/node/server"
	"wicket/node/venuerig"
)

// Each real venue's calls run on its own lane, off the fold: these tests
// hold one venue's answer on a channel and show that everything else is
// answered while it is held, and that the held venue's own commands wait
// their turn.

// twoVenues is a node with the paper venue and two binance venues on
// fakes of their own, slow and fast, both armed and synced. Calls are
// bounded far beyond any test's run, so a held answer stays held until
// the test releases it; limit, when positive, is max_position_notional.
type twoVenues struct {
	srv        *nodetest.Server
	c          *node.Client
	slow, fast *binancefake.Fake
}

func startTwoVenues(t testing.TB, limit string, opts ...nodetest.Option) *twoVenues {
	t.Helper()
	tv := &twoVenues{slow: newBinanceFake(t), fast: newBinanceFake(t)}
	cfg := project.Defaults()
	if limit != "" {
		cfg.Guardrail.MaxPositionNotional = testkit.D(limit)
	}
	slow, fast := binanceVenue("slow", "testnet", true, tv.slow), binanceVenue("fast", "testnet", true, tv.fast)
	slow.Timeout, fast.Timeout = 10*time.Minute, 10*time.Minute
	tv.srv = venuerig.Node(t, cfg, []venuerig.Venue{slow, fast}, append([]nodetest.Option{nodetest.WithVenueTimeout(10 * time.Minute)}, opts...)...)
	tv.c = tv.srv.Client()
	vn := &venueNode{srv: tv.srv, c: tv.c}
	for _, name := range []string{"slow", "fast"} {
		vn.waitSynced(t, name)
		vn.arm(t, name, time.Hour)
	}
	return tv
}

// hold holds the slow venue's answer to its next order and returns a
// release the test's cleanup also calls (before the node stops, so its
// close never waits for a held call).
func (tv *twoVenues) hold(t testing.TB) (held <-chan struct{}, release func()) {
	held, release = tv.slow.HoldResponses("/api/v3/order")
	t.Cleanup(release)
	return held, release
}

// submit sends cmd and returns its ticket at once.
func (tv *twoVenues) submit(t *testing.T, cmd command.Command) string {
	t.Helper()
	id, err := tv.c.Submit(context.Background(), command.NewEnvelope(cmd, ""))
	if err != nil {
		t.Fatalf("submit %s: %v", cmd, err)
	}
	return id
}

// ticket reads a ticket's outcome, waiting up to wait for it.
func (tv *twoVenues) ticket(t *testing.T, id string, wait time.Duration) node.Outcome {
	t.Helper()
	out, err := tv.c.Ticket(context.Background(), id, wait)
	if err != nil {
		t.Fatalf("ticket %s: %v", id, err)
	}
	return out
}

// waitHeld waits until the slow fake has processed the order and holds
// its answer (bounded, so a node that never sends it fails the test).
func waitHeld(t testing.TB, held <-chan struct{}) {
	t.Helper()
	select {
	case <-held:
	case <-time.After(10 * time.Second):
		t.Fatal("the slow venue never received the order")
	}
}

// bounded is a context that fails a request the node does not answer in
// time: a stalled node, not a slow one.
func bounded(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestSlowVenueStallsNoOtherVenue(t *testing.T) {
	tv := startTwoVenues(t, "")
	held, release := tv.hold(t)
	slowTicket := tv.submit(t, order("slow", "BTCUSDT", command.Buy, command.Market, "0.01", ""))
	waitHeld(t, held)

	// While the slow venue holds its answer: every read, the other real
	// venue's order and paper's order are answered.
	ctx := bounded(t)
	snap, err := tv.c.Snapshot(ctx, "", 20)
	if err != nil {
		t.Fatalf("snapshot while a venue is slow: %v", err)
	}
	if v := venueOf(t, snap, "slow"); len(v.OpenOrders) != 1 || v.OpenOrders[0].Status != node.OrderPending {
		t.Errorf("the slow venue's order while its answer is held: %+v", v.OpenOrders)
	}
	if _, err := tv.c.Snapshot(ctx, "fast", 20); err != nil {
		t.Fatalf("snapshot of the other venue: %v", err)
	}
	if v, err := tv.c.DryRun(ctx, command.NewEnvelope(order("slow", "BTCUSDT", command.Buy, command.Market, "0.01", ""), "")); err != nil || !v.WouldAccept {
		t.Errorf("dry run on the slow venue: %+v %v", v, err)
	}
	for _, venue := range []string{"fast", "paper"} {
		symbol := "BTCUSDT"
		if venue == "paper" {
			symbol = "BTC-USD"
		}
		out, err := nodetest.Send(ctx, tv.c, command.NewEnvelope(order(venue, symbol, command.Buy, command.Market, "0.01", ""), ""), 5*time.Second)
		if err != nil || out.Status != node.Accepted || out.Order == nil || out.Order.Status != node.OrderFilled {
			t.Fatalf("order on %s while another venue is slow: %+v %v", venue, out, err)
		}
	}
	if out := tv.ticket(t, slowTicket, 0); out.Status != node.Pending {
		t.Fatalf("the slow venue's ticket resolved while its answer is held: %+v", out)
	}

	// Released, the slow venue's answer lands: its order was never lost.
	release()
	out := tv.ticket(t, slowTicket, 5*time.Second)
	if out.Status != node.Accepted || out.Order == nil || out.Order.Status != node.OrderFilled {
		t.Errorf("the slow venue's order once answered: %+v", out)
	}
}

func TestCommandsToOneVenueStayInOrder(t *testing.T) {
	tv := startTwoVenues(t, "")
	held, release := tv.hold(t)
	first := order("slow", "BTCUSDT", command.Buy, command.Limit, "0.01", "59000")
	first.ClientOrderID = "wk-first"
	placed := tv.submit(t, first)
	waitHeld(t, held)
	// Queued behind the held submit: a cancel of that order, which is only
	// possible once the venue's answer is applied, then another order.
	canceled := tv.submit(t, command.Command{Verb: command.CancelOrder, Venue: "slow", ClientOrderID: "wk-first"})
	second := order("slow", "BTCUSDT", command.Buy, command.Limit, "0.01", "58000")
	second.ClientOrderID = "wk-second"
	next := tv.submit(t, second)
	// The fast venue is answered meanwhile (and the queued commands are in
	// the lane by now: commands are queued in the order the fold took them).
	if _, err := nodetest.Send(bounded(t), tv.c, command.NewEnvelope(order("fast", "BTCUSDT", command.Buy, command.Market, "0.01", ""), ""), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if n := len(tv.slow.Orders()); n != 1 {
		t.Fatalf("the slow venue holds %d orders while its first answer is held; want 1 (the rest wait their turn)", n)
	}
	for i, id := range []string{canceled, next} {
		out := tv.ticket(t, id, 0)
		if out.Status != node.Pending {
			t.Fatalf("a command queued behind a held answer resolved first: %+v", out)
		}
		if want := fmt.Sprintf("waiting for its turn at slow behind %d command(s)", i+1); !strings.Contains(out.Detail, want) {
			t.Errorf("a queued command's ticket says %q; want it to say %q", out.Detail, want)
		}
	}
	release()
	if out := tv.ticket(t, placed, 5*time.Second); out.Status != node.Accepted {
		t.Fatalf("first submit: %+v", out)
	}
	if out := tv.ticket(t, canceled, 5*time.Second); out.Status != node.Accepted || out.Order == nil || out.Order.Status != node.OrderCanceled {
		t.Fatalf("the cancel queued behind its order's submit: %+v", out)
	}
	if out := tv.ticket(t, next, 5*time.Second); out.Status != node.Accepted {
		t.Fatalf("second submit: %+v", out)
	}
	orders := tv.slow.Orders()
	if len(orders) != 2 || orders[0].ClientOrderID != "wk-first" || orders[0].Status != "CANCELED" || orders[1].ClientOrderID != "wk-second" || orders[1].Status != "NEW" {
		t.Errorf("the slow venue's orders, in the order it took them: %+v", orders)
	}
}

func TestLimitsHoldAcrossConcurrentCommands(t *testing.T) {
	// 0.1 BTC held at 60000; max_position_notional 30000: one buy of 0.25
	// (→ 0.35, 21000) passes, the two together (→ 0.6, 36000) do not.
	tv := startTwoVenues(t, "30000")
	buy := order("slow", "BTCUSDT", command.Buy, command.Market, "0.25", "")
	if v, err := tv.c.DryRun(context.Background(), command.NewEnvelope(buy, "")); err != nil || !v.WouldAccept {
		t.Fatalf("one buy alone: %+v %v", v, err)
	}
	held, release := tv.hold(t)
	a := tv.submit(t, buy)
	waitHeld(t, held)
	b := tv.submit(t, buy)
	if _, err := tv.c.Snapshot(bounded(t), "", 0); err != nil { // the fold has taken b by now
		t.Fatal(err)
	}
	if out := tv.ticket(t, b, 0); out.Status != node.Pending {
		t.Fatalf("the second buy was decided before the first's answer: %+v", out)
	}
	release()
	if out := tv.ticket(t, a, 5*time.Second); out.Status != node.Accepted || out.Order == nil || out.Order.Status != node.OrderFilled {
		t.Fatalf("first buy: %+v", out)
	}
	if out := tv.ticket(t, b, 5*time.Second); out.Status != node.Rejected || out.Code != "max_position_notional" {
		t.Fatalf("second buy, which with the first exceeds the limit: %+v", out)
	}
	if n := len(tv.slow.Orders()); n != 1 {
		t.Errorf("the venue received %d orders; want 1", n)
	}
}

func TestVenueBusyPastItsQueue(t *testing.T) {
	tv := startTwoVenues(t, "")
	held, release := tv.hold(t)
	first := tv.submit(t, order("slow", "BTCUSDT", command.Buy, command.Market, "0.01", ""))
	waitHeld(t, held)
	// Commands that need no call (their order is unknown) fill the lane.
	unknown := command.Command{Verb: command.CancelOrder, Venue: "slow", OrderID: "ord-99999999"}
	var queued []string
	for range server.MaxVenueQueue - 1 {
		queued = append(queued, tv.submit(t, unknown))
	}
	out, err := nodetest.Send(bounded(t), tv.c, command.NewEnvelope(unknown, ""), 5*time.Second)
	var ne *node.Error
	if !errors.As(err, &ne) || out.Status != node.Rejected || out.Code != "venue_busy" || !strings.Contains(out.Reason, "venue slow is busy") || !strings.Contains(out.Reason, "nothing was sent") {
		t.Fatalf("a command past the slow venue's queue: %+v %v", out, err)
	}
	// The other venue is not busy.
	if out := sendAny(t, tv.c, command.Command{Verb: command.CancelOrder, Venue: "fast", OrderID: "ord-99999999"}); out.Code != "unknown_order" {
		t.Errorf("the fast venue while the slow one is busy: %+v", out)
	}
	release()
	if out := tv.ticket(t, first, 5*time.Second); out.Status != node.Accepted {
		t.Errorf("the held order: %+v", out)
	}
	for _, id := range queued {
		if out := tv.ticket(t, id, 5*time.Second); out.Status != node.Rejected || out.Code != "unknown_order" {
			t.Fatalf("a queued command at its turn: %+v", out)
		}
	}
}

func TestCloseLetsTheCallInFlightAnswer(t *testing.T) {
	logs := &syncBuffer{}
	tv := startTwoVenues(t, "", nodetest.WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
	held, release := tv.hold(t)
	inFlight := order("slow", "BTCUSDT", command.Buy, command.Market, "0.01", "")
	inFlight.ClientOrderID = "wk-in-flight"
	tv.submit(t, inFlight)
	waitHeld(t, held)
	queued := order("slow", "BTCUSDT", command.Buy, command.Market, "0.01", "")
	queued.ClientOrderID = "wk-queued"
	tv.submit(t, queued)
	if _, err := tv.c.Snapshot(bounded(t), "", 0); err != nil { // the fold has queued it on the lane by now
		t.Fatal(err)
	}
	closed := make(chan struct{})
	go func() { tv.srv.Close(); close(closed) }()
	// The node stops: the queued command is dropped unsent, while the call
	// in flight is still held; released, its answer is applied, and only
	// then does the node finish stopping.
	waitFor(t, "the queued command dropped", func() bool {
		return strings.Contains(logs.String(), "command dropped") && strings.Contains(logs.String(), "client_order_id=wk-queued")
	})
	release()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the node did not stop once the call in flight was answered")
	}
	tv.srv.Restart(t)
	c := tv.srv.Client()
	page, err := c.Audit(context.Background(), node.AuditQuery{ClientOrderID: "wk-in-flight"})
	if err != nil || len(page.Entries) != 1 {
		t.Fatalf("audit of the order in flight at the stop: %+v %v", page, err)
	}
	if out := page.Entries[0].Outcome; out.Status != node.Accepted || out.Order == nil || out.Order.Status != node.OrderFilled || strings.Contains(out.Detail, "reconciliation") {
		t.Errorf("the answer in flight at the stop was not applied before the node stopped: %+v", out)
	}
	if page, err := c.Audit(context.Background(), node.AuditQuery{ClientOrderID: "wk-queued"}); err != nil || len(page.Entries) != 0 {
		t.Errorf("the command dropped at the stop left an entry: %+v %v", page, err)
	}
	if orders := tv.slow.Orders(); len(orders) != 1 || orders[0].ClientOrderID != "wk-in-flight" {
		t.Errorf("the venue's orders: %+v", orders)
	}
}

func TestMarketExitEverywhereWhileAVenueIsSlow(t *testing.T) {
	tv := startTwoVenues(t, "")
	accepted(t, tv.c, order("paper", "BTC-USD", command.Buy, command.Market, "0.01", ""))
	held, release := tv.hold(t) // the slow venue's closing order
	exit := tv.submit(t, command.Command{Verb: command.MarketExit})
	waitHeld(t, held)
	// While the slow venue holds its answer, paper and the fast venue are
	// already flat: each venue exits on its own, none waits for another.
	waitFor(t, "the fast venue flattened", func() bool {
		snap, err := tv.c.Snapshot(bounded(t), "fast", 0)
		if err != nil {
			t.Fatal(err)
		}
		p, holds := position(snap.Venues[0], "BTCUSDT")
		return (!holds || p.Quantity.IsZero()) && len(tv.fast.Orders()) == 1
	})
	if p, ok := position(venueOf(t, snapshot(t, tv.c), "paper"), "BTC-USD"); ok && !p.Quantity.IsZero() {
		t.Errorf("paper still holds %s BTC-USD while the slow venue exits", p.Quantity)
	}
	if out := tv.ticket(t, exit, 0); out.Status != node.Pending {
		t.Fatalf("market_exit resolved before the slow venue answered: %+v", out)
	}
	release()
	out := tv.ticket(t, exit, 5*time.Second)
	if out.Status != node.Accepted || len(out.OrderIDs) != 3 || !strings.Contains(out.Detail, "flattened 3 position(s)") {
		t.Errorf("market_exit over every venue: %+v", out)
	}
	if orders := tv.slow.Orders(); len(orders) != 1 || orders[0].Side != "SELL" || orders[0].Status != "FILLED" {
		t.Errorf("the slow venue's closing order: %+v", orders)
	}
}
