package server_test

import (
	"context"
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

// TestFuturesFlipRefused: at a binance-futures venue (flip = refuse, the
// default) a sell of 0.3 on a long of 0.1 is refused before the venue
// hears of it, in the preview and the submit alike, naming the position,
// the order and the two orders to send; the close and then the opening
// order it names are each accepted, and the venue ends short 0.2.
func TestFuturesFlipRefused(t *testing.T) {
	srv, f := startFutures(t)
	c := srv.Client()
	if _, err := c.Arm(context.Background(), "perps", time.Hour, "perps", srv.OperatorKey); err != nil {
		t.Fatal(err)
	}
	f.SetPosition("BTCUSDT", "0.1", "60000", 3, "ISOLATED")
	waitFor(t, "the long read", func() bool {
		v := (&venueNode{srv: srv, c: c}).venue(t, "perps")
		return len(v.Positions) == 1 && v.Positions[0].Quantity.Equal(testkit.D("0.1"))
	})
	flip := order("perps", "BTCUSDT", command.Sell, command.Market, "0.3", "")
	v, err := c.DryRun(context.Background(), command.NewEnvelope(flip, "preview"))
	if err != nil {
		t.Fatal(err)
	}
	if v.WouldAccept {
		t.Errorf("the preview accepts a flip: %+v", v)
	}
	out := rejected(t, c, flip, "position_flip")
	for _, m := range []string{"sell 0.3 BTCUSDT", "position of 0.1 BTCUSDT", "to -0.2", "send sell 0.1 to close it", "then sell 0.2 to open the short"} {
		if !strings.Contains(out.Reason, m) {
			t.Errorf("the refusal %q lacks %q", out.Reason, m)
		}
	}
	if len(f.Orders()) != 0 {
		t.Fatalf("the refused flip reached the venue: %+v", f.Orders())
	}
	accepted(t, c, order("perps", "BTCUSDT", command.Sell, command.Market, "0.1", ""))
	waitFor(t, "the close read", func() bool {
		v := (&venueNode{srv: srv, c: c}).venue(t, "perps")
		return len(v.Positions) == 0 || v.Positions[0].Quantity.IsZero()
	})
	accepted(t, c, order("perps", "BTCUSDT", command.Sell, command.Market, "0.2", ""))
	if p := f.Position("BTCUSDT"); !p.Amount.Equal(testkit.D("-0.2")) {
		t.Errorf("the venue holds %+v, want short 0.2", p)
	}
}

// TestFuturesFlipSplit: with flip = "split" a market sell of 0.3 on a
// long of 0.1 reaches the venue as a reduce-only market sell of 0.1
// (client order id <cid>-close) and then a market sell of 0.2
// (<cid>-open), the outcome names both, and the venue ends short 0.2; the
// same submit retried, before and after a restart, is refused as a
// duplicate and sends nothing; a
// limit order that would flip is still refused, naming why.
func TestFuturesFlipSplit(t *testing.T) {
	f, srv, c := longOnSplitFlips(t)
	flip := order("perps", "BTCUSDT", command.Sell, command.Market, "0.3", "")
	flip.ClientOrderID = "flip-1"
	out := accepted(t, c, flip)
	if len(out.OrderIDs) != 2 || !strings.Contains(out.Detail, "split flip: close") {
		t.Errorf("the outcome does not report both orders: %+v", out)
	}
	orders := f.Orders()
	if len(orders) != 2 {
		t.Fatalf("the venue got %+v, want the close and the opening order", orders)
	}
	cl, op := orders[0], orders[1]
	if cl.ClientOrderID != "flip-1-close" || !cl.ReduceOnly || cl.Side != "SELL" || !cl.Quantity.Equal(testkit.D("0.1")) ||
		op.ClientOrderID != "flip-1-open" || op.ReduceOnly || op.Side != "SELL" || !op.Quantity.Equal(testkit.D("0.2")) {
		t.Errorf("the venue got close %+v, open %+v", cl, op)
	}
	if p := f.Position("BTCUSDT"); !p.Amount.Equal(testkit.D("-0.2")) {
		t.Errorf("the venue holds %+v, want short 0.2", p)
	}
	rejected(t, c, flip, "duplicate_client_order_id")
	srv.Restart(t) // the journal holds both orders by their derived ids: a retry after a restart sends nothing either
	c = srv.Client()
	venuerig.WaitSynced(t, c, "perps")
	if _, err := c.Arm(context.Background(), "perps", time.Hour, "perps", srv.OperatorKey); err != nil {
		t.Fatal(err)
	}
	rejected(t, c, flip, "duplicate_client_order_id")
	waitFor(t, "the short read", func() bool {
		v := (&venueNode{srv: srv, c: c}).venue(t, "perps")
		return len(v.Positions) == 1 && v.Positions[0].Quantity.Equal(testkit.D("-0.2"))
	})
	out = rejected(t, c, order("perps", "BTCUSDT", command.Buy, command.Limit, "0.3", "59000"), "position_flip")
	if !strings.Contains(out.Reason, "splits market orders only") {
		t.Errorf("the resting flip's refusal: %s", out.Reason)
	}
	if len(f.Orders()) != 2 {
		t.Errorf("a refused order reached the venue: %+v", f.Orders())
	}
}

// longOnSplitFlips is a node whose armed futures venue splits flips and
// holds a long of 0.1 BTCUSDT the node has read.
func longOnSplitFlips(t *testing.T) (*binancefuturesfake.Fake, *nodetest.Server, *node.Client) {
	t.Helper()
	f := venuerig.BinanceFutures(t, "100000", "BTCUSDT")
	srv := venuerig.Start(t, []venuerig.Venue{venuerig.OnBinanceFutures(f, project.Venue{Name: "perps", MayArm: true, Symbols: []string{"BTCUSDT"},
		Futures: project.Futures{Flip: project.FlipSplit, Contracts: map[string]project.Contract{"BTCUSDT": {Leverage: 3}}}})})
	c := srv.Client()
	if _, err := c.Arm(context.Background(), "perps", time.Hour, "perps", srv.OperatorKey); err != nil {
		t.Fatal(err)
	}
	f.SetPosition("BTCUSDT", "0.1", "60000", 3, "ISOLATED")
	waitFor(t, "the long read", func() bool {
		v := (&venueNode{srv: srv, c: c}).venue(t, "perps")
		return len(v.Positions) == 1 && v.Positions[0].Quantity.Equal(testkit.D("0.1"))
	})
	return f, srv, c
}

// TestFuturesModifyFlipRefused: a modify that raises a resting limit
// sell's quantity past a long would take the position through zero when
// it fills; a modify is never split, so it is refused under either flip
// policy before the venue hears of it, naming the order; a modify that
// stays within the position is sent.
func TestFuturesModifyFlipRefused(t *testing.T) {
	srv, f := startFutures(t)
	c := srv.Client()
	if _, err := c.Arm(context.Background(), "perps", time.Hour, "perps", srv.OperatorKey); err != nil {
		t.Fatal(err)
	}
	f.SetPosition("BTCUSDT", "0.1", "60000", 3, "ISOLATED")
	waitFor(t, "the long read", func() bool {
		v := (&venueNode{srv: srv, c: c}).venue(t, "perps")
		return len(v.Positions) == 1 && v.Positions[0].Quantity.Equal(testkit.D("0.1"))
	})
	sell := accepted(t, c, order("perps", "BTCUSDT", command.Sell, command.Limit, "0.05", "65000"))
	sent := len(f.Orders())
	out := rejected(t, c, modifyCmd("perps", sell.OrderID, func(m *command.Command) { m.Quantity = testkit.D("0.3") }), "position_flip")
	for _, m := range []string{"modify of order " + sell.OrderID, "to quantity 0.3", "position of 0.1 BTCUSDT", "a modify is never split"} {
		if !strings.Contains(out.Reason, m) {
			t.Errorf("the refusal %q lacks %q", out.Reason, m)
		}
	}
	if o := f.Orders(); len(o) != sent || !o[len(o)-1].Quantity.Equal(testkit.D("0.05")) {
		t.Fatalf("the refused modify reached the venue: %+v", o)
	}
	accepted(t, c, modifyCmd("perps", sell.OrderID, func(m *command.Command) { m.Quantity = testkit.D("0.08") }))
	if o := f.Orders(); !o[len(o)-1].Quantity.Equal(testkit.D("0.08")) {
		t.Errorf("the venue's order after the modify: %+v", o[len(o)-1])
	}
}

// TestFuturesFlipSplitMintedID: a flip whose client order id the node
// mints (an agent's, a deployment's) is split into two orders whose ids
// still fit Binance's 36 characters, and both are booked.
func TestFuturesFlipSplitMintedID(t *testing.T) {
	f, _, c := longOnSplitFlips(t)
	out := accepted(t, c, order("perps", "BTCUSDT", command.Sell, command.Market, "0.3", ""))
	if len(out.OrderIDs) != 2 || !strings.HasPrefix(out.ClientOrderID, "wk-") {
		t.Fatalf("the minted flip: %+v", out)
	}
	orders := f.Orders()
	if len(orders) != 2 {
		t.Fatalf("the venue got %+v, want the close and the opening order", orders)
	}
	for i, suffix := range []string{"-c", "-o"} {
		if id := orders[i].ClientOrderID; !strings.HasSuffix(id, suffix) || len(id) > 36 {
			t.Errorf("order %d went out as %q", i, id)
		}
	}
	if p := f.Position("BTCUSDT"); !p.Amount.Equal(testkit.D("-0.2")) {
		t.Errorf("the venue holds %+v, want short 0.2", p)
	}
}
