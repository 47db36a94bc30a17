package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/binance"
	"wicket/node/binance/binancefake"
	"wicket/node/command"
	"wicket/node/nodetest"
)

// atVenue lists the fake's orders under the node's client order id cid.
func atVenue(f *binancefake.Fake, cid string) []binancefake.Order {
	var out []binancefake.Order
	for _, o := range f.Orders() {
		if binance.NodeID(o.ClientOrderID) == cid {
			out = append(out, o)
		}
	}
	return out
}

// orderState is order id's status in the node (open orders, else its
// last event) and its note.
func orderState(t *testing.T, c *node.Client, id string) (node.OrderStatus, string) {
	t.Helper()
	snap, err := c.Snapshot(context.Background(), "bn", 500)
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
			st = node.OrderFilled
		case node.EventCanceled:
			st, note = node.OrderCanceled, ev.Note
		case node.EventFailed:
			st, note = node.OrderFailed, ev.Note
		}
	}
	return st, note
}

func bracketCommand(cid string) command.Command {
	return command.Command{Verb: command.SubmitOrder, Venue: "bn", Symbol: "BTCUSDT", Side: command.Buy, Type: command.Bracket,
		Quantity: testkit.D("0.02"), TakeProfit: testkit.D("60600"), StopPrice: testkit.D("59400"), LimitPrice: testkit.D("59300"), ClientOrderID: cid}
}

// TestVenueBracketExitsPlacedOnceAcrossSIGKILL: Binance takes a bracket's
// exits only once the entry has filled. The node is killed with SIGKILL
// after Binance filled the entry and before its answer reached the node,
// so before the exits were sent: the restarted node adopts the filled
// entry and sends the exits as one orderList, once. It is killed again
// after Binance took that list and before its answer arrived: the next
// node adopts both exits by their client order ids and sends nothing.
func TestVenueBracketExitsPlacedOnceAcrossSIGKILL(t *testing.T) {
	vp, proc, c := startArmedVenueNode(t)
	killed := make(chan struct{})
	first := proc
	vp.fake.OnOrder(func(binancefake.Order) { // the entry filled at binance, its answer lost
		first.Process.Kill() //nolint:errcheck // SIGKILL; the answer goes to a dead process
		first.Wait()         //nolint:errcheck // killed
		close(killed)
	})
	cid := "wk-0190f5a2-7c1e-7b3a-9d4e-00000000b0a1"
	held, release := vp.fake.HoldResponses("/api/v3/orderList/oco")
	defer release()
	if _, err := c.Submit(context.Background(), command.NewEnvelope(bracketCommand(cid), "crash test")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-killed:
	case <-time.After(15 * time.Second):
		t.Fatal("the entry never reached the venue")
	}
	vp.fake.OnOrder(nil)
	if n := vp.fake.Requests("POST /api/v3/orderList/oco"); n != 0 {
		t.Fatalf("%d order lists sent before the entry's answer", n)
	}

	proc, _, _ = vp.start(t) // adopts the entry, then sends the exits: the list's answer is held
	select {
	case <-held:
	case <-time.After(15 * time.Second):
		t.Fatal("the restarted node never sent the exits")
	}
	kill(t, proc) // binance holds the list; the node never heard
	release()

	_, c, log := vp.start(t)
	snap, err := c.Snapshot(context.Background(), "bn", 500)
	if err != nil {
		t.Fatal(err)
	}
	var tp, stop string
	for _, ev := range snap.Events {
		if ev.Kind == node.EventAccepted && ev.ClientOrderID == cid+node.TakeProfitLegSuffix {
			tp = ev.OrderID
		}
		if ev.Kind == node.EventAccepted && ev.ClientOrderID == cid+node.StopLegSuffix {
			stop = ev.OrderID
		}
	}
	eventually(t, "both exits adopted", log, func() bool {
		a, _ := orderState(t, c, tp)
		b, _ := orderState(t, c, stop)
		return a == node.OrderOpen && b == node.OrderOpen
	})
	if n, m := vp.fake.Requests("POST /api/v3/order"), vp.fake.Requests("POST /api/v3/orderList/oco"); n != 1 || m != 1 {
		t.Errorf("the venue was sent %d orders and %d order lists, want the entry and one list", n, m)
	}
	for suffix, typ := range map[string]string{node.TakeProfitLegSuffix: "LIMIT_MAKER", node.StopLegSuffix: "STOP_LOSS_LIMIT"} {
		if o := atVenue(vp.fake, cid+suffix); len(o) != 1 || o[0].Type != typ || !o[0].Quantity.Equal(testkit.D("0.02")) || o[0].Status != "NEW" {
			t.Errorf("exit %s at the venue: %+v", suffix, o)
		}
	}
	v, _ := c.Snapshot(context.Background(), "bn", 0)
	for _, p := range v.Venues[0].Positions {
		if p.Symbol == "BTCUSDT" && p.Unprotected {
			t.Errorf("the position is protected by the adopted stop, yet flagged: %+v", p)
		}
	}
}

