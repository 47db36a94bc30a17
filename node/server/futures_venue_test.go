package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/binancefutures/binancefuturesfake"
	"wicket/node/command"
	"wicket/node/nodetest"
	"wicket/node/venuerig"
)

// startFutures is a node with one binance-futures venue "perps" on a
// fresh fake (BTCUSDT at 3x isolated), read once.
func startFutures(tb testing.TB) (*nodetest.Server, *binancefuturesfake.Fake) {
	tb.Helper()
	f := venuerig.BinanceFutures(tb, "100000", "BTCUSDT")
	srv := venuerig.Start(tb, []venuerig.Venue{venuerig.OnBinanceFutures(f, project.Venue{Name: "perps", MayArm: true, Symbols: []string{"BTCUSDT"},
		Futures: project.Futures{Contracts: map[string]project.Contract{"BTCUSDT": {Leverage: 3}}}})})
	return srv, f
}

// TestFuturesVenueDisarmedThenShort: a binance-futures venue starts
// disarmed and refuses a write; armed, a market sell opens a short, and
// the snapshot shows it as the venue keeps it (leverage, margin type,
// margin, liquidation price) with equity cash + unrealised P&L.
func TestFuturesVenueDisarmedThenShort(t *testing.T) {
	srv, f := startFutures(t)
	c := srv.Client()
	v := venuerig.WaitSynced(t, c, "perps")
	if v.Kind != project.KindBinanceFutures || v.Armed {
		t.Fatalf("at start: kind %s armed %v", v.Kind, v.Armed)
	}
	ctx := context.Background()
	sell := order("perps", "BTCUSDT", command.Sell, command.Market, "0.1", "")
	out, _ := nodetest.Send(ctx, c, command.NewEnvelope(sell, "test"), 5*time.Second) // a refusal is an error too; the outcome says which
	if out.Code != "disarmed" || !strings.Contains(out.Reason, "wicket node arm perps") {
		t.Fatalf("a write while disarmed: %+v", out)
	}
	if _, err := c.Arm(ctx, "perps", time.Hour, "perps", srv.OperatorKey); err != nil {
		t.Fatal(err)
	}
	sell.ClientOrderID = ""
	if out, err := nodetest.Send(ctx, c, command.NewEnvelope(sell, "test"), 5*time.Second); err != nil || out.Status != node.Accepted {
		t.Fatalf("a short while armed: %+v %v", out, err)
	}
	f.SetPrice("BTCUSDT", "59000")
	var snap *node.Snapshot
	testkit.WaitFor(t, "the short at the mark", 5*time.Second, func() (bool, string) { // the node's background account read
		var err error
		snap, err = c.Snapshot(ctx, "perps", 0)
		return err == nil && len(snap.Venues[0].Positions) == 1 && snap.Venues[0].Positions[0].Mark.Equal(testkit.D("59000")), fmt.Sprintf("%+v %v", snap, err)
	})
	v, p := snap.Venues[0], snap.Venues[0].Positions[0]
	if !p.Quantity.Equal(testkit.D("-0.1")) || p.Leverage != 3 || p.MarginType != "isolated" || !p.Margin.Equal(testkit.D("2000")) ||
		!p.LiquidationPrice.Equal(testkit.D("79681.27")) || !p.UnrealizedPnL.Equal(testkit.D("100")) || !v.Equity.Equal(testkit.D("100100")) {
		t.Errorf("snapshot position %+v, equity %s", p, v.Equity)
	}
}

// BenchmarkConfirmedSubmitBinanceFutures is BenchmarkConfirmedSubmitBinance's
// round trip through the binance-futures adapter to its loopback fake.
func BenchmarkConfirmedSubmitBinanceFutures(b *testing.B) {
	srv, _ := startFutures(b)
	c := srv.Client()
	if _, err := c.Arm(context.Background(), "perps", time.Hour, "perps", srv.OperatorKey); err != nil {
		b.Fatal(err)
	}
	benchSubmits(b, c, "perps", "BTCUSDT", "0.001", "node confirmed submit_order via binance-futures adapter to a loopback fake")
}

