package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"wicket/internal/testkit"
	"wicket/node/command"
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
