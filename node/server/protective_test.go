package server_test

import (
	"context"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/command"
	"wicket/node/nodetest"
)

func stopCmd(side command.Side, typ command.OrderType, qty string, set func(*command.Command)) command.Command {
	c := command.Command{Verb: command.SubmitOrder, Venue: "paper", Symbol: "BTC-USD", Side: side, Type: typ, Quantity: testkit.D(qty)}
	set(&c)
	return c
}

// TestProtectiveOrdersOnPaper places a stop, a trailing stop and a
// stop_limit through the node, moves the marks, restarts the node in the
// middle and checks each order's trigger, trail and fill.
func TestProtectiveOrdersOnPaper(t *testing.T) {
	srv := nodetest.NewServer(t, replay(map[string][]decimal.Decimal{"BTC-USD": ds("100", "104", "102", "97", "99")}))
	c := srv.Client()
	accepted(t, c, order("paper", "BTC-USD", command.Buy, command.Market, "10", ""))

	out := rejected(t, c, stopCmd(command.Sell, command.Stop, "4", func(c *command.Command) { c.StopPrice = testkit.D("101") }), "stop_side")
	if !strings.Contains(out.Reason, "sell stop_price 101 must be below mark 100") {
		t.Errorf("wrong-side stop: %s", out.Reason)
	}
	stop := accepted(t, c, stopCmd(command.Sell, command.Stop, "4", func(c *command.Command) { c.StopPrice = testkit.D("97.5") }))
	if !strings.Contains(stop.Detail, "stop 97.5 resting") || stop.Order.Status != node.OrderOpen {
		t.Errorf("stop placed: %s %+v", stop.Detail, stop.Order)
	}
	trail := accepted(t, c, stopCmd(command.Sell, command.TrailingStop, "3", func(c *command.Command) { c.TrailAmount = testkit.D("3") }))
	if o := trail.Order; !o.TrailBest.Equal(testkit.D("100")) || !o.StopPrice.Equal(testkit.D("97")) {
		t.Errorf("trailing stop placed at best %s stop %s, want 100 and 97", o.TrailBest, o.StopPrice)
	}
	sl := accepted(t, c, stopCmd(command.Sell, command.StopLimit, "2", func(c *command.Command) { c.StopPrice = testkit.D("98"); c.LimitPrice = testkit.D("98.5") }))
	if o := sl.Order; !o.StopPrice.Equal(testkit.D("98")) || !o.Price.Equal(testkit.D("98.5")) {
		t.Errorf("stop_limit placed: %+v", o)
	}

	srv.Tick(t, 1) // 104: the trailing stop follows to 101
	if o := openOrder(t, c, trail.OrderID); o == nil || !o.TrailBest.Equal(testkit.D("104")) || !o.StopPrice.Equal(testkit.D("101")) {
		t.Fatalf("trailing stop after 104: %+v", o)
	}
	srv.Restart(t)
	c = srv.Client()
	if o := openOrder(t, c, trail.OrderID); o == nil || !o.StopPrice.Equal(testkit.D("101")) {
		t.Fatalf("trailing stop after a restart: %+v", o)
	}
	srv.Tick(t, 1) // 102: the trailing stop holds
	if openOrder(t, c, trail.OrderID) == nil || openOrder(t, c, stop.OrderID) == nil {
		t.Fatal("a stop filled above its stop")
	}
	srv.Tick(t, 1) // 97: both stops fill (the stop gapped through 97.5), the stop_limit triggers below its limit
	fills := map[string]decimal.Decimal{}
	kinds := map[node.EventKind]int{}
	for _, ev := range snapshot(t, c).Events {
		kinds[ev.Kind]++
		if ev.Kind == node.EventFilled {
			fills[ev.OrderID] = ev.Price
		}
	}
	for _, id := range []string{stop.OrderID, trail.OrderID} {
		if p, ok := fills[id]; !ok || !p.Equal(testkit.D("96.95")) { // 97 less 5 bps of slippage, floored to the cent
			t.Errorf("order %s filled at %v (%v), want 96.95", id, p, ok)
		}
	}
	o := openOrder(t, c, sl.OrderID)
	if o == nil || !o.Triggered {
		t.Fatalf("stop_limit at 97: %+v, want triggered and resting", o)
	}
	srv.Tick(t, 1) // 99: at or above its limit, it fills at the mark, no slippage
	for _, ev := range snapshot(t, c).Events {
		if ev.Kind == node.EventFilled && ev.OrderID == sl.OrderID && !ev.Price.Equal(testkit.D("99")) {
			t.Errorf("stop_limit filled at %s, want 99", ev.Price)
		}
	}
	if p, _ := position(venueOf(t, snapshot(t, c), "paper"), "BTC-USD"); !p.Quantity.Equal(testkit.D("1")) {
		t.Errorf("position = %s, want 10 − 4 − 3 − 2 = 1", p.Quantity)
	}
	if kinds[node.EventTrailed] != 1 || kinds[node.EventTriggered] != 1 {
		t.Errorf("events %v: want one order_trailed and one order_triggered", kinds)
	}
}