// TestFuturesFundingBookedOnceAcrossRestart: funding the venue books
// after the node's first order there is journaled once each (by the
// venue's id), shown in the snapshot, and neither lost nor booked again
// by a restart on the same journal; funding from before the node traded
// there is not its business.
func TestFuturesFundingBookedOnceAcrossRestart(t *testing.T) {
	srv, f := startFutures(t)
	c := srv.Client()
	ctx := context.Background()
	f.AddFunding("BTCUSDT", "-9", time.Now().Add(-time.Hour)) // before the node traded here
	if _, err := c.Arm(ctx, "perps", time.Hour, "perps", srv.OperatorKey); err != nil {
		t.Fatal(err)
	}
	if out, err := nodetest.Send(ctx, c, command.NewEnvelope(order("perps", "BTCUSDT", command.Buy, command.Market, "0.1", ""), "test"), 5*time.Second); err != nil || out.Status != node.Accepted {
		t.Fatalf("a long: %+v %v", out, err)
	}
	f.AddFunding("BTCUSDT", "-1.5", time.Now().Add(time.Second))
	f.AddFunding("BTCUSDT", "0.25", time.Now().Add(2*time.Second))
	funding := func() (string, int) {
		snap, err := c.Snapshot(ctx, "perps", 200)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, ev := range snap.Events {
			if ev.Kind == node.EventFunding {
				n++
			}
		}
		return snap.Venues[0].Funding.String(), n
	}
	wait := func(what string) {
		t.Helper()
		testkit.WaitFor(t, what+": funding -1.25 in 2 events", 10*time.Second, func() (bool, string) { // the node's background reads
			total, n := funding()
			return total == "-1.25" && n == 2, fmt.Sprintf("funding %s in %d events", total, n)
		})
	}
	wait("booked")
	srv.Restart(t)
	c = srv.Client()
	venuerig.WaitSynced(t, c, "perps")
	wait("after a restart") // the polls since have read the same payments again
	reads := f.Requests("GET /fapi/v1/income")
	testkit.WaitFor(t, "two more funding reads", 10*time.Second, func() (bool, string) {
		n := f.Requests("GET /fapi/v1/income")
		return n >= reads+2, fmt.Sprintf("%d reads", n)
	})
	if total, n := funding(); total != "-1.25" || n != 2 {
		t.Errorf("after more polls: funding %s in %d events", total, n)
	}
}

// TestFuturesBracketReduceOnlyExits: a bracket at binance-futures is its
// market entry, then — once it has filled — its take-profit and stop as
// two reduce-only algo orders sized to the fill; when the take-profit
// fills the node cancels the stop the venue left working (Binance links
// none), and the position is flat.
func TestFuturesBracketReduceOnlyExits(t *testing.T) {
	srv, f := startFutures(t)
	c := srv.Client()
	if _, err := c.Arm(context.Background(), "perps", time.Hour, "perps", srv.OperatorKey); err != nil {
		t.Fatal(err)
	}
	vn := &venueNode{srv: srv, c: c}
	out := accepted(t, c, bracketCmd("perps", "BTCUSDT", "0.02", "", "60600", "59400", ""))
	if len(out.OrderIDs) != 3 {
		t.Fatalf("bracket: %+v", out)
	}
	tp, stop := out.OrderIDs[1], out.OrderIDs[2]
	waitFor(t, "the exits placed", func() bool {
		a, _ := vn.nodeOrderAt(t, "perps", tp)
		b, _ := vn.nodeOrderAt(t, "perps", stop)
		return a == node.OrderOpen && b == node.OrderOpen && len(f.Algos()) == 2
	})
	for _, g := range f.Algos() {
		if !g.Quantity.Equal(testkit.D("0.02")) || g.Side != "SELL" || (g.Type != "TAKE_PROFIT" && g.Type != "STOP_MARKET") {
			t.Errorf("the venue holds exit %+v", g)
		}
	}
	if p := f.Position("BTCUSDT"); !p.Amount.Equal(testkit.D("0.02")) {
		t.Fatalf("position after the entry: %+v", p)
	}
	f.SetPrice("BTCUSDT", "60600")
	waitFor(t, "the take-profit filled and the stop canceled", func() bool {
		a, _ := vn.nodeOrderAt(t, "perps", tp)
		b, _ := vn.nodeOrderAt(t, "perps", stop)
		return a == node.OrderFilled && b == node.OrderCanceled
	})
	if p := f.Position("BTCUSDT"); !p.Amount.IsZero() {
		t.Errorf("position after the take-profit: %+v", p)
	}
	for _, g := range f.Algos() {
		if g.Type == "STOP_MARKET" && g.Status != "CANCELED" {
			t.Errorf("the stop at the venue: %+v, want canceled", g)
		}
	}
}

