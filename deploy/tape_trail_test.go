package deploy

import (
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// smaTrail is the SMA crossover, half the equity, with a 0.4 % trailing
// stop: an exit the node carries as one trailing_stop order, placed once
// the entry has filled.
var smaTrail = strings.Replace(smaHalf, `"size": 0.5}`, `"size": 0.5, "trailing_stop": 0.004}`, 1)

// TestTapeTrailingStopForwardTestEqualsBacktest: a signals strategy whose
// exit is a trailing stop, deployed auto on paper on a node whose clock
// follows a recorded tape of 2,000 gapped 1m bars after a 100-bar
// warm-up. The backtest arms the trailing stop on the entry's bar from the
// entry's price (its fill at the next open, slippage included); the paper
// venue on the tape arms it there too, so its stop trails from the same
// price along the same path: every fill (bar, side, price to the cent,
// quantity, exit kind) and the equity at every close equal the
// backtest's, fees included, with trailing-stop exits and signal exits
// both reached often.
func TestTapeTrailingStopForwardTestEqualsBacktest(t *testing.T) {
	longForward(t)
	const warm, n = 100, 2000
	all := gappedTape(warm+n, 7, time.Date(2026, 3, 1, 22, 20, 0, 0, time.UTC))
	g := newTapeRig(t, all, warm, 0)
	d, err := g.r.Create(ctxT(t), Spec{Strategy: "sma_trail.star", Source: smaTrail, Series: symbol + "@1m", Venue: "paper",
		Mode: ModeAuto, Capital: decimal.NewFromInt(10000), Warmup: 60})
	if err != nil {
		t.Fatal(err)
	}
	g.play(t)
	g.equalsBacktest(t, d.ID, smaTrail, "trailing_stop", "")
}