// TestOCOThroughTheNode places an oco as one command: the dry run lists
// each leg's checks, the node places two linked legs, a fill of one cancels
// the other, cancel_order on a leg cancels the group, and reduce_only
// counts an oco's quantity once.
func TestOCOThroughTheNode(t *testing.T) {
	srv := nodetest.NewServer(t, replay(map[string][]decimal.Decimal{"BTC-USD": ds("100", "100", "103", "97", "96.5")}))
	c := srv.Client()
	accepted(t, c, order("paper", "BTC-USD", command.Buy, command.Market, "10", ""))
	oco := stopCmd(command.Sell, command.OCO, "6", func(c *command.Command) { c.Price = testkit.D("102.5"); c.StopPrice = testkit.D("97.5") })
	oco.ClientOrderID = "exit-1"

	v, err := c.DryRun(context.Background(), command.NewEnvelope(oco, ""))
	if err != nil || !v.WouldAccept {
		t.Fatalf("dry run: %+v %v", v, err)
	}
	legs := map[string]int{}
	for _, ch := range v.Checks {
		legs[ch.Leg]++
	}
	if legs["limit"] == 0 || legs["stop"] == 0 || legs[""] == 0 {
		t.Errorf("dry run checks by leg %v, want the limit leg's, the stop leg's and the command's", legs)
	}
	wrong := oco
	wrong.Price = testkit.D("99")
	if out := rejected(t, c, wrong, "limit_side"); !strings.Contains(out.Reason, "limit leg limit_side: sell limit 99 must be above mark 100") {
		t.Errorf("a marketable limit leg: %s", out.Reason)
	}

	out := accepted(t, c, oco)
	if len(out.OrderIDs) != 2 || out.OrderID != out.OrderIDs[0] || !strings.Contains(out.Detail, "oco "+out.OrderID) {
		t.Fatalf("oco outcome: %+v", out)
	}
	limitLeg, stopLeg := openOrder(t, c, out.OrderIDs[0]), openOrder(t, c, out.OrderIDs[1])
	if limitLeg == nil || stopLeg == nil || limitLeg.Group != out.OrderID || stopLeg.Group != out.OrderID ||
		limitLeg.Type != command.Limit || stopLeg.Type != command.Stop || stopLeg.ClientOrderID != "exit-1-stop" {
		t.Fatalf("legs: %+v %+v", limitLeg, stopLeg)
	}
	rejected(t, c, oco, "duplicate_client_order_id")

	// reduce_only: the oco holds 6 of the 10 once, not twice.
	accepted(t, c, command.Command{Verb: command.SetTradingState, State: command.ReduceOnly})
	accepted(t, c, order("paper", "BTC-USD", command.Sell, command.Limit, "4", "104"))
	rejected(t, c, order("paper", "BTC-USD", command.Sell, command.Limit, "1", "104"), "reduce_only")
	accepted(t, c, command.Command{Verb: command.MassCancel, Venue: "paper", Symbol: "BTC-USD"})
	accepted(t, c, command.Command{Verb: command.SetTradingState, State: command.Active})
	if openOrder(t, c, out.OrderIDs[0]) != nil || openOrder(t, c, out.OrderIDs[1]) != nil {
		t.Fatal("mass_cancel left an oco leg open")
	}

	// Placed again: the mark at 103 fills the limit leg, which cancels the stop leg.
	oco.ClientOrderID = "exit-2"
	out = accepted(t, c, oco)
	srv.Tick(t, 2)
	if openOrder(t, c, out.OrderIDs[0]) != nil || openOrder(t, c, out.OrderIDs[1]) != nil {
		t.Fatal("a filled oco left a leg open")
	}
	snap := snapshot(t, c)
	var filledAt decimal.Decimal
	canceled := false
	for _, ev := range snap.Events {
		if ev.Kind == node.EventFilled && ev.OrderID == out.OrderIDs[0] {
			filledAt = ev.Price
		}
		canceled = canceled || (ev.Kind == node.EventCanceled && ev.OrderID == out.OrderIDs[1] && strings.Contains(ev.Note, "another leg of oco"))
	}
	if !filledAt.Equal(testkit.D("103")) || !canceled {
		t.Errorf("limit leg filled at %s, stop leg canceled %v", filledAt, canceled)
	}
	if p, _ := position(venueOf(t, snap, "paper"), "BTC-USD"); !p.Quantity.Equal(testkit.D("4")) {
		t.Errorf("position %s, want 10 − 6 = 4", p.Quantity)
	}

	// cancel_order on one leg cancels the whole oco.
	small := stopCmd(command.Sell, command.OCO, "1", func(c *command.Command) { c.Price = testkit.D("104"); c.StopPrice = testkit.D("96") })
	out = accepted(t, c, small)
	cx := accepted(t, c, command.Command{Verb: command.CancelOrder, Venue: "paper", OrderID: out.OrderIDs[1]})
	if strings.Join(cx.Canceled, ",") != strings.Join(out.OrderIDs, ",") || openOrder(t, c, out.OrderIDs[0]) != nil {
		t.Errorf("cancel of one leg: canceled %v of %v", cx.Canceled, out.OrderIDs)
	}
}