// TestFuturesLiquidationClosesPosition: a liquidation at the venue closes
// the position in the node's snapshot with the reason and the price.
func TestFuturesLiquidationClosesPosition(t *testing.T) {
	srv, f := startFutures(t)
	c := srv.Client()
	if _, err := c.Arm(context.Background(), "perps", time.Hour, "perps", srv.OperatorKey); err != nil {
		t.Fatal(err)
	}
	accepted(t, c, order("perps", "BTCUSDT", command.Buy, command.Market, "0.1", ""))
	vn := &venueNode{srv: srv, c: c}
	waitFor(t, "the long in the snapshot", func() bool {
		v := vn.venue(t, "perps")
		return len(v.Positions) == 1 && v.Positions[0].Quantity.Equal(testkit.D("0.1"))
	})
	f.Liquidate("BTCUSDT", "40300")
	var last node.Venue
	defer func() {
		if t.Failed() {
			t.Logf("the node last read positions %+v; the venue holds %+v", last.Positions, f.Position("BTCUSDT"))
		}
	}()
	waitFor(t, "the position closed by the liquidation", func() bool {
		v := vn.venue(t, "perps")
		last = v
		return len(v.Positions) == 1 && v.Positions[0].Quantity.IsZero() && strings.Contains(v.Positions[0].Closed, "liquidat") &&
			strings.Contains(v.Positions[0].Closed, "40300")
	})
}

// TestFuturesLiquidationDistanceRefused: with min_liquidation_distance_pct
// 10, a 10x long opening at the mark would liquidate 9.64 % below it (the
// venue's first bracket: 0.4 %): the node refuses it naming both prices,
// before anything is sent, and its preview shows the margin required,
// that liquidation price and the funding rate in force. The venue puts a
// position of that size exactly there; an order that only reduces it
// passes.
func TestFuturesLiquidationDistanceRefused(t *testing.T) {
	f := venuerig.BinanceFutures(t, "100000", "BTCUSDT")
	srv := venuerig.Start(t, []venuerig.Venue{venuerig.OnBinanceFutures(f, project.Venue{Name: "perps", MayArm: true, Symbols: []string{"BTCUSDT"},
		Futures: project.Futures{MaxLeverage: 20, MinLiquidationDistancePct: testkit.D("10"), Contracts: map[string]project.Contract{"BTCUSDT": {Leverage: 10}}}})})
	c := srv.Client()
	if _, err := c.Arm(context.Background(), "perps", time.Hour, "perps", srv.OperatorKey); err != nil {
		t.Fatal(err)
	}
	v, err := c.DryRun(context.Background(), command.NewEnvelope(order("perps", "BTCUSDT", command.Buy, command.Market, "0.1", ""), "preview"))
	if err != nil {
		t.Fatal(err)
	}
	shown := map[string]string{}
	for _, ch := range v.Checks {
		shown[ch.Name] = ch.Detail
	}
	if v.WouldAccept || !strings.Contains(shown["margin"], "margin required 600") || !strings.Contains(shown["margin"], "funding rate in force 0.01%") ||
		!strings.Contains(shown["liquidation_distance"], "54216.87") {
		t.Errorf("the preview: %+v", v)
	}
	out := rejected(t, c, order("perps", "BTCUSDT", command.Buy, command.Market, "0.1", ""), "liquidation_distance")
	if !strings.Contains(out.Reason, "54216.87") || !strings.Contains(out.Reason, "60000") {
		t.Errorf("the refusal does not name both prices: %s", out.Reason)
	}
	if len(f.Orders()) != 0 {
		t.Errorf("the refused order reached the venue: %+v", f.Orders())
	}
	f.SetPosition("BTCUSDT", "0.1", "60000", 10, "ISOLATED")
	waitFor(t, "the position read, liquidating where the node said", func() bool {
		v := (&venueNode{srv: srv, c: c}).venue(t, "perps")
		return len(v.Positions) == 1 && v.Positions[0].LiquidationPrice.Equal(testkit.D("54216.87"))
	})
	accepted(t, c, order("perps", "BTCUSDT", command.Sell, command.Market, "0.05", ""))
}

