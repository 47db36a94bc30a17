package main

import (
	"context"
	"testing"
	"time"

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
	if testing.Short() {
		t.Skip("starts real node processes")
	}
	vp := newVenueProject(t)
	proc, c, _ := vp.start(t)
	ctx := context.Background()
	if _, err := c.Arm(ctx, "bn", time.Hour, "bn", vp.operator); err != nil {
		t.Fatal(err)
	}
	stop, err := nodetest.Send(ctx, c, command.NewEnvelope(command.Command{Verb: command.SubmitOrder, Venue: "bn", Symbol: "BTCUSDT",
		Side: command.Buy, Type: command.Stop, Quantity: decimalText("0.02"), StopPrice: decimalText("61000")}, "a stop the node holds"), 10*time.Second)
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
	if err := proc.Process.Kill(); err != nil { // SIGKILL, the fired order's answer held back
		t.Fatal(err)
	}
	proc.Wait() //nolint:errcheck // killed
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
	deadline := time.Now().Add(15 * time.Second)
	for {
		trigger, fired := status()
		if trigger == node.EventCanceled && fired == node.EventFilled {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the crash the trigger is %s and its fired order %s\n%s", trigger, fired, log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := c.Arm(ctx, "bn", time.Hour, "bn", vp.operator); err != nil {
		t.Fatal(err)
	}
	vp.fake.SetPrice("BTCUSDT", "61200.00") // still through the stop, armed: nothing fires again
	deadline = time.Now().Add(15 * time.Second)
	for {
		snap, err := c.Snapshot(ctx, "bn", 0)
		if err == nil && snap.Venues[0].Marks["BTCUSDT"].Equal(decimalText("61200")) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the node never read the new mark: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
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
