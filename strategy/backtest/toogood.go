package backtest

import (
	"fmt"
	"math"

	"wicket/strategy/robust"
)

// The "too good to be true" rule (docs/strategies.md, "Capacity" says the
// same): a result whose annualised Sharpe ratio is at least TooGoodSharpe
// is believed only when two other figures agree with it: at least
// TooGoodTrades closed round trips, and a deflated Sharpe ratio of at
// least TooGoodDSR (for a single backtest, one trial: the probabilistic
// Sharpe ratio of its per-bar returns against zero). When either
// disagrees, the result carries a note naming all three.
const (
	TooGoodSharpe = 3.0
	TooGoodTrades = 30
	TooGoodDSR    = 0.95
)

// TooGoodNote is the note the rule gives for an annualised Sharpe ratio,
// a count of closed trades and a DSR (NaN when unknown: then only the
// trades are judged); "" when the figures agree.
func TooGoodNote(sharpe float64, trades int, dsr float64) string {
	if !(sharpe >= TooGoodSharpe) || math.IsInf(sharpe, 0) {
		return ""
	}
	fewTrades, lowDSR := trades < TooGoodTrades, dsr < TooGoodDSR // NaN: not low
	if !fewTrades && !lowDSR {
		return ""
	}
	d := "undefined"
	if !math.IsNaN(dsr) {
		d = fmt.Sprintf("%.3f", dsr)
	}
	return fmt.Sprintf("too good to be true? an annualised Sharpe ratio of %.2f from %d closed trades with a DSR of %s: a Sharpe ratio of %v or more is believed only with at least %d trades and a DSR of at least %v; look for lookahead, a cost or capacity left out, or a fill the market would not give",
		sharpe, trades, d, TooGoodSharpe, TooGoodTrades, TooGoodDSR)
}

// singleDSR is a single run's deflated Sharpe ratio at one trial: the
// probabilistic Sharpe ratio of its per-bar returns against zero.
func singleDSR(mo Moments) float64 {
	if mo.T < 2 || !(mo.M2 > 0) {
		return math.NaN()
	}
	t := float64(mo.T)
	v := mo.M2 / t
	sd := math.Sqrt(mo.M2 / (t - 1))
	skew := mo.M3 / t / math.Pow(v, 1.5)
	kurt := mo.M4 / t / (v * v)
	return robust.PSR(mo.Mean/sd, 0, mo.T, skew, kurt)
}
