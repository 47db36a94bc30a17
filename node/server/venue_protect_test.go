package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/alpaca/alpacafake"
	"wicket/node/binance"
	"wicket/node/binance/binancefake"
	"wicket/node/command"
	"wicket/node/nodetest"
	"wicket/node/venuerig"
)

func bnVenue(f *binancefake.Fake) venuerig.Venue { return binanceVenue("bn", "testnet", true, f) }

// ocoCmd is a sell oco on BTCUSDT (mark 60000): a take-profit at take, a
// stop at stop with its limit.
func ocoCmd(qty, take, stop, limit string) command.Command {
	c := order("bn", "BTCUSDT", command.Sell, command.OCO, qty, take)
	c.StopPrice, c.LimitPrice = testkit.D(stop), testkit.D(limit)
	return c
}

// nodeOrder is order id's state in the node's snapshot (its events and
// open orders), with its latest note.
func (vn *venueNode) nodeOrder(t testing.TB, id string) (node.OrderStatus, string) {
	t.Helper()
	return vn.nodeOrderAt(t, "bn", id)
}

// nodeOrderAt is nodeOrder at venue name.
func (vn *venueNode) nodeOrderAt(t testing.TB, name, id string) (node.OrderStatus, string) {
	t.Helper()
	snap, err := vn.c.Snapshot(context.Background(), name, 200)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range snap.Venues[0].OpenOrders {
		if o.ID == id {
			return o.Status, o.Note
		}
	}
	var st node.OrderStatus
	var note string
	for _, ev := range snap.Events {
		if ev.OrderID != id {
			continue
		}
		switch ev.Kind {
		case node.EventFilled:
			st = node.OrderFilled // the last fill of an order no longer open filled it
		case node.EventCanceled:
			st, note = node.OrderCanceled, ev.Note
		case node.EventFailed:
			st, note = node.OrderFailed, ev.Note
		}
	}
	return st, note
}

// TestProtectVenueOCOIsOneOrderList: confirming an oco at a Binance venue
// sends one orderList (and no single order) and books two linked legs;
// when the take-profit fills the venue expires the stop and the node
// follows; cancel_order on one leg of another oco cancels both.
func TestProtectVenueOCOIsOneOrderList(t *testing.T) {
	vn := startVenueNode(t, bnVenue)
	vn.arm(t, "bn", time.Hour)
	out := accepted(t, vn.c, ocoCmd("0.02", "60600", "59400", "59300"))
	if len(out.OrderIDs) != 2 || !strings.Contains(out.Detail, "one leg cancels the other") {
		t.Fatalf("oco: %+v", out)
	}
	if n, m := vn.fake.Requests("POST /api/v3/orderList/oco"), vn.fake.Requests("POST /api/v3/order"); n != 1 || m != 0 {
		t.Errorf("the oco sent %d order lists and %d single orders, want 1 and 0", n, m)
	}
	take, stop := out.OrderIDs[0], out.OrderIDs[1]
	for _, id := range out.OrderIDs {
		if st, _ := vn.nodeOrder(t, id); st != node.OrderOpen {
			t.Errorf("leg %s is %s, want open", id, st)
		}
	}
	kinds := map[string]string{}
	for _, o := range vn.fake.Orders() {
		kinds[binance.NodeID(o.ClientOrderID)] = o.Type
	}
	if kinds[out.ClientOrderID] != "LIMIT_MAKER" || kinds[out.ClientOrderID+node.StopLegSuffix] != "STOP_LOSS_LIMIT" {
		t.Errorf("the venue holds %v", kinds)
	}
	vn.fake.SetPrice("BTCUSDT", "60600.00")
	waitFor(t, "the take-profit filled and the stop expired", func() bool {
		a, _ := vn.nodeOrder(t, take)
		b, _ := vn.nodeOrder(t, stop)
		return a == node.OrderFilled && b == node.OrderCanceled
	})
	vn.fake.SetPrice("BTCUSDT", "60000.00")
	vn.waitMark(t, "60000")

	two := accepted(t, vn.c, ocoCmd("0.01", "60700", "59400", "59300")) // clear of a late 60600 mark under load
	can := accepted(t, vn.c, command.Command{Verb: command.CancelOrder, Venue: "bn", OrderID: two.OrderIDs[1]})
	if len(can.Canceled) != 2 || !strings.Contains(can.Detail, "canceled group "+two.OrderIDs[0]) {
		t.Errorf("cancel of one leg: %+v", can)
	}
	for _, o := range vn.fake.Orders() {
		if strings.HasPrefix(binance.NodeID(o.ClientOrderID), two.ClientOrderID) && o.Status != "CANCELED" {
			t.Errorf("leg %s at the venue is %s", o.ClientOrderID, o.Status)
		}
	}
	// A stop_limit is the venue's own STOP_LOSS_LIMIT.
	sl := order("bn", "BTCUSDT", command.Sell, command.StopLimit, "0.01", "")
	sl.StopPrice, sl.LimitPrice = testkit.D("59000"), testkit.D("58900")
	o := accepted(t, vn.c, sl)
	if o.Order.VenueOrderID == "" || vn.fake.Orders()[len(vn.fake.Orders())-1].Type != "STOP_LOSS_LIMIT" {
		t.Errorf("stop_limit: %+v", o.Order)
	}
}