// TestVenueBracketLostExitsFlagThePosition: the node sends the exits'
// orderList, the request is lost on its way (Binance never took it), and
// the node is killed with SIGKILL before it knew. The restarted node
// proves the exits absent by their client order ids, never resends them,
// and flags the position unprotected with the reason.
func TestVenueBracketLostExitsFlagThePosition(t *testing.T) {
	vp, proc, c := startArmedVenueNode(t)
	cid := "wk-0190f5a2-7c1e-7b3a-9d4e-00000000b0a2"
	vp.fake.LoseRequests("/api/v3/orderList/oco", 1)
	out, err := nodetest.Send(context.Background(), c, command.NewEnvelope(bracketCommand(cid), "crash test"), 10*time.Second)
	if err != nil || len(out.OrderIDs) != 3 {
		t.Fatalf("bracket: %+v %v", out, err)
	}
	eventually(t, "the lost list sent", &syncBuffer{}, func() bool { return vp.fake.Requests("POST /api/v3/orderList/oco") == 1 })
	kill(t, proc)

	_, c, log := vp.start(t)
	eventually(t, "the exits proved absent", log, func() bool {
		a, _ := orderState(t, c, out.OrderIDs[1])
		b, _ := orderState(t, c, out.OrderIDs[2])
		return a == node.OrderFailed && b == node.OrderFailed
	})
	snap, err := c.Snapshot(context.Background(), "bn", 0)
	if err != nil {
		t.Fatal(err)
	}
	var reason string
	for _, p := range snap.Venues[0].Positions {
		if p.Symbol == "BTCUSDT" && p.Unprotected {
			reason = p.UnprotectedReason
		}
	}
	if !strings.Contains(reason, out.OrderIDs[2]) || !strings.Contains(reason, "never resubmitted") {
		t.Errorf("the position's reason: %q\n%s", reason, log.String())
	}
	if n := vp.fake.Requests("POST /api/v3/orderList/oco"); n != 1 || len(atVenue(vp.fake, cid+node.StopLegSuffix)) != 0 {
		t.Errorf("%d order lists sent; the venue holds %d stops; want the one lost and none", n, len(atVenue(vp.fake, cid+node.StopLegSuffix)))
	}
}

// TestVenueOrphanCanceledOnceAcrossSIGKILL: an oco whose take-profit fills
// while Binance (a fault) leaves the stop working; the node reads the stop
// back to cancel it and is killed with SIGKILL before the cancel is sent.
// The restarted node finds the orphan at its reconciliation and cancels
// it, once, with the reason.
func TestVenueOrphanCanceledOnceAcrossSIGKILL(t *testing.T) {
	vp, proc, c := startArmedVenueNode(t)
	ctx := context.Background()
	buy := command.Command{Verb: command.SubmitOrder, Venue: "bn", Symbol: "BTCUSDT", Side: command.Buy, Type: command.Market, Quantity: testkit.D("0.02")}
	if _, err := nodetest.Send(ctx, c, command.NewEnvelope(buy, "the position"), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	oco := command.Command{Verb: command.SubmitOrder, Venue: "bn", Symbol: "BTCUSDT", Side: command.Sell, Type: command.OCO, Quantity: testkit.D("0.02"),
		Price: testkit.D("60600"), StopPrice: testkit.D("59400"), LimitPrice: testkit.D("59300")}
	out, err := nodetest.Send(ctx, c, command.NewEnvelope(oco, "its exits"), 10*time.Second)
	if err != nil || len(out.OrderIDs) != 2 {
		t.Fatalf("oco: %+v %v", out, err)
	}
	vp.fake.LeaveLinked(true)
	held, release := vp.fake.HoldResponses("/api/v3/order") // the node's read of the orphan, before its cancel
	defer release()
	vp.fake.SetPrice("BTCUSDT", "60600.00")
	select {
	case <-held:
	case <-time.After(15 * time.Second):
		t.Fatal("the node never read the orphan back")
	}
	kill(t, proc)
	release()
	if n := vp.fake.Requests("DELETE /api/v3/order"); n != 0 {
		t.Fatalf("%d cancels sent before the kill", n)
	}

	_, c, log := vp.start(t)
	eventually(t, "the orphan canceled", log, func() bool { st, _ := orderState(t, c, out.OrderIDs[1]); return st == node.OrderCanceled })
	if _, note := orderState(t, c, out.OrderIDs[1]); !strings.Contains(note, "orphaned leg") {
		t.Errorf("the orphan's note: %q", note)
	}
	if st, _ := orderState(t, c, out.OrderIDs[0]); st != node.OrderFilled {
		t.Errorf("the take-profit is %s", st)
	}
	stop := atVenue(vp.fake, out.ClientOrderID+node.StopLegSuffix)
	if len(stop) != 1 || stop[0].Status != "CANCELED" || vp.fake.Requests("DELETE /api/v3/order") != 1 {
		t.Errorf("the orphan at the venue: %+v after %d cancels, want canceled by one", stop, vp.fake.Requests("DELETE /api/v3/order"))
	}
}
