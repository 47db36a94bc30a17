package server_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/binance"
	"wicket/node/binance/binancefake"
	"wicket/node/command"
	"wicket/node/nodetest"
	"wicket/node/venuerig"
)

// A real venue in these tests is the binance adapter against binancefake:
// the node, the adapter and the library all run for real; only the
// exchange is a fake.

type venueNode struct {
	srv  *nodetest.Server
	fake *binancefake.Fake
	c    *node.Client
}

// waitSynced waits until the node has read the venue (instruments,
// account, stream).
func (vn *venueNode) waitSynced(t testing.TB, name string) node.Venue {
	t.Helper()
	var v node.Venue
	waitFor(t, "venue "+name+" synced", func() bool {
		v = vn.venue(t, name)
		return v.Connection == "connected" && len(v.Instruments) > 0 && v.Account != "" && len(v.Marks) == len(v.Symbols)
	})
	return v
}

func (vn *venueNode) venue(t testing.TB, name string) node.Venue {
	t.Helper()
	snap, err := vn.c.Snapshot(context.Background(), name, 50)
	if err != nil {
		t.Fatal(err)
	}
	return snap.Venues[0]
}

func waitFor(t testing.TB, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sendAny submits c and awaits its outcome, pending included.
func sendAny(t testing.TB, c *node.Client, cmd command.Command) node.Outcome {
	t.Helper()
	out, err := nodetest.Send(context.Background(), c, command.NewEnvelope(cmd, ""), 5*time.Second)
	var ne *node.Error
	if err != nil && !(errors.As(err, &ne) && (ne.Kind == node.KindRejected || ne.Code == "pending")) {
		t.Fatalf("send %s: %v", cmd, err)
	}
	return out
}

func (vn *venueNode) arm(t testing.TB, name string, d time.Duration) node.ArmInfo {
	t.Helper()
	info, err := vn.c.Arm(context.Background(), name, d, name, vn.srv.OperatorKey)
	if err != nil {
		t.Fatalf("arm %s: %v", name, err)
	}
	return info
}

func TestRealVenueStartsDisarmedAndRefusesEveryWrite(t *testing.T) {
	vn := startVenueNode(t, func(f *binancefake.Fake) venuerig.Venue { return binanceVenue("bn", "testnet", true, f) })
	v := vn.venue(t, "bn")
	if v.Kind != "binance" || v.Environment != "testnet" || v.Armed || !v.ArmedUntil.IsZero() || !strings.Contains(v.MarkSource, "binance testnet") {
		t.Errorf("snapshot of a real venue: kind %q environment %q armed %v until %v mark source %q", v.Kind, v.Environment, v.Armed, v.ArmedUntil, v.MarkSource)
	}
	if p := vn.venue(t, "paper"); !p.Armed || p.Environment != "paper" || !strings.Contains(p.MarkSource, "simulated") {
		t.Errorf("paper venue: armed %v environment %q mark source %q", p.Armed, p.Environment, p.MarkSource)
	}
	if !v.Marks["BTCUSDT"].Equal(testkit.D("60000")) || !v.Cash.Equal(testkit.D("20000")) || len(v.Positions) != 1 {
		t.Errorf("venue state: marks %v cash %s positions %+v", v.Marks, v.Cash, v.Positions)
	}
	writes := []command.Command{
		order("bn", "BTCUSDT", command.Buy, command.Market, "0.01", ""),
		{Verb: command.CancelOrder, Venue: "bn", OrderID: "ord-00000001"},
		{Verb: command.Modify, Venue: "bn", OrderID: "ord-00000001", Price: testkit.D("59000")},
		{Verb: command.Flatten, Venue: "bn"},
		{Verb: command.MassCancel, Venue: "bn"},
		{Verb: command.MarketExit, Venue: "bn"},
	}
	want := "venue bn is disarmed; an operator arms it at a terminal with wicket node arm bn"
	for _, c := range writes {
		out := send(t, vn.c, c, "")
		if out.Status != node.Rejected || out.Code != "disarmed" || out.Reason != want {
			t.Errorf("%s on a disarmed venue: %s %s %q", c.Verb, out.Status, out.Code, out.Reason)
		}
		v, err := vn.c.DryRun(context.Background(), command.NewEnvelope(c, ""))
		if err != nil || v.WouldAccept || v.Code != "disarmed" {
			t.Errorf("dry run of %s: %+v %v", c.Verb, v, err)
		}
	}
	if n := len(vn.fake.Orders()); n != 0 {
		t.Errorf("a disarmed venue received %d orders", n)
	}
	// market_exit over every venue still exits the paper venue, and says it skipped bn.
	out := send(t, vn.c, command.Command{Verb: command.MarketExit}, "")
	if out.Status != node.Accepted || !strings.Contains(out.Detail, "skipped disarmed venue(s) [bn]") {
		t.Errorf("market_exit over every venue: %s %q", out.Status, out.Detail)
	}
}

func TestArmingRules(t *testing.T) {
	vn := startVenueNode(t, func(f *binancefake.Fake) venuerig.Venue { return binanceVenue("bn", "testnet", false, f) })
	ctx := context.Background()
	var ne *node.Error
	if _, err := vn.c.Arm(ctx, "bn", time.Hour, "bn", vn.srv.OperatorKey); !errors.As(err, &ne) || ne.Code != "cannot_arm" || !strings.Contains(ne.Message, "may_arm = true") {
		t.Errorf("arming without may_arm: %v", err)
	}
	if _, err := vn.c.Arm(ctx, "paper", time.Hour, "paper", vn.srv.OperatorKey); !errors.As(err, &ne) || !strings.Contains(ne.Message, "needs no arming") {
		t.Errorf("arming a paper venue: %v", err)
	}
	if _, err := vn.c.Arm(ctx, "nope", time.Hour, "nope", vn.srv.OperatorKey); !errors.As(err, &ne) || ne.Code != "unknown_venue" {
		t.Errorf("arming an unknown venue: %v", err)
	}

	live := startVenueNode(t, func(f *binancefake.Fake) venuerig.Venue { return binanceVenue("bnlive", "live", true, f) })
	info, err := live.c.Arming(ctx, "bnlive")
	if err != nil || !info.Live || info.AllowLive || !strings.Contains(info.Refusal, "--allow-live") || !info.Cash.Equal(testkit.D("20000")) || info.Account == "" {
		t.Errorf("arming info of a live venue: %+v %v", info, err)
	}
	if _, err := live.c.Arm(ctx, "bnlive", time.Hour, "bnlive", live.srv.OperatorKey); !errors.As(err, &ne) || ne.Code != "cannot_arm" || !strings.Contains(ne.Message, "--allow-live") {
		t.Errorf("arming live without --allow-live: %v", err)
	}

	allowed := startVenueNode(t, func(f *binancefake.Fake) venuerig.Venue { return binanceVenue("bnlive", "live", true, f) }, nodetest.WithAllowLive())
	for _, bad := range []time.Duration{25 * time.Hour, 0} {
		if _, err := allowed.c.Arm(ctx, "bnlive", bad, "bnlive", allowed.srv.OperatorKey); !errors.As(err, &ne) || ne.Code != "bad_duration" {
			t.Errorf("arming for %s: %v", bad, err)
		}
	}
	if _, err := allowed.c.Arm(ctx, "bnlive", time.Hour, "bn", allowed.srv.OperatorKey); !errors.As(err, &ne) || ne.Code != "not_confirmed" {
		t.Errorf("arming with the wrong name typed: %v", err)
	}
	observeOnly, err := node.NewClient(allowed.srv.Addr, allowed.srv.ObserveKey, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := observeOnly.Arm(ctx, "bnlive", time.Hour, "bnlive", allowed.srv.OperatorKey); !errors.As(err, &ne) || ne.Code != "no_control_key" {
		t.Errorf("arming without the control key: %v", err)
	}
	got := allowed.arm(t, "bnlive", 2*time.Hour)
	if !got.Armed || got.ArmedUntil.IsZero() {
		t.Errorf("armed: %+v", got)
	}
	if v := allowed.venue(t, "bnlive"); !v.Armed || !v.ArmedUntil.Equal(got.ArmedUntil) || v.Environment != "live" {
		t.Errorf("snapshot after arming: armed %v until %v", v.Armed, v.ArmedUntil)
	}
	if info, err := allowed.c.Disarm(ctx, "bnlive"); err != nil || info.Armed {
		t.Errorf("disarm: %+v %v", info, err)
	}
	if out := send(t, allowed.c, order("bnlive", "BTCUSDT", command.Buy, command.Market, "0.01", ""), ""); out.Code != "disarmed" {
		t.Errorf("submit after disarm: %s %s", out.Status, out.Code)
	}
}

func TestArmedVenueTradesAtTheVenue(t *testing.T) {
	vn := startVenueNode(t, func(f *binancefake.Fake) venuerig.Venue { return binanceVenue("bn", "testnet", true, f) })
	vn.arm(t, "bn", time.Hour)
	cid := "wk-0190f5a2-7c1e-7b3a-9d4e-123456789abc"
	c := order("bn", "BTCUSDT", command.Buy, command.Market, "0.01", "")
	c.ClientOrderID = cid
	out := send(t, vn.c, c, "first real order")
	if out.Status != node.Accepted || out.Order == nil || out.Order.Status != node.OrderFilled || !out.Order.AveragePrice.Equal(testkit.D("60000")) || out.Order.VenueOrderID == "" {
		t.Fatalf("market buy: %+v", out)
	}
	orders := vn.fake.Orders()
	if len(orders) != 1 || orders[0].ClientOrderID != "wk0190f5a27c1e7b3a9d4e123456789abc" {
		t.Fatalf("the venue holds %+v", orders)
	}
	waitFor(t, "position from the account", func() bool {
		v := vn.venue(t, "bn")
		return len(v.Positions) == 1 && v.Positions[0].Quantity.Equal(testkit.D("0.11"))
	})
	// A trailing stop by amount is not a binance form: the node holds it, and the venue hears nothing.
	trail := order("bn", "BTCUSDT", command.Sell, command.TrailingStop, "0.01", "")
	trail.TrailAmount = testkit.D("500")
	if out := send(t, vn.c, trail, ""); out.Status != node.Accepted || !strings.Contains(out.Detail, "held by the node") || len(vn.fake.Orders()) != 1 {
		t.Errorf("a trailing stop by amount on binance: %s %q, the venue holds %d orders", out.Status, out.Detail, len(vn.fake.Orders()))
	} else {
		accepted(t, vn.c, command.Command{Verb: command.CancelOrder, Venue: "bn", OrderID: out.OrderID})
	}
	// Too fine a quantity is refused by the node before the venue hears of it.
	out = send(t, vn.c, order("bn", "BTCUSDT", command.Buy, command.Limit, "0.000001", "59000"), "")
	if out.Code != "precision" || !strings.Contains(out.Reason, "step 0.00001") {
		t.Errorf("too fine a quantity: %s %q", out.Code, out.Reason)
	}
	out = send(t, vn.c, order("bn", "BTCUSDT", command.Buy, command.Limit, "0.01", "59000.005"), "")
	if out.Code != "precision" || !strings.Contains(out.Reason, "tick 0.01") {
		t.Errorf("too fine a price: %s %q", out.Code, out.Reason)
	}
	out = send(t, vn.c, order("bn", "BTCUSDT", command.Buy, command.Limit, "0.00001", "59000"), "")
	if out.Code != "min_notional" && !strings.Contains(out.Reason, "min_notional") {
		t.Errorf("below the minimum notional: %s %q", out.Code, out.Reason)
	}
	// A resting limit, modified (cancel-replace) and canceled.
	lim := accepted(t, vn.c, order("bn", "BTCUSDT", command.Buy, command.Limit, "0.01", "59000"))
	if lim.Order.Status != node.OrderOpen {
		t.Fatalf("limit: %+v", lim.Order)
	}
	mod := accepted(t, vn.c, command.Command{Verb: command.Modify, Venue: "bn", OrderID: lim.OrderID, Price: testkit.D("59500")})
	if !mod.Order.Price.Equal(testkit.D("59500")) || mod.Order.VenueOrderID == lim.Order.VenueOrderID {
		t.Errorf("modified: %+v", mod.Order)
	}
	can := accepted(t, vn.c, command.Command{Verb: command.CancelOrder, Venue: "bn", ClientOrderID: lim.ClientOrderID})
	if can.Order.Status != node.OrderCanceled {
		t.Errorf("canceled: %+v", can.Order)
	}
	// Orders the node did not place are external, and mass_cancel leaves them alone.
	ext := vn.fake.AddExternal("ETHUSDT", "BUY", "0.1", "2900.00")
	accepted(t, vn.c, order("bn", "ETHUSDT", command.Buy, command.Limit, "0.1", "2950"))
	vn.fake.DropStreams() // the reconnect resyncs and finds the external order
	waitFor(t, "the external order", func() bool { return len(vn.venue(t, "bn").ExternalOrders) == 1 })
	mc := accepted(t, vn.c, command.Command{Verb: command.MassCancel, Venue: "bn"})
	if len(mc.Canceled) != 1 {
		t.Errorf("mass_cancel canceled %v", mc.Canceled)
	}
	for _, o := range vn.fake.Orders() {
		if o.ID == ext.ID && o.Status != "NEW" {
			t.Errorf("the external order was touched: %s", o.Status)
		}
	}
	// Named, it can be canceled (never modified).
	if r := send(t, vn.c, command.Command{Verb: command.Modify, Venue: "bn", ClientOrderID: ext.ClientOrderID, Price: testkit.D("2901")}, ""); r.Code != "external_order" {
		t.Errorf("modify of an external order: %s %q", r.Code, r.Reason)
	}
	xc := accepted(t, vn.c, command.Command{Verb: command.CancelOrder, Venue: "bn", ClientOrderID: ext.ClientOrderID})
	if !strings.Contains(xc.Detail, "external order") || len(vn.venue(t, "bn").ExternalOrders) != 0 {
		t.Errorf("cancel of a named external order: %q", xc.Detail)
	}
	for _, o := range vn.fake.Orders() {
		if o.ID == ext.ID && o.Status != "CANCELED" {
			t.Errorf("the named external order is %s", o.Status)
		}
	}
	// flatten sells the whole position at the venue.
	fl := accepted(t, vn.c, command.Command{Verb: command.Flatten, Venue: "bn", Symbol: "BTCUSDT"})
	if len(fl.OrderIDs) != 1 {
		t.Fatalf("flatten: %+v", fl)
	}
	waitFor(t, "flat", func() bool { return vn.fake.Balance("BTC").IsZero() })
	page, err := vn.c.Audit(context.Background(), node.AuditQuery{ClientOrderID: cid})
	if err != nil || len(page.Entries) != 1 || page.Entries[0].Reason != "first real order" || page.Entries[0].Outcome.Order.Status != node.OrderFilled {
		t.Errorf("audit of the real order: %+v %v", page.Entries, err)
	}
}

func TestArmingLapsesAndRestartDisarms(t *testing.T) {
	clk := testkit.NewClock(time.Now())
	vn := startVenueNode(t, func(f *binancefake.Fake) venuerig.Venue { return binanceVenue("bn", "testnet", true, f) }, nodetest.WithClock(clk.Now))
	vn.c = vn.srv.Client(node.WithClock(clk.Now))
	vn.arm(t, "bn", time.Hour)
	clk.Advance(59 * time.Minute)
	if v := vn.venue(t, "bn"); !v.Armed {
		t.Fatal("disarmed before the hour")
	}
	clk.Advance(2 * time.Minute)
	out := send(t, vn.c, order("bn", "BTCUSDT", command.Buy, command.Market, "0.01", ""), "")
	if out.Code != "disarmed" {
		t.Errorf("after the lapse: %s %s", out.Status, out.Code)
	}
	snap, err := vn.c.Snapshot(context.Background(), "bn", 50)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, ev := range snap.Events {
		found = found || (ev.Kind == node.EventDisarmed && strings.Contains(ev.Note, "lapsed"))
	}
	if !found || snap.Venues[0].Armed {
		t.Errorf("no lapse event: %+v", snap.Events)
	}
	vn.arm(t, "bn", 8*time.Hour)
	vn.srv.Restart(t)
	vn.c = vn.srv.Client(node.WithClock(clk.Now))
	v := vn.waitSynced(t, "bn")
	if v.Armed {
		t.Error("a restart kept the venue armed")
	}
	snap, _ = vn.c.Snapshot(context.Background(), "bn", 5)
	if last := snap.Events[len(snap.Events)-1]; last.Kind != node.EventDisarmed || !strings.Contains(last.Note, "restarted") {
		t.Errorf("restart event %+v", last)
	}
}

func TestLostSubmitIsPendingAndNeverResent(t *testing.T) {
	vn := startVenueNode(t, func(f *binancefake.Fake) venuerig.Venue { return binanceVenue("bn", "testnet", true, f) })
	vn.arm(t, "bn", time.Hour)
	vn.fake.DropStreams() // no stream report either, for a second: the node knows nothing
	vn.fake.DropResponses("/api/v3/order", 1)
	c := order("bn", "BTCUSDT", command.Buy, command.Market, "0.01", "")
	c.ClientOrderID = "wk-0190f5a2-7c1e-7b3a-9d4e-0000000000aa"
	out := sendAny(t, vn.c, c)
	if out.Status != node.Pending || !strings.Contains(out.Detail, node.PendingAdvice) || out.Order == nil || out.Order.Status != node.OrderPending {
		t.Fatalf("a lost answer: %+v", out)
	}
	if nodetest.Err(out) == nil {
		t.Error("a pending outcome has no error")
	}
	// A retry with the same client order id is refused as a duplicate; the venue still holds one order.
	if again := send(t, vn.c, c, ""); again.Code != "duplicate_client_order_id" {
		t.Errorf("retry: %s %s", again.Status, again.Code)
	}
	waitFor(t, "the lost order adopted", func() bool {
		snap, err := vn.c.Snapshot(context.Background(), "bn", 50)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range snap.Events {
			if ev.Kind == node.EventFilled && ev.ClientOrderID == c.ClientOrderID {
				return true
			}
		}
		return false
	})
	if n := len(vn.fake.Orders()); n != 1 {
		t.Errorf("the venue holds %d orders, want exactly 1", n)
	}
	if n := vn.fake.Requests("POST /api/v3/order"); n != 1 {
		t.Errorf("the submit reached the venue %d times", n)
	}
	// A ticket read later reports the settled order.
	tk, err := vn.c.Ticket(context.Background(), out.Ticket, 0)
	if err != nil || tk.Status != node.Accepted || tk.Order == nil || tk.Order.Status != node.OrderFilled {
		t.Errorf("the ticket after reconciliation: %+v %v", tk, err)
	}
}

func TestReconciliationAtStart(t *testing.T) {
	vn := startVenueNode(t, func(f *binancefake.Fake) venuerig.Venue { return binanceVenue("bn", "testnet", true, f) })
	vn.arm(t, "bn", time.Hour)
	// One order lands at the venue but its answer is lost; another never reaches it.
	vn.fake.DropStreams()
	vn.fake.DropResponses("/api/v3/order", 1)
	landed := order("bn", "BTCUSDT", command.Buy, command.Market, "0.01", "")
	landed.ClientOrderID = "wk-0190f5a2-7c1e-7b3a-9d4e-0000000000b1"
	if out := sendAny(t, vn.c, landed); out.Status != node.Pending {
		t.Fatalf("landed: %+v", out)
	}
	vn.fake.LoseRequests("/api/v3/order", 1)
	lost := order("bn", "ETHUSDT", command.Buy, command.Market, "0.1", "")
	lost.ClientOrderID = "wk-0190f5a2-7c1e-7b3a-9d4e-0000000000b2"
	if out := sendAny(t, vn.c, lost); out.Status != node.Pending {
		t.Fatalf("lost: %+v", out)
	}
	vn.srv.Restart(t)
	vn.c = vn.srv.Client()
	vn.waitSynced(t, "bn")
	status := func(cid string) node.Event {
		snap, err := vn.c.Snapshot(context.Background(), "bn", 100)
		if err != nil {
			t.Fatal(err)
		}
		var last node.Event
		for _, ev := range snap.Events {
			if ev.ClientOrderID == cid {
				last = ev
			}
		}
		return last
	}
	waitFor(t, "the landed order adopted with its fill", func() bool { return status(landed.ClientOrderID).Kind == node.EventFilled })
	waitFor(t, "the lost order failed", func() bool { return status(lost.ClientOrderID).Kind == node.EventFailed })
	if ev := status(lost.ClientOrderID); !strings.Contains(ev.Note, "never placed") || !strings.Contains(ev.Note, "never resubmitted") {
		t.Errorf("failed note %q", ev.Note)
	}
	if n := len(vn.fake.Orders()); n != 1 {
		t.Errorf("the venue holds %d orders, want 1 (nothing resubmitted)", n)
	}
}

func TestPartialFillsAndStreamResync(t *testing.T) {
	vn := startVenueNode(t, func(f *binancefake.Fake) venuerig.Venue { return binanceVenue("bn", "testnet", true, f) })
	vn.arm(t, "bn", time.Hour)
	vn.fake.PartialFills(true)
	out := accepted(t, vn.c, order("bn", "BTCUSDT", command.Buy, command.Market, "0.01", ""))
	if out.Order.Status != node.OrderOpen || !out.Order.Filled.Equal(testkit.D("0.005")) || !strings.Contains(out.Detail, "partly filled") {
		t.Fatalf("partial fill: %+v %q", out.Order, out.Detail)
	}
	if v := vn.venue(t, "bn"); len(v.OpenOrders) != 1 || !v.OpenOrders[0].Filled.Equal(testkit.D("0.005")) {
		t.Errorf("snapshot of the partly filled order: %+v", v.OpenOrders)
	}
	vn.fake.Cross() // the rest fills; the stream reports it
	waitFor(t, "the rest filled from the stream", func() bool { return len(vn.venue(t, "bn").OpenOrders) == 0 })
	// While the stream is down a resting order fills; the reconnect's resync catches it.
	lim := accepted(t, vn.c, order("bn", "BTCUSDT", command.Buy, command.Limit, "0.01", "59000"))
	vn.fake.DropStreams()
	vn.fake.Cross()
	waitFor(t, "resync after the reconnect", func() bool {
		snap, _ := vn.c.Snapshot(context.Background(), "bn", 100)
		for _, ev := range snap.Events {
			if ev.Kind == node.EventFilled && ev.OrderID == lim.OrderID {
				return true
			}
		}
		return false
	})
	page, err := vn.c.Audit(context.Background(), node.AuditQuery{ClientOrderID: out.ClientOrderID})
	if err != nil || len(page.Entries) != 1 || !page.Entries[0].Outcome.Order.Filled.Equal(testkit.D("0.005")) {
		t.Errorf("audit of a partial fill: %+v %v", page.Entries, err)
	}
}

func TestAlpacaVenueThroughTheNode(t *testing.T) {
	f := venuerig.Alpaca(t, "50000", "SPY", "BTC/USD")
	vn := startAlpacaVenue(t, f, false, "SPY", "BTC-USD")
	v := vn.venue(t, "al")
	if v.Kind != "alpaca" || v.Environment != "paper" || v.Armed || v.Account != "PA3FAKE0001" || !v.Cash.Equal(testkit.D("50000")) {
		t.Errorf("alpaca venue: %+v", v)
	}
	if out := send(t, vn.c, order("al", "SPY", command.Buy, command.Market, "1", ""), ""); out.Code != "disarmed" {
		t.Errorf("disarmed: %s %s", out.Status, out.Code)
	}
	vn.arm(t, "al", time.Hour)
	buy := order("al", "SPY", command.Buy, command.Market, "2", "")
	buy.ClientOrderID = "wk-0190f5a2-7c1e-7b3a-9d4e-0000000000d1"
	out := accepted(t, vn.c, buy)
	if out.Order.Status != node.OrderFilled || f.Orders()[0].ClientOrderID != buy.ClientOrderID {
		t.Errorf("market buy: %+v; at alpaca %+v", out.Order, f.Orders())
	}
	// A crypto limit, replaced and canceled; a too-fine crypto quantity refused by the node.
	if r := send(t, vn.c, order("al", "BTC-USD", command.Buy, command.Limit, "0.00001", "59000"), ""); r.Code != "precision" {
		t.Errorf("too fine: %s %q", r.Code, r.Reason)
	}
	lim := accepted(t, vn.c, order("al", "BTC-USD", command.Buy, command.Limit, "0.01", "59000"))
	mod := accepted(t, vn.c, command.Command{Verb: command.Modify, Venue: "al", OrderID: lim.OrderID, Quantity: testkit.D("0.02")})
	if !mod.Order.Quantity.Equal(testkit.D("0.02")) || mod.Order.VenueOrderID == lim.Order.VenueOrderID {
		t.Errorf("replaced: %+v", mod.Order)
	}
	if c := accepted(t, vn.c, command.Command{Verb: command.CancelOrder, Venue: "al", OrderID: lim.OrderID}); c.Order.Status != node.OrderCanceled {
		t.Errorf("cancel: %+v", c.Order)
	}
	// A partly filled limit, replaced: one order with the fills of both incarnations.
	part := accepted(t, vn.c, order("al", "BTC-USD", command.Buy, command.Limit, "0.02", "59000"))
	f.FillPart(part.Order.VenueOrderID, "0.005")
	waitFor(t, "the partial fill", func() bool {
		for _, o := range vn.venue(t, "al").OpenOrders {
			if o.ID == part.OrderID && o.Filled.Equal(testkit.D("0.005")) {
				return true
			}
		}
		return false
	})
	rep := accepted(t, vn.c, command.Command{Verb: command.Modify, Venue: "al", OrderID: part.OrderID, Price: testkit.D("59500")})
	if !rep.Order.Quantity.Equal(testkit.D("0.02")) || !rep.Order.Filled.Equal(testkit.D("0.005")) {
		t.Errorf("after replace: %+v", rep.Order)
	}
	f.Cross()
	waitFor(t, "the rest filled", func() bool {
		for _, o := range vn.venue(t, "al").OpenOrders {
			if o.ID == part.OrderID {
				return false
			}
		}
		return true
	})
	snap, _ := vn.c.Snapshot(context.Background(), "al", 200)
	filled := testkit.D("0")
	for _, ev := range snap.Events {
		if ev.Kind == node.EventFilled && ev.OrderID == part.OrderID {
			filled = filled.Add(ev.Quantity)
		}
	}
	if !filled.Equal(testkit.D("0.02")) {
		t.Errorf("the replaced order's fills sum to %s", filled)
	}
	// A lost answer with the stream down: pending, then adopted, one order at alpaca.
	f.DropStreams()
	f.DropResponses("/v2/orders", 1)
	lost := order("al", "SPY", command.Sell, command.Market, "1", "")
	lost.ClientOrderID = "wk-0190f5a2-7c1e-7b3a-9d4e-0000000000d2"
	if p := sendAny(t, vn.c, lost); p.Status != node.Pending {
		t.Fatalf("lost: %+v", p)
	}
	waitFor(t, "adopted", func() bool {
		snap, _ := vn.c.Snapshot(context.Background(), "al", 100)
		for _, ev := range snap.Events {
			if ev.Kind == node.EventFilled && ev.ClientOrderID == lost.ClientOrderID {
				return true
			}
		}
		return false
	})
	n := 0
	for _, o := range f.Orders() {
		if o.ClientOrderID == lost.ClientOrderID {
			n++
		}
	}
	if n != 1 || f.Requests("POST /v2/orders") != 4 {
		t.Errorf("the lost order is at alpaca %d times; %d submits in all", n, f.Requests("POST /v2/orders"))
	}
}

// TestModifyKeepsFillsAcrossIncarnations: Binance's cancel-replace makes a
// new order for the rest; the node's order keeps one life, with the fills
// of both incarnations — also when the replace's answer is lost.
func TestModifyKeepsFillsAcrossIncarnations(t *testing.T) {
	vn := startVenueNode(t, func(f *binancefake.Fake) venuerig.Venue { return binanceVenue("bn", "testnet", true, f) })
	vn.arm(t, "bn", time.Hour)
	lim := accepted(t, vn.c, order("bn", "BTCUSDT", command.Buy, command.Limit, "0.02", "59000"))
	first, _ := strconv.ParseInt(lim.Order.VenueOrderID, 10, 64)
	vn.fake.FillPart(first, "0.005")
	waitFor(t, "the partial fill", func() bool {
		v := vn.venue(t, "bn")
		return len(v.OpenOrders) == 1 && v.OpenOrders[0].Filled.Equal(testkit.D("0.005"))
	})
	mod := accepted(t, vn.c, command.Command{Verb: command.Modify, Venue: "bn", OrderID: lim.OrderID, Price: testkit.D("59500")})
	if !mod.Order.Quantity.Equal(testkit.D("0.02")) || !mod.Order.Filled.Equal(testkit.D("0.005")) || mod.Order.Status != node.OrderOpen {
		t.Fatalf("after cancel-replace: %+v", mod.Order)
	}
	orders := vn.fake.Orders()
	if last := orders[len(orders)-1]; !last.Quantity.Equal(testkit.D("0.015")) || !last.Price.Equal(testkit.D("59500")) {
		t.Errorf("the replacement at binance: %+v", last)
	}
	// The replace's answer is lost with the stream down: the node follows the new incarnation.
	vn.fake.DropStreams()
	vn.fake.DropResponses("/api/v3/order/cancelReplace", 1)
	send(t, vn.c, command.Command{Verb: command.Modify, Venue: "bn", OrderID: lim.OrderID, Price: testkit.D("59600")}, "")
	waitFor(t, "the node following the second incarnation", func() bool {
		v := vn.venue(t, "bn")
		return len(v.OpenOrders) == 1 && v.OpenOrders[0].Price.Equal(testkit.D("59600"))
	})
	vn.fake.Cross()
	waitFor(t, "filled in full", func() bool { return len(vn.venue(t, "bn").OpenOrders) == 0 })
	snap, err := vn.c.Snapshot(context.Background(), "bn", 100)
	if err != nil {
		t.Fatal(err)
	}
	total, notional := testkit.D("0"), testkit.D("0")
	for _, ev := range snap.Events {
		if ev.Kind == node.EventFilled && ev.OrderID == lim.OrderID {
			total, notional = total.Add(ev.Quantity), notional.Add(ev.Quantity.Mul(ev.Price))
		}
	}
	if !total.Equal(testkit.D("0.02")) || !notional.Equal(testkit.D("0.005").Mul(testkit.D("59000")).Add(testkit.D("0.015").Mul(testkit.D("59600")))) {
		t.Errorf("fills of the order: %s for %s", total, notional)
		for _, ev := range snap.Events {
			t.Logf("node event %+v", ev)
		}
		for _, o := range vn.fake.Orders() {
			t.Logf("at binance %+v", o)
		}
	}
	n := 0
	for _, o := range vn.fake.Orders() {
		if binance.NodeID(o.ClientOrderID) == lim.ClientOrderID {
			n++
		}
	}
	if n != 3 {
		t.Errorf("binance holds %d incarnations, want 3", n)
	}
}

// TestStaleReadKeepsTheNewerIncarnation: a reconciliation reads the venue
// and its reads are slow; a modify sent meanwhile waits for them (the
// venue's reads and commands keep their order on its lane), so the read
// is applied before the node follows the replacement and never takes it
// back to the replaced incarnation, even for a moment: a cancel after it
// reaches the live one.
func TestStaleReadKeepsTheNewerIncarnation(t *testing.T) {
	// The held read must outlast the modify's wait without the node giving
	// up on it (then its retry would read the venue afresh).
	vn := startVenueNode(t, func(f *binancefake.Fake) venuerig.Venue { return binanceVenue("bn", "testnet", true, f) },
		nodetest.WithVenueTimeout(time.Minute))
	vn.arm(t, "bn", time.Hour)
	lim := accepted(t, vn.c, order("bn", "BTCUSDT", command.Buy, command.Limit, "0.02", "59000"))
	// The stream drops; the reconciliation after its reconnect looks the
	// order up and lists the open orders, among them one of someone
	// else's the node has not seen, and that answer is held back.
	vn.fake.AddExternal("ETHUSDT", "SELL", "0.5", "3500")
	held, release := vn.fake.HoldResponses("/api/v3/openOrders")
	defer release()
	vn.fake.DropStreams()
	select {
	case <-held:
	case <-time.After(10 * time.Second):
		t.Fatal("no reconciliation listed the open orders")
	}
	modTicket, err := vn.c.Submit(context.Background(), command.NewEnvelope(command.Command{Verb: command.Modify, Venue: "bn", OrderID: lim.OrderID, Price: testkit.D("59500")}, ""))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := vn.c.Ticket(context.Background(), modTicket, 0); err != nil || out.Status != node.Pending {
		t.Fatalf("the modify was decided while the reconciliation's read was held: %+v %v", out, err)
	}
	release()
	mod, err := vn.c.Ticket(context.Background(), modTicket, 5*time.Second)
	if err != nil || mod.Status != node.Accepted || mod.Order == nil {
		t.Fatalf("the modify after the read: %+v %v", mod, err)
	}
	if mod.Order.VenueOrderID == lim.Order.VenueOrderID {
		t.Fatalf("the modify kept venue order %s", mod.Order.VenueOrderID)
	}
	waitFor(t, "the reconciliation applied (the other order listed)", func() bool { return len(vn.venue(t, "bn").ExternalOrders) == 1 })
	if v := vn.venue(t, "bn"); len(v.OpenOrders) != 1 || v.OpenOrders[0].VenueOrderID != mod.Order.VenueOrderID || !v.OpenOrders[0].Price.Equal(testkit.D("59500")) {
		t.Errorf("after the stale reads the node follows %+v, want venue order %s at 59500", v.OpenOrders, mod.Order.VenueOrderID)
	}
	out := send(t, vn.c, command.Command{Verb: command.CancelOrder, Venue: "bn", OrderID: lim.OrderID}, "")
	if out.Status != node.Accepted || out.Order.Status != node.OrderCanceled {
		t.Errorf("cancel after the stale reads: %s %s %q %+v", out.Status, out.Code, out.Reason, out.Order)
	}
	// Not even for a moment: once it followed the replacement, no event
	// takes the order back to the incarnation it replaced.
	snap, err := vn.c.Snapshot(context.Background(), "bn", 100)
	if err != nil {
		t.Fatal(err)
	}
	replaced := false
	for _, ev := range snap.Events {
		if ev.OrderID != lim.OrderID {
			continue
		}
		replaced = replaced || ev.VenueOrderID == mod.Order.VenueOrderID
		if replaced && ev.VenueOrderID == lim.Order.VenueOrderID {
			t.Errorf("after the replacement the node went back to venue order %s: %s %q", ev.VenueOrderID, ev.Kind, ev.Note)
		}
	}
	if t.Failed() {
		for _, ev := range snap.Events {
			t.Logf("node event %s %s %s %q", ev.Kind, ev.VenueOrderID, ev.Price, ev.Note)
		}
	}
}

// TestCancelOfAFilledOrderIsTold: the venue refuses a cancel because the
// order filled meanwhile; the node reports the refusal and books the fill.
func TestCancelOfAFilledOrderIsTold(t *testing.T) {
	vn := startVenueNode(t, func(f *binancefake.Fake) venuerig.Venue { return binanceVenue("bn", "testnet", true, f) })
	vn.arm(t, "bn", time.Hour)
	lim := accepted(t, vn.c, order("bn", "BTCUSDT", command.Buy, command.Limit, "0.01", "59000"))
	vn.fake.DropStreams() // the node does not hear of the fill
	vn.fake.Cross()
	out := send(t, vn.c, command.Command{Verb: command.CancelOrder, Venue: "bn", OrderID: lim.OrderID}, "")
	if out.Status != node.Rejected || out.Code != "venue_rejected" || !strings.Contains(out.Reason, "the order is now filled") || out.Order.Status != node.OrderFilled {
		t.Errorf("cancel of a filled order: %s %s %q %+v", out.Status, out.Code, out.Reason, out.Order)
	}
}

// TestObserveKeyCannotArm: the node itself refuses an arm signed with the
// observe key (the Go client refuses earlier, without the control key).
func TestObserveKeyCannotArm(t *testing.T) {
	vn := startVenueNode(t, func(f *binancefake.Fake) venuerig.Venue { return binanceVenue("bn", "testnet", true, f) })
	for _, path := range []string{"/v1/venues/bn/arm", "/v1/venues/bn/disarm"} {
		body := []byte(`{"for":"1h","confirm":"bn"}`)
		req, err := http.NewRequest(http.MethodPost, "http://"+vn.srv.Addr+path, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		ts, nonce := node.Timestamp(time.Now()), testkit.Secret(t, 16)
		req.Header.Set(node.HeaderKey, node.KeyObserve)
		req.Header.Set(node.HeaderTimestamp, ts)
		req.Header.Set(node.HeaderNonce, nonce)
		req.Header.Set(node.HeaderSignature, node.Sign(vn.srv.ObserveKey, http.MethodPost, path, ts, nonce, body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(msg), "observe_key_cannot_write") {
			t.Errorf("%s with the observe key: %d %s", path, resp.StatusCode, msg)
		}
	}
	if v := vn.venue(t, "bn"); v.Armed {
		t.Error("armed with the observe key")
	}
}

// TestVenueUnreachableAtStart: a node whose venue answers 5xx starts, says
// the venue cannot be armed or traded yet, and syncs once it recovers.
func TestVenueUnreachableAtStart(t *testing.T) {
	f := venuerig.Binance(t, map[string]string{"USDT": "20000"}, "BTCUSDT")
	f.Fail5xx(1 << 20)
	v := venuerig.OnBinance(f, project.Venue{Name: "bn", MayArm: true, Symbols: []string{"BTCUSDT"}})
	v.Timeout = time.Second
	srv := startWith(t, v)
	vn := &venueNode{srv: srv, fake: f, c: srv.Client()}
	if v := vn.venue(t, "bn"); v.Connection != "disconnected" || v.Account != "" {
		t.Errorf("an unreachable venue: %+v", v)
	}
	var ne *node.Error
	if _, err := vn.c.Arm(context.Background(), "bn", time.Hour, "bn", vn.srv.OperatorKey); !errors.As(err, &ne) || !strings.Contains(ne.Message, "has not been reached yet") {
		t.Errorf("arming an unreached venue: %v", err)
	}
	f.Fail5xx(0)
	vn.waitSynced(t, "bn")
	vn.arm(t, "bn", time.Hour)
	if out := accepted(t, vn.c, order("bn", "BTCUSDT", command.Buy, command.Market, "0.01", "")); out.Order.Status != node.OrderFilled {
		t.Errorf("after recovery: %+v", out.Order)
	}
}
