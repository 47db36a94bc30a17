package server_test

import (
	"testing"
	"time"

	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/binance"
	"wicket/node/command"
)

// modifyCmd moves order id's stop_price / limit_price / trail at venue.
func modifyCmd(venue, id string, set func(*command.Command)) command.Command {
	c := command.Command{Verb: command.Modify, Venue: venue, OrderID: id}
	set(&c)
	return c
}

// TestModifyVenueAlpacaMovesStopsByReplace: at Alpaca modify moves a
// stop's stop_price, a trailing stop's trail and a bracket exit's stop by
// Alpaca's replace (one PATCH each); the node follows the new incarnation
// with the new levels.
func TestModifyVenueAlpacaMovesStopsByReplace(t *testing.T) {
	vn, f := startAlpacaNode(t)
	stop := order("al", "SPY", command.Sell, command.Stop, "1", "")
	stop.StopPrice = testkit.D("490")
	s := accepted(t, vn.c, stop)
	m := accepted(t, vn.c, modifyCmd("al", s.OrderID, func(c *command.Command) { c.StopPrice = testkit.D("480") }))
	last := f.Orders()[len(f.Orders())-1]
	if f.Requests("PATCH /v2/orders/"+s.Order.VenueOrderID) != 1 || !last.Stop.Equal(testkit.D("480")) || last.Type != "stop" {
		t.Errorf("alpaca holds %+v after the modify", last)
	}
	if o := m.Order; !o.StopPrice.Equal(testkit.D("480")) || o.VenueOrderID != last.ID || o.Status != node.OrderOpen {
		t.Errorf("the node's stop after the modify: %+v", o)
	}

	trail := order("al", "SPY", command.Sell, command.TrailingStop, "1", "")
	trail.TrailPercent = testkit.D("2")
	tr := accepted(t, vn.c, trail)
	m = accepted(t, vn.c, modifyCmd("al", tr.OrderID, func(c *command.Command) { c.TrailPercent = testkit.D("3") }))
	last = f.Orders()[len(f.Orders())-1]
	if !last.TrailPercent.Equal(testkit.D("3")) || !last.Stop.Equal(testkit.D("485")) {
		t.Errorf("alpaca holds %+v after the trail's modify", last)
	}
	if o := m.Order; !o.TrailPercent.Equal(testkit.D("3")) || !o.StopPrice.Equal(testkit.D("485")) || o.VenueOrderID != last.ID {
		t.Errorf("the node's trailing stop after the modify: %+v, want trail 3%% and alpaca's stop 485", o)
	}
	if r := rejected(t, vn.c, modifyCmd("al", tr.OrderID, func(c *command.Command) { c.TrailAmount = testkit.D("5") }), "venue_rejected"); r.Reason == "" {
		t.Error("a trail of the other kind was not refused with a reason")
	}

	b := accepted(t, vn.c, bracketCmd("al", "SPY", "2", "499", "520", "480", ""))
	m = accepted(t, vn.c, modifyCmd("al", b.OrderIDs[2], func(c *command.Command) { c.StopPrice = testkit.D("470") }))
	if o := m.Order; !o.StopPrice.Equal(testkit.D("470")) || o.ClientOrderID != b.ClientOrderID+node.StopLegSuffix || !o.Inactive {
		t.Errorf("the bracket's stop-loss after the modify: %+v", o)
	}
	last = f.Orders()[len(f.Orders())-1]
	if last.Status != "held" || !last.Stop.Equal(testkit.D("470")) || last.Parent != f.Orders()[len(f.Orders())-4].ID {
		t.Errorf("alpaca holds the replaced stop-loss as %+v", last)
	}
	f.SetPrice("SPY", "499") // the entry fills: the exits go live, the moved stop with them
	waitFor(t, "the group active", func() bool { g, _ := groupIn(vn.venue(t, "al"), b.OrderIDs[0]); return g.State == node.GroupActive })
	f.SetPrice("SPY", "475") // above the moved stop: nothing
	f.SetPrice("SPY", "470")
	waitFor(t, "the moved stop-loss filled", func() bool { st, _ := vn.nodeOrderAt(t, "al", b.OrderIDs[2]); return st == node.OrderFilled })
}

