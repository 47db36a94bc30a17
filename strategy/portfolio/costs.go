package portfolio

import (
	"math"
	"slices"
	"time"
	"wicket/strategy/backtest"
	"wicket/strategy/book"
)

// setOptions checks the run's costs and options and sets them.
func (e *engine) setOptions(c backtest.Costs, opts Options) error {
	switch {
	case c.Leverage != 0 || c.MaintenanceMargin != 0:
		return invalidf("leverage and isolated margin are for a backtest over one series: a portfolio is one cash account sized by weights, with no per-position margin to liquidate; leave leverage out")
	}
	if err := c.Check(); err != nil {
		return err
	}
	e.volPct, e.volDrop, e.volOff = c.MaxVolumePct/100, c.VolumeCap == backtest.VolumeDrop, c.VolumeCap == backtest.VolumeOff
	e.noVol, e.maxAsset, e.maxAt = make([]bool, len(e.assets)), -1, -1
	for a := range e.assets {
		e.noVol[a] = !slices.ContainsFunc(e.assets[a].Volume, func(v float64) bool { return v != 0 && !math.IsNaN(v) })
	}
	e.charged = c.Charged()
	e.record = opts.RecordFills
	e.hold = opts.RecordHoldings
	e.borrow = c.BorrowRate / (365 * 86400)
	if c.Funding {
		if len(opts.Funding) > len(e.assets) {
			return invalidf("funding for %d assets in a portfolio of %d", len(opts.Funding), len(e.assets))
		}
		for a, rates := range opts.Funding {
			if err := (backtest.Costs{FundingRates: rates}).Check(); err != nil {
				return invalidf("%s: %v", e.assets[a].Series, err)
			}
		}
		e.funding = opts.Funding
		e.fundNext = make([]int, len(opts.Funding))
	}
	if !opts.TradeFrom.IsZero() {
		t := e.assets[0].Time
		from := opts.TradeFrom.Unix()
		e.start, _ = slices.BinarySearch(t, from)
		if e.start == len(t) {
			return invalidf("trade_from %s is after the last bar (%s): nothing to trade", opts.TradeFrom.UTC().Format(time.RFC3339), timeString(t[len(t)-1]))
		}
	}
	return nil
}

// fund charges asset a's funding settlements in the span of its bar i
// (up to its own next bar: book.FundingEnd, the single-series rule) at
// its open o, on the position then held.
func (e *engine) fund(a, i int, o float64) {
	if a >= len(e.funding) {
		return
	}
	b := &e.assets[a]
	t := b.Time
	j := i + 1
	for j < len(t) && !has(b, j) {
		j++
	}
	var next int64
	if j < len(t) {
		next = t[j]
	}
	end := book.FundingEnd(t[i], next, j < len(t), e.barSecs)
	rates := e.funding[a]
	k := e.fundNext[a]
	for k < len(rates) && rates[k].Time < end {
		if rates[k].Time >= t[i] && e.pos[a].Qty != 0 {
			amt := e.pos[a].Qty * o * rates[k].Rate
			e.charge(a, i, amt)
			e.fundPaid += amt
		}
		k++
	}
	e.fundNext[a] = k
}

// borrowAt charges the borrow of every short held at bar i's close.
func (e *engine) borrowAt(i int) {
	if e.borrow == 0 {
		return
	}
	dt := e.barSecs
	if i > 0 {
		dt = e.assets[0].Time[i] - e.assets[0].Time[i-1]
	}
	for a := range e.pos {
		if q := e.pos[a].Qty; q < 0 {
			amt := -q * e.mark[a] * e.borrow * float64(dt)
			e.charge(a, i, amt)
			e.borrowPaid += amt
		}
	}
}

// charge charges amt (a cost > 0) to asset a's position at bar i
// through the book.
func (e *engine) charge(a, i int, amt float64) {
	e.acct.Charge(&e.pos[a], amt)
	if e.hold {
		e.events = append(e.events, event{bar: i, asset: a, qty: e.pos[a].Qty, flow: -amt})
	}
}
