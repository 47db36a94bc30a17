package server_test

import (
	"context"
	"testing"
	"time"

	"wicket/node"
	"wicket/node/binance/binancefake"
	"wicket/node/command"
	"wicket/node/nodetest"
	"wicket/node/venuerig"
)

// fillPrices are the prices of the order's fill events, oldest first.
func fillPrices(t *testing.T, c *node.Client, venue, orderID string) []string {
	t.Helper()
	snap, err := c.Snapshot(context.Background(), venue, 100)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ev := range snap.Events {
		if ev.Kind == node.EventFilled && ev.OrderID == orderID {
			out = append(out, ev.Price.String())
		}
	}
	return out
}

// TestFillPricesAreTheVenuesOwn: two fills at two prices make an average
// that does not terminate (59000.0857142…); each fill is booked at its own
// price, exactly: the one the stream reports with its price, and the one
// read over REST while the stream is down (from Binance's cumulative quote
// amount, never from a rounded average).
func TestFillPricesAreTheVenuesOwn(t *testing.T) {
	polls := make(chan time.Time)
	vn := startVenueNode(t, func(f *binancefake.Fake) venuerig.Venue { return binanceVenue("bn", "testnet", true, f) },
		nodetest.WithOrderPolls(polls))
	vn.arm(t, "bn", time.Hour)
	lim := accepted(t, vn.c, order("bn", "BTCUSDT", command.Buy, command.Limit, "0.007", "59000.10"))
	id := vn.fake.Orders()[0].ID
	vn.fake.FillPartAt(id, "0.006", "59000.10")
	waitFor(t, "the first fill from the stream", func() bool { return len(fillPrices(t, vn.c, "bn", lim.OrderID)) == 1 })
	vn.fake.RefuseStreams(503, -1008, "overloaded")
	vn.fake.DropStreams()
	waitFor(t, "the stream down", func() bool { return vn.venue(t, "bn").Connection == "disconnected" })
	vn.fake.FillPartAt(id, "0.001", "59000.00")
	polls <- time.Now()
	waitFor(t, "the second fill over REST", func() bool { return len(fillPrices(t, vn.c, "bn", lim.OrderID)) == 2 })
	if got := fillPrices(t, vn.c, "bn", lim.OrderID); got[0] != "59000.1" || got[1] != "59000" {
		t.Errorf("fill prices %v, want [59000.1 59000]", got)
	}
	// The same through the stream alone: the second fill's report carries its own price.
	vn.fake.RefuseStreams(0, 0, "")
	waitFor(t, "the stream back", func() bool { return vn.venue(t, "bn").Connection == "connected" })
	lim2 := accepted(t, vn.c, order("bn", "BTCUSDT", command.Buy, command.Limit, "0.007", "59000.10"))
	id2 := vn.fake.Orders()[1].ID
	vn.fake.FillPartAt(id2, "0.006", "59000.10")
	vn.fake.FillPartAt(id2, "0.001", "59000.00")
	waitFor(t, "both fills from the stream", func() bool { return len(fillPrices(t, vn.c, "bn", lim2.OrderID)) == 2 })
	if got := fillPrices(t, vn.c, "bn", lim2.OrderID); got[0] != "59000.1" || got[1] != "59000" {
		t.Errorf("fill prices from the stream %v, want [59000.1 59000]", got)
	}
}

// TestAlpacaFillPricesAreTheVenuesOwn: Alpaca states an order's average
// rounded (499.98333333), and each trade update carries the fill's own
// price: the node books that one.
func TestAlpacaFillPricesAreTheVenuesOwn(t *testing.T) {
	f := venuerig.Alpaca(t, "50000", "SPY")
	vn := startAlpacaVenue(t, f, true, "SPY")
	lim := accepted(t, vn.c, order("al", "SPY", command.Buy, command.Limit, "3", "499.99"))
	f.FillPartAt(f.Orders()[0].ID, "1", "499.99")
	waitFor(t, "the first fill", func() bool { return len(fillPrices(t, vn.c, "al", lim.OrderID)) == 1 })
	f.FillPartAt(f.Orders()[0].ID, "2", "499.98")
	waitFor(t, "the second fill", func() bool { return len(fillPrices(t, vn.c, "al", lim.OrderID)) == 2 })
	if got := fillPrices(t, vn.c, "al", lim.OrderID); got[0] != "499.99" || got[1] != "499.98" {
		t.Errorf("fill prices %v, want [499.99 499.98]", got)
	}
}