// TestProtectVenueOrphanedLegFound: a venue that leaves an oco's stop
// working after its take-profit filled — seen live, or found after a
// restart — has the orphan canceled by the node, with the reason.
func TestProtectVenueOrphanedLegFound(t *testing.T) {
	polls := make(chan time.Time) // never ticks: no REST polls while the stream is down
	vn := startVenueNode(t, bnVenue, nodetest.WithOrderPolls(polls))
	vn.arm(t, "bn", time.Hour)
	vn.fake.LeaveLinked(true)
	out := accepted(t, vn.c, ocoCmd("0.02", "60600", "59400", "59300"))
	vn.fake.SetPrice("BTCUSDT", "60600.00") // live: the fill is streamed, the node checks the stop
	waitFor(t, "the orphan canceled", func() bool { st, _ := vn.nodeOrder(t, out.OrderIDs[1]); return st == node.OrderCanceled })
	if _, note := vn.nodeOrder(t, out.OrderIDs[1]); !strings.Contains(note, "orphaned leg") || !strings.Contains(note, "left this one open") {
		t.Errorf("the orphan's note: %q", note)
	}
	vn.fake.SetPrice("BTCUSDT", "60000.00")
	vn.waitMark(t, "60000")

	// Down: the stream is refused, so the fill is not seen until the restart's reconciliation.
	two := accepted(t, vn.c, ocoCmd("0.01", "60600", "59400", "59300"))
	vn.fake.RefuseStreams(503, -1001, "Internal error; unable to process your request. Please try again.")
	vn.fake.DropStreams()
	waitFor(t, "the stream down", func() bool { return vn.venue(t, "bn").Connection == "disconnected" })
	vn.fake.SetPrice("BTCUSDT", "60600.00")
	if st, _ := vn.nodeOrder(t, two.OrderIDs[1]); st != node.OrderOpen {
		t.Fatalf("with the stream down the stop is %s", st)
	}
	vn.fake.RefuseStreams(0, 0, "")
	vn.srv.Restart(t)
	vn.c = vn.srv.Client()
	waitFor(t, "the orphan found after the restart", func() bool { st, _ := vn.nodeOrder(t, two.OrderIDs[1]); return st == node.OrderCanceled })
	if _, note := vn.nodeOrder(t, two.OrderIDs[1]); !strings.Contains(note, "orphaned leg") || !strings.Contains(note, "reconciliation") {
		t.Errorf("the orphan's note after the restart: %q", note)
	}
	for _, o := range vn.fake.Orders() {
		if binance.NodeID(o.ClientOrderID) == two.ClientOrderID+node.StopLegSuffix && o.Status != "CANCELED" {
			t.Errorf("the orphan at the venue is %s", o.Status)
		}
	}
}

