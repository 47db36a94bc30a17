package server_test

import (
	"context"
	"testing"
	"time"

	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/binance/binancefake"
	"wicket/node/command"
	"wicket/node/nodetest"
	"wicket/node/venuerig"
)

// TestStreamDownPollsWorkingOrders: while a venue's stream is down (here
// it is dropped, and every new subscription refused), the node reads its
// working orders over REST at each poll, so a resting order that fills
// meanwhile shows filled in the snapshot without the stream coming back.
func TestStreamDownPollsWorkingOrders(t *testing.T) {
	polls := make(chan time.Time)
	vn := startVenueNode(t, func(f *binancefake.Fake) venuerig.Venue { return binanceVenue("bn", "testnet", true, f) },
		nodetest.WithOrderPolls(polls))
	vn.arm(t, "bn", time.Hour)
	lim := accepted(t, vn.c, order("bn", "BTCUSDT", command.Buy, command.Limit, "0.01", "59000"))
	if lim.Order.Status != node.OrderOpen {
		t.Fatalf("limit: %+v", lim.Order)
	}
	vn.fake.RefuseStreams(410, -1099, "gone")
	vn.fake.DropStreams()
	waitFor(t, "the stream down", func() bool { return vn.venue(t, "bn").Connection == "disconnected" })
	vn.fake.Cross()
	polls <- time.Now()
	waitFor(t, "the fill read over REST", func() bool {
		v := vn.venue(t, "bn")
		return len(v.OpenOrders) == 0 && v.Connection == "disconnected"
	})
	snap, err := vn.c.Snapshot(context.Background(), "bn", 100)
	if err != nil {
		t.Fatal(err)
	}
	var fill *node.Event
	for i, ev := range snap.Events {
		if ev.Kind == node.EventFilled && ev.OrderID == lim.OrderID {
			fill = &snap.Events[i]
		}
	}
	if fill == nil || !fill.Quantity.Equal(testkit.D("0.01")) || !fill.Price.Equal(testkit.D("59000")) {
		t.Errorf("the fill read over REST: %+v", fill)
	}
	if vn.fake.Streams() != 0 {
		t.Errorf("the stream came back (%d connections), so the poll proved nothing", vn.fake.Streams())
	}
}
