package main

import (
	"context"
	"testing"
	"time"

	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/binance"
	"wicket/node/command"
	"wicket/node/nodetest"
)

// TestVenueTriggerFiresOnceAcrossSIGKILL: Binance spot holds no
// stop-market, so the node holds the trigger. The node is killed with
// SIGKILL once the trigger has fired and Binance has taken the market
// order but before its answer reaches the node; the restarted node adopts
// that order by the id derived from the trigger, and never fires again.
func TestVenueTriggerFiresOnceAcrossSIGKILL(t *testing.T) {
	vp, proc, c := startArmedVenueNode(t)
	ctx := context.Background()
	stop, err := nodetest.Send(ctx, c, command.NewEnvelope(command.Command{Verb: command.SubmitOrder, Venue: "bn", Symbol: "BTCUSDT",
		Side: command.Buy, Type: command.Stop, Quantity: testkit.D("0.02"), StopPrice: testkit.D("61000")}, "a stop the node holds"), 10*time.Second)
	if err != nil || stop.Order == nil || stop.Order.Status != node.OrderOpen || stop.Order.VenueOrderID != "" || len(vp.fake.Orders()) != 0 {
		t.Fatalf("stop: %+v, %v", stop, err)
	}
	fire := stop.ClientOrderID + node.FireSuffix
	held, release := vp.fake.HoldResponses("/api/v3/order")
	defer release()
	vp.fake.SetPrice("BTCUSDT", "61100.00")
	select {
	case <-held:
	case <-time.After(15 * time.Second):
		t.Fatal("the trigger never fired")
	}
	kill(t, proc) // SIGKILL, the fired order's answer held back
	release()

	_, c, log := vp.start(t)
	status := func() (trigger, fired node.EventKind) {
		snap, err := c.Snapshot(ctx, "bn", 200)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range snap.Events {
			switch ev.ClientOrderID {
			case stop.ClientOrderID:
				trigger = ev.Kind
			case fire:
				fired = ev.Kind
			}
		}
		return trigger, fired
	}
	eventually(t, "the trigger canceled and its fired order filled", log, func() bool {
		trigger, fired := status()
		return trigger == node.EventCanceled && fired == node.EventFilled
	})
	if _, err := c.Arm(ctx, "bn", time.Hour, "bn", vp.operator); err != nil {
		t.Fatal(err)
	}
	vp.fake.SetPrice("BTCUSDT", "61200.00") // still through the stop, armed: nothing fires again
	eventually(t, "the node to read the new mark", log, func() bool {
		snap, err := c.Snapshot(ctx, "bn", 0)
		return err == nil && snap.Venues[0].Marks["BTCUSDT"].Equal(testkit.D("61200"))
	})
	n := 0
	for _, o := range vp.fake.Orders() {
		if binance.NodeID(o.ClientOrderID) == fire {
			n++
			if o.Type != "MARKET" || o.Side != "BUY" || o.Status != "FILLED" {
				t.Errorf("the fired order at the venue: %+v", o)
			}
		} else {
			t.Errorf("the venue holds an order the trigger did not fire: %+v", o)
		}
	}
	if n != 1 || vp.fake.Requests("POST /api/v3/order") != 1 {
		t.Errorf("the venue holds %d fired orders after %d submits, want 1 and 1", n, vp.fake.Requests("POST /api/v3/order"))
	}
}