// fireOrders lists the venue's orders fired from trigger cid.
func fireOrders(f *binancefake.Fake, cid string) []binancefake.Order {
	var out []binancefake.Order
	for _, o := range f.Orders() {
		if binance.NodeID(o.ClientOrderID) == cid+node.FireSuffix {
			out = append(out, o)
		}
	}
	return out
}

// waitMark waits until the node has applied the venue's mark m (the
// triggers are checked in the same step).
func (vn *venueNode) waitMark(t testing.TB, m string) {
	t.Helper()
	waitFor(t, "mark "+m, func() bool { return vn.venue(t, "bn").Marks["BTCUSDT"].Equal(testkit.D(m)) })
}

// TestTriggerHeldByTheNode: Binance spot holds no stop-market, so the node
// does: journaled and kept across a restart, never fired while the venue
// is disarmed, fired once when armed (one market order under the
// trigger's id + -fire), never again.
func TestTriggerHeldByTheNode(t *testing.T) {
	vn := startVenueNode(t, bnVenue)
	vn.arm(t, "bn", time.Hour)
	stop := order("bn", "BTCUSDT", command.Sell, command.Stop, "0.02", "")
	stop.StopPrice = testkit.D("59000")
	out := accepted(t, vn.c, stop)
	if out.Order.Status != node.OrderOpen || out.Order.VenueOrderID != "" || !strings.Contains(out.Detail, "held by the node") || len(vn.fake.Orders()) != 0 {
		t.Fatalf("stop: %+v; the venue holds %d orders", out, len(vn.fake.Orders()))
	}
	vn.srv.Restart(t) // disarmed by the restart; the trigger is kept
	vn.c = vn.srv.Client()
	vn.waitSynced(t, "bn")
	if st, note := vn.nodeOrder(t, out.OrderID); st != node.OrderOpen || !strings.Contains(note, "held by the node") {
		t.Fatalf("after a restart the stop is %s %q", st, note)
	}
	vn.fake.SetPrice("BTCUSDT", "58900.00")
	vn.waitMark(t, "58900")
	if n := len(fireOrders(vn.fake, out.ClientOrderID)); n != 0 {
		t.Fatalf("fired %d orders while disarmed", n)
	}
	vn.arm(t, "bn", time.Hour)
	waitFor(t, "the trigger fired and its order filled", func() bool {
		st, _ := vn.nodeOrder(t, out.OrderID)
		return st == node.OrderCanceled && len(fireOrders(vn.fake, out.ClientOrderID)) == 1 && fireOrders(vn.fake, out.ClientOrderID)[0].Status == "FILLED"
	})
	if _, note := vn.nodeOrder(t, out.OrderID); !strings.Contains(note, "triggered at mark 58900") {
		t.Errorf("the trigger's note: %q", note)
	}
	if f := fireOrders(vn.fake, out.ClientOrderID)[0]; f.Type != "MARKET" || f.Side != "SELL" || !f.Quantity.Equal(testkit.D("0.02")) {
		t.Errorf("the fired order: %+v", f)
	}
	vn.fake.SetPrice("BTCUSDT", "58800.00")
	vn.waitMark(t, "58800")
	vn.srv.Restart(t)
	vn.c = vn.srv.Client()
	vn.waitSynced(t, "bn")
	vn.arm(t, "bn", time.Hour)
	vn.fake.SetPrice("BTCUSDT", "58700.00")
	vn.waitMark(t, "58700")
	if n := len(fireOrders(vn.fake, out.ClientOrderID)); n != 1 {
		t.Errorf("the trigger fired %d orders, want one", n)
	}
}