// TestModifyVenueBinanceCancelReplaceAndHeldTriggers: at Binance modify
// moves a stop_limit by cancel-replace (its new STOP_LOSS_LIMIT); a
// trigger the node holds moves in the journal alone (the venue hears
// nothing), keeps its new stop across a restart and fires there, not at
// the old one; a lost cancel-replace answer is
// never resent, and the node follows the replacement the venue shows.
func TestModifyVenueBinanceCancelReplaceAndHeldTriggers(t *testing.T) {
	vn := startVenueNode(t, bnVenue)
	vn.arm(t, "bn", time.Hour)
	sl := order("bn", "BTCUSDT", command.Sell, command.StopLimit, "0.01", "")
	sl.StopPrice, sl.LimitPrice = testkit.D("59000"), testkit.D("58900")
	o := accepted(t, vn.c, sl)
	m := accepted(t, vn.c, modifyCmd("bn", o.OrderID, func(c *command.Command) { c.StopPrice, c.LimitPrice = testkit.D("58500"), testkit.D("58400") }))
	cur, _ := fakeOrder(vn.fake, o.ClientOrderID)
	all := vn.fake.Orders()
	last := all[len(all)-1]
	if vn.fake.Requests("POST /api/v3/order/cancelReplace") != 1 || last.Type != "STOP_LOSS_LIMIT" || !last.StopPrice.Equal(testkit.D("58500")) || !last.Price.Equal(testkit.D("58400")) ||
		cur.Status != "CANCELED" {
		t.Errorf("binance holds %+v (the first %+v) after the modify", last, cur)
	}
	if got := m.Order; !got.StopPrice.Equal(testkit.D("58500")) || !got.Price.Equal(testkit.D("58400")) || got.VenueOrderID == o.Order.VenueOrderID {
		t.Errorf("the node's stop_limit after the modify: %+v", got)
	}

	// A lost answer is never resent: the node reads the order back and follows what the venue shows.
	vn.fake.DropResponses("/api/v3/order/cancelReplace", 1)
	lost := sendAny(t, vn.c, modifyCmd("bn", o.OrderID, func(c *command.Command) { c.StopPrice = testkit.D("58000"); c.LimitPrice = testkit.D("57900") }))
	waitFor(t, "the modify settled", func() bool {
		out, err := vn.c.Ticket(t.Context(), lost.Ticket, 0)
		return err == nil && out.Status == node.Accepted
	})
	waitFor(t, "the node follows the new stop", func() bool {
		x, _ := openIn(vn.venue(t, "bn"), o.OrderID)
		return x.StopPrice.Equal(testkit.D("58000"))
	})
	if n := vn.fake.Requests("POST /api/v3/order/cancelReplace"); n != 2 {
		t.Errorf("%d cancel-replaces sent, want 2 (the lost one never resent)", n)
	}

	// A trailing stop binance holds (trailingDelta): its new trail is a new STOP_LOSS's trailingDelta.
	tr := order("bn", "BTCUSDT", command.Sell, command.TrailingStop, "0.01", "")
	tr.TrailPercent = testkit.D("1.5")
	to := accepted(t, vn.c, tr)
	accepted(t, vn.c, modifyCmd("bn", to.OrderID, func(c *command.Command) { c.TrailPercent = testkit.D("2") }))
	all = vn.fake.Orders()
	if last := all[len(all)-1]; last.Type != "STOP_LOSS" || last.TrailingDelta != 200 || binance.NodeID(last.ClientOrderID) != to.ClientOrderID {
		t.Errorf("binance holds %+v after the trail's modify, want a STOP_LOSS with trailingDelta 200", last)
	}
	if r := rejected(t, vn.c, modifyCmd("bn", to.OrderID, func(c *command.Command) { c.TrailPercent = testkit.D("0.005") }), "venue_rejected"); r.Reason == "" {
		t.Error("a trail binance cannot carry was not refused with a reason")
	}

	held := order("bn", "BTCUSDT", command.Sell, command.Stop, "0.01", "")
	held.StopPrice = testkit.D("59500")
	h := accepted(t, vn.c, held)
	before := vn.fake.Requests("POST /api/v3/order/cancelReplace") + vn.fake.Requests("POST /api/v3/order") + vn.fake.Requests("DELETE /api/v3/order")
	m = accepted(t, vn.c, modifyCmd("bn", h.OrderID, func(c *command.Command) { c.StopPrice = testkit.D("59200") }))
	if !m.Order.StopPrice.Equal(testkit.D("59200")) || m.Order.VenueOrderID != "" {
		t.Errorf("the held trigger after the modify: %+v", m.Order)
	}
	if after := vn.fake.Requests("POST /api/v3/order/cancelReplace") + vn.fake.Requests("POST /api/v3/order") + vn.fake.Requests("DELETE /api/v3/order"); after != before {
		t.Errorf("moving a held trigger sent %d requests to the venue", after-before)
	}
	vn.srv.Restart(t)
	vn.c = vn.srv.Client()
	vn.waitSynced(t, "bn")
	vn.arm(t, "bn", time.Hour)
	if x, _ := openIn(vn.venue(t, "bn"), h.OrderID); !x.StopPrice.Equal(testkit.D("59200")) {
		t.Fatalf("after a restart the held trigger is %+v", x)
	}
	vn.fake.SetPrice("BTCUSDT", "59300.00") // through the old stop, not the new one
	vn.waitMark(t, "59300")
	if n := len(fireOrders(vn.fake, h.ClientOrderID)); n != 0 {
		t.Fatalf("fired %d orders at the old stop", n)
	}
	vn.fake.SetPrice("BTCUSDT", "59100.00")
	waitFor(t, "fired at the new stop", func() bool { return len(fireOrders(vn.fake, h.ClientOrderID)) == 1 })
}