// TestFuturesMarginNotCash: at a futures venue an order needs its
// opening notional over the leverage in available balance, on either
// side: a 10x long of 6000 notional passes with 1000 available (a spot
// venue's cash check would refuse it), one of 12000 is refused naming
// the margin, and so is a short of that size; closing needs none.
func TestFuturesMarginNotCash(t *testing.T) {
	f := venuerig.BinanceFutures(t, "1000", "BTCUSDT")
	srv := venuerig.Start(t, []venuerig.Venue{venuerig.OnBinanceFutures(f, project.Venue{Name: "perps", MayArm: true, Symbols: []string{"BTCUSDT"},
		Futures: project.Futures{Contracts: map[string]project.Contract{"BTCUSDT": {Leverage: 10}}}})})
	c := srv.Client()
	if _, err := c.Arm(context.Background(), "perps", time.Hour, "perps", srv.OperatorKey); err != nil {
		t.Fatal(err)
	}
	for _, side := range []command.Side{command.Buy, command.Sell} {
		out := rejected(t, c, order("perps", "BTCUSDT", side, command.Market, "0.2", ""), "insufficient_margin")
		if !strings.Contains(out.Reason, "needs 1200 margin at 10x") || !strings.Contains(out.Reason, "1000 available") {
			t.Errorf("%s 0.2: %s", side, out.Reason)
		}
	}
	accepted(t, c, order("perps", "BTCUSDT", command.Buy, command.Market, "0.1", ""))
	waitFor(t, "the long read", func() bool {
		v := (&venueNode{srv: srv, c: c}).venue(t, "perps")
		return len(v.Positions) == 1 && v.Positions[0].Quantity.Equal(testkit.D("0.1"))
	})
	accepted(t, c, order("perps", "BTCUSDT", command.Sell, command.Market, "0.1", ""))
}

// TestFuturesFlattenIsReduceOnly: flatten at a futures venue sends its
// closing order reduce-only, so a position that changed meanwhile can
// never be flipped by it.
func TestFuturesFlattenIsReduceOnly(t *testing.T) {
	srv, f := startFutures(t)
	c := srv.Client()
	if _, err := c.Arm(context.Background(), "perps", time.Hour, "perps", srv.OperatorKey); err != nil {
		t.Fatal(err)
	}
	accepted(t, c, order("perps", "BTCUSDT", command.Sell, command.Market, "0.1", ""))
	vn := &venueNode{srv: srv, c: c}
	waitFor(t, "the short read", func() bool {
		v := vn.venue(t, "perps")
		return len(v.Positions) == 1 && v.Positions[0].Quantity.Equal(testkit.D("-0.1"))
	})
	accepted(t, c, command.Command{Verb: command.Flatten, Venue: "perps", Symbol: "BTCUSDT"})
	orders := f.Orders()
	last := orders[len(orders)-1]
	if len(orders) != 2 || !last.ReduceOnly || last.Side != "BUY" || !last.Quantity.Equal(testkit.D("0.1")) || !f.Position("BTCUSDT").Amount.IsZero() {
		t.Errorf("flatten sent %+v; position %+v", last, f.Position("BTCUSDT"))
	}
}