// TestTriggerFireSurvivesADeadNode: a fire is committed before it is sent.
// A node that dies after sending it finds the order at its restart (by the
// derived id) and adopts it; one that died before the venue took it proves
// it absent and marks it failed — in neither case is it sent again, and
// the trigger stays fired.
func TestTriggerFireSurvivesADeadNode(t *testing.T) {
	vn := startVenueNode(t, bnVenue)
	vn.arm(t, "bn", time.Hour)
	place := func(stopAt string) node.Outcome {
		c := order("bn", "BTCUSDT", command.Sell, command.Stop, "0.01", "")
		c.StopPrice = testkit.D(stopAt)
		return accepted(t, vn.c, c)
	}
	sent := place("59000")  // its fire lands, the answer is lost
	never := place("58500") // its fire never reaches the venue
	vn.fake.DropStreams()
	vn.fake.RefuseStreams(503, -1001, "Internal error; unable to process your request. Please try again.")
	// A fire is journaled on the fold and sent from the venue's lane, so
	// each wait is for the venue to have seen the fire's request, not only
	// for the trigger to show fired.
	posts := func() int { return vn.fake.Requests("POST /api/v3/order") }
	before := posts()
	vn.fake.DropResponses("/api/v3/order", 1)
	vn.fake.SetPrice("BTCUSDT", "58900.00")
	waitFor(t, "the first fire pending", func() bool {
		st, _ := vn.nodeOrder(t, sent.OrderID)
		return st == node.OrderCanceled && posts() == before+1
	})
	vn.fake.LoseRequests("/api/v3/order", 1)
	vn.fake.SetPrice("BTCUSDT", "58400.00")
	waitFor(t, "the second fire pending", func() bool {
		st, _ := vn.nodeOrder(t, never.OrderID)
		return st == node.OrderCanceled && posts() == before+2
	})
	vn.fake.RefuseStreams(0, 0, "")
	vn.srv.Restart(t) // as a node killed with the fires pending
	vn.c = vn.srv.Client()
	vn.waitSynced(t, "bn")
	fired := func(cid string) node.OrderStatus {
		snap, _ := vn.c.Snapshot(context.Background(), "bn", 200)
		var st node.OrderStatus
		for _, ev := range snap.Events {
			if ev.ClientOrderID == cid+node.FireSuffix {
				switch ev.Kind {
				case node.EventFilled:
					st = node.OrderFilled
				case node.EventFailed:
					st = node.OrderFailed
				}
			}
		}
		return st
	}
	waitFor(t, "the landed fire adopted, the lost one failed", func() bool {
		return fired(sent.ClientOrderID) == node.OrderFilled && fired(never.ClientOrderID) == node.OrderFailed
	})
	vn.arm(t, "bn", time.Hour)
	vn.fake.SetPrice("BTCUSDT", "58300.00")
	vn.waitMark(t, "58300")
	if a, b := len(fireOrders(vn.fake, sent.ClientOrderID)), len(fireOrders(vn.fake, never.ClientOrderID)); a != 1 || b != 0 {
		t.Errorf("the venue holds %d and %d fired orders, want 1 and 0 (never resent)", a, b)
	}
}

// startAlpacaNode is a node with an armed alpaca venue on alpacafake
// trading SPY at 500 (and BTC-USD).
func startAlpacaNode(t testing.TB) (*venueNode, *alpacafake.Fake) {
	t.Helper()
	f := venuerig.Alpaca(t, "100000000", "SPY", "BTC/USD")
	return startAlpacaVenue(t, f, true, "SPY", "BTC-USD"), f
}

// TestProtectVenueAlpacaOCO: at Alpaca an oco is one order with
// order_class oco, its stop child booked under the node's leg id; a stop
// and a trailing stop are Alpaca's own types; a stop on a crypto pair is
// refused with what Alpaca takes.
func TestProtectVenueAlpacaOCO(t *testing.T) {
	vn, f := startAlpacaNode(t)
	c := order("al", "SPY", command.Sell, command.OCO, "2", "505")
	c.StopPrice = testkit.D("495")
	out := accepted(t, vn.c, c)
	if len(out.OrderIDs) != 2 || f.Requests("POST /v2/orders") != 1 {
		t.Fatalf("oco: %+v; %d requests", out, f.Requests("POST /v2/orders"))
	}
	if o := f.Orders(); len(o) != 2 || o[0].Class != "oco" || o[1].Parent != o[0].ID || o[1].Type != "stop" {
		t.Errorf("alpaca holds %+v", o)
	}
	snap := snapshot(t, vn.c)
	legs := map[string]node.Order{}
	for _, o := range venueOf(t, snap, "al").OpenOrders {
		legs[o.ID] = o
	}
	stopLeg := legs[out.OrderIDs[1]]
	if stopLeg.ClientOrderID != out.ClientOrderID+node.StopLegSuffix || stopLeg.VenueOrderID != f.Orders()[1].ID || stopLeg.Group != out.OrderIDs[0] {
		t.Errorf("the stop leg in the node: %+v", stopLeg)
	}
	can := accepted(t, vn.c, command.Command{Verb: command.CancelOrder, Venue: "al", OrderID: out.OrderIDs[0]})
	if len(can.Canceled) != 2 {
		t.Errorf("group cancel: %+v", can)
	}
	for _, o := range f.Orders() {
		if o.Status != "canceled" {
			t.Errorf("after the group cancel alpaca holds %s as %s", o.ID, o.Status)
		}
	}
	trail := order("al", "SPY", command.Sell, command.TrailingStop, "1", "")
	trail.TrailPercent = testkit.D("2")
	if o := accepted(t, vn.c, trail); f.Orders()[len(f.Orders())-1].Type != "trailing_stop" || o.Order.VenueOrderID == "" {
		t.Errorf("trailing stop: %+v", o.Order)
	}
	bad := order("al", "BTC-USD", command.Sell, command.Stop, "0.01", "")
	bad.StopPrice = testkit.D("59000")
	if r := rejected(t, vn.c, bad, "unsupported_order_type"); !strings.Contains(r.Reason, "use a stop_limit") {
		t.Errorf("a crypto stop: %q", r.Reason)
	}
}

// TestProtectVenueLostOCOAnswerIsReconciled: an orderList whose answer is
// lost leaves both legs pending, never resent; reconciliation finds each
// leg at the venue by its own client order id and adopts it.
func TestProtectVenueLostOCOAnswerIsReconciled(t *testing.T) {
	vn := startVenueNode(t, bnVenue)
	vn.arm(t, "bn", time.Hour)
	vn.fake.RefuseStreams(503, -1001, "Internal error; unable to process your request. Please try again.")
	vn.fake.DropStreams() // no stream report: only the lookups by client order id find the legs
	waitFor(t, "the stream down", func() bool { return vn.venue(t, "bn").Connection == "disconnected" })
	vn.fake.DropResponses("/api/v3/orderList/oco", 1)
	out := sendAny(t, vn.c, ocoCmd("0.02", "60600", "59400", "59300"))
	if out.Status != node.Pending || len(out.OrderIDs) != 2 {
		t.Fatalf("a lost oco answer: %+v", out)
	}
	waitFor(t, "both legs adopted", func() bool {
		a, _ := vn.nodeOrder(t, out.OrderIDs[0])
		b, _ := vn.nodeOrder(t, out.OrderIDs[1])
		return a == node.OrderOpen && b == node.OrderOpen
	})
	snap := snapshot(t, vn.c)
	for _, o := range venueOf(t, snap, "bn").OpenOrders {
		if o.VenueOrderID == "" {
			t.Errorf("leg %s adopted without its venue id: %+v", o.ID, o)
		}
	}
	if n := vn.fake.Requests("POST /api/v3/orderList/oco"); n != 1 || len(vn.fake.Orders()) != 2 {
		t.Errorf("%d order lists sent, the venue holds %d orders; want 1 and 2", n, len(vn.fake.Orders()))
	}
}

// TestTriggerFireIDIsReserved: the id a held trigger fires under is its
// own + -fire; no order may take it, before or after the trigger.
func TestTriggerFireIDIsReserved(t *testing.T) {
	vn := startVenueNode(t, bnVenue)
	vn.arm(t, "bn", time.Hour)
	stop := order("bn", "BTCUSDT", command.Sell, command.Stop, "0.01", "")
	stop.StopPrice, stop.ClientOrderID = testkit.D("59000"), "my-stop-1"
	accepted(t, vn.c, stop)
	squat := order("bn", "BTCUSDT", command.Buy, command.Limit, "0.01", "59000")
	squat.ClientOrderID = "my-stop-1" + node.FireSuffix
	if r := rejected(t, vn.c, squat, "duplicate_client_order_id"); !strings.Contains(r.Reason, "the id the node fires a stop it holds under") {
		t.Errorf("an order on a trigger's fire id: %q", r.Reason)
	}
	first := order("bn", "BTCUSDT", command.Buy, command.Limit, "0.01", "59000")
	first.ClientOrderID = "my-stop-2" + node.FireSuffix
	accepted(t, vn.c, first)
	late := order("bn", "BTCUSDT", command.Sell, command.Stop, "0.01", "")
	late.StopPrice, late.ClientOrderID = testkit.D("59000"), "my-stop-2"
	if r := rejected(t, vn.c, late, "duplicate_client_order_id"); !strings.Contains(r.Reason, "would fire it as my-stop-2-fire") {
		t.Errorf("a trigger whose fire id is taken: %q", r.Reason)
	}
	// A held trigger is modified and canceled at the node alone.
	if r := send(t, vn.c, command.Command{Verb: command.Modify, Venue: "bn", ClientOrderID: "my-stop-1", Quantity: testkit.D("0.02")}, ""); r.Status != node.Accepted ||
		!r.Order.Quantity.Equal(testkit.D("0.02")) || vn.fake.Requests("POST /api/v3/order/cancelReplace") != 0 {
		t.Errorf("modify of a held trigger: %+v", r)
	}
	can := accepted(t, vn.c, command.Command{Verb: command.CancelOrder, Venue: "bn", ClientOrderID: "my-stop-1"})
	if can.Order.Status != node.OrderCanceled || vn.fake.Requests("DELETE /api/v3/order") != 0 {
		t.Errorf("cancel of a held trigger: %+v; %d cancels sent to the venue", can.Order, vn.fake.Requests("DELETE /api/v3/order"))
	}
}

// TestTriggerTrailingHeldByTheNode: a trailing stop by amount (not a
// trailingDelta form) is trailed by the node on the venue's marks, its
// moves journaled so a restart keeps them, and fired once through it.
func TestTriggerTrailingHeldByTheNode(t *testing.T) {
	vn := startVenueNode(t, bnVenue)
	vn.arm(t, "bn", time.Hour)
	c := order("bn", "BTCUSDT", command.Sell, command.TrailingStop, "0.02", "")
	c.TrailAmount = testkit.D("500")
	out := accepted(t, vn.c, c)
	if o := out.Order; !o.TrailBest.Equal(testkit.D("60000")) || !o.StopPrice.Equal(testkit.D("59500")) || o.VenueOrderID != "" {
		t.Fatalf("trailing stop: %+v", o)
	}
	open := func() node.Order {
		for _, o := range vn.venue(t, "bn").OpenOrders {
			if o.ID == out.OrderID {
				return o
			}
		}
		return node.Order{}
	}
	vn.fake.SetPrice("BTCUSDT", "61000.00")
	waitFor(t, "the stop trailed to 60500", func() bool { return open().StopPrice.Equal(testkit.D("60500")) })
	vn.srv.Restart(t)
	vn.c = vn.srv.Client()
	vn.waitSynced(t, "bn")
	vn.arm(t, "bn", time.Hour)
	if o := open(); !o.TrailBest.Equal(testkit.D("61000")) || !o.StopPrice.Equal(testkit.D("60500")) {
		t.Fatalf("after a restart: %+v", o)
	}
	vn.fake.SetPrice("BTCUSDT", "60400.00")
	waitFor(t, "fired", func() bool {
		return len(fireOrders(vn.fake, out.ClientOrderID)) == 1 && fireOrders(vn.fake, out.ClientOrderID)[0].Status == "FILLED"
	})
	vn.fake.SetPrice("BTCUSDT", "60300.00")
	vn.waitMark(t, "60300")
	if n := len(fireOrders(vn.fake, out.ClientOrderID)); n != 1 || len(vn.fake.Orders()) != 1 {
		t.Errorf("%d fired orders, %d at the venue; want one", n, len(vn.fake.Orders()))
	}
}
