// Package portfolio is the backtest engine of portfolio strategies:
// several assets traded from one cash account toward the target weights a
// strategy decides (strategy/script's signals(universe)), on a rebalance
// schedule.
//
// The calendar is the union of the assets' bar times, with no forward
// fill: an asset without a bar at a time cannot trade there (its target
// waits for its next bar), and its position is marked at its last close.
// A decision at a bar's close sizes each asset's target quantity on the
// equity at that close; the order fills at that asset's next bar's open
// (next_open, the backtest's rule) with the backtest's fee and slippage.
// The metrics are strategy/backtest's, computed by its code on the
// portfolio's equity curve and reported in its shape; money in a Result's
// JSON is decimal strings.
//
// Costs beyond fee and slippage (Options, strategy/backtest's Costs):
// perpetual funding per asset, charged at the asset's bar open on the
// position then held for every settlement up to the end of that bar's
// span, which runs to the asset's own next bar (so settlements in a gap
// of the asset's bars are charged before the gap, as in a single-series
// run: strategy/book's FundingEnd), and short borrow at
// cfg.Costs.BorrowRate, charged on each
// short asset's notional at its mark for the time since the previous
// calendar bar's close, over a 365-day year. The volume cap is the
// single-series run's, per asset: an order fills at most MaxVolumePct of
// its asset's bar volume, and with VolumeCarry the asset's target stays
// pending, its rest filling at the asset's following bars until it is
// reached or a new decision replaces it (VolumeDrop drops the rest); an
// asset whose volume is 0 on every bar is not capped, with a warning.
// Leverage with isolated margin is refused: one account sized by weights
// has no per-position margin to liquidate.
//
// It runs strategy code only through a Stepper it is handed (an
// event-driven strategy, stepped in a worker), never reads a file, and
// never fills an asset at a bar it does not have.
package portfolio

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"wicket/strategy"
	"wicket/strategy/backtest"
	"wicket/strategy/book"
	"wicket/strategy/scriptapi"
)

// Rebalance is a parsed rebalance schedule.
type Rebalance struct {
	Period string  // bar, daily, weekly, monthly or drift
	Drift  float64 // the threshold of drift, a fraction of equity
	Text   string  // as declared
}

// ParseRebalance reads a schedule as a strategy declares it.
func ParseRebalance(s string) (Rebalance, error) {
	p, d, err := scriptapi.ParseRebalance(s)
	if err != nil {
		return Rebalance{}, &backtest.Error{Kind: backtest.KindInvalid, Msg: err.Error()}
	}
	if s == "" {
		s = scriptapi.RebalanceBar
	}
	return Rebalance{Period: p, Drift: d, Text: s}, nil
}

// Align puts the assets' bars on one calendar, the union of their bar
// times: each returned asset has a value at every calendar time, NaN
// where it has no bar (never a value carried forward). The assets must
// share a granularity.
func Align(assets []strategy.Bars) ([]strategy.Bars, error) {
	if len(assets) == 0 {
		return nil, invalidf("a portfolio needs at least one asset")
	}
	var g strategy.Granularity
	var times []int64
	for _, a := range assets {
		_, ag, err := strategy.ParseSeries(a.Series)
		if err != nil {
			return nil, invalidf("%v", err)
		}
		if g != "" && ag != g {
			return nil, invalidf("%s is %s bars and %s is %s: a portfolio's assets share one granularity", assets[0].Series, g, a.Series, ag)
		}
		g = ag
		times = append(times, a.Time...)
	}
	slices.Sort(times)
	times = slices.Compact(times)
	out := make([]strategy.Bars, len(assets))
	for k, a := range assets {
		n := len(times)
		b := strategy.Bars{Series: a.Series, Time: times,
			Open: nanColumn(n), High: nanColumn(n), Low: nanColumn(n), Close: nanColumn(n), Volume: nanColumn(n)}
		j := 0
		for i, t := range a.Time {
			for times[j] < t {
				j++
			}
			b.Open[j], b.High[j], b.Low[j], b.Close[j], b.Volume[j] = a.Open[i], a.High[i], a.Low[i], a.Close[i], a.Volume[i]
		}
		out[k] = b
	}
	return out, nil
}

func nanColumn(n int) []float64 {
	c := make([]float64, n)
	nan := math.NaN()
	for i := range c {
		c[i] = nan
	}
	return c
}

func invalidf(format string, a ...any) error {
	return &backtest.Error{Kind: backtest.KindInvalid, Msg: fmt.Sprintf(format, a...)}
}

// has reports whether an aligned asset has a bar at i.
func has(b *strategy.Bars, i int) bool { return !math.IsNaN(b.Close[i]) && !math.IsNaN(b.Open[i]) }

// engine is one run's state.
type engine struct {
	assets []strategy.Bars
	cfg    backtest.Config
	reb    Rebalance

	capital, fee, slip, sizing float64
	acct                       book.FloatAccount    // cash, fees, slippage (strategy/book)
	pos                        []book.FloatPosition // each asset's position and round trip
	mark                       []float64
	trades                     []Trade
	pnls                       []float64
	assetFees                  []float64
	assetTrades                []int
	entered                    bool
	negCash, bust              int
	clamped                    int
	clampedAt                  int

	barSecs    int64
	start      int // the first bar that may fill (Options.TradeFrom)
	funding    [][]backtest.FundingRate
	fundNext   []int   // per asset, the first settlement not yet passed
	borrow     float64 // the borrow rate per second
	fundPaid   float64
	borrowPaid float64
	charged    backtest.Charged
	record     bool
	fills      []Fill
	hold       bool    // Options.RecordHoldings: keep events for Result.Holdings
	events     []event // the fills and charges, in order (hold)

	// The volume cap (setOptions): a fraction of a bar's volume, 0 for
	// none; per asset whether it has no volume at all.
	volPct          float64
	volDrop, volOff bool
	noVol           []bool
	capped, over    int
	maxPart         float64 // the largest order's share of its bar's volume
	maxAsset, maxAt int
}

// Options are a run's settings beyond cfg.
type Options struct {
	// TradeFrom: no order fills before the first calendar bar at or
	// after it, and the run's result (curve, metrics, trades) covers the
	// bars from there. The strategy still decides at every earlier bar,
	// so its indicators warm up on them; the first bar that may trade
	// opens with a rebalance. Zero: from the first bar.
	TradeFrom time.Time
	// Funding is each asset's funding settlements (sorted by time; nil
	// for an asset without), charged when cfg.Costs.Funding is set.
	Funding [][]backtest.FundingRate
	// RecordFills keeps every fill in Result.Fills (a deployment's
	// tracking compares them with its own).
	RecordFills bool
	// RecordHoldings keeps every asset's holding, value and P&L at each
	// traded calendar bar's close in Result.Holdings (a tear sheet draws
	// them). Off, the run pays nothing for it.
	RecordHoldings bool
}

// Run backtests a portfolio: assets aligned on one calendar (Align),
// weights[a][i] the target weight of asset a decided at bar i's close
// (NaN: no decision; the sum of |w| over the assets above 1 is scaled
// down to 1, with a warning), traded on the schedule reb under cfg's
// capital, fee, slippage and fill.
func Run(ctx context.Context, assets []strategy.Bars, weights [][]float64, reb Rebalance, cfg backtest.Config) (*Result, error) {
	return RunFrom(ctx, assets, weights, reb, cfg, Options{})
}

// RunFrom is Run with opts: trading from opts.TradeFrom, and funding.
func RunFrom(ctx context.Context, assets []strategy.Bars, weights [][]float64, reb Rebalance, cfg backtest.Config, opts Options) (*Result, error) {
	if len(weights) != len(assets) {
		return nil, invalidf("%d weight columns for %d assets", len(weights), len(assets))
	}
	for k, w := range weights {
		if len(assets) > 0 && len(w) != assets[0].Len() {
			return nil, invalidf("%d weights of %s for %d bars; a weight column has a value per calendar bar", len(w), assets[k].Series, assets[0].Len())
		}
	}
	col := make([]float64, len(assets))
	return run(ctx, assets, reb, cfg, opts, func(i int, _ *engine) ([]float64, error) {
		for a := range col {
			col[a] = weights[a][i]
		}
		return col, nil
	})
}

// Stepper is an event-driven portfolio strategy (strategy/script's
// PortfolioStepper): called once per calendar bar, after its close, with
// the account, it returns each asset's target weight (NaN: none).
type Stepper interface {
	Step(i int, acct scriptapi.PortfolioAccount) ([]float64, error)
}

// RunStepper backtests an event-driven portfolio strategy: like Run, with
// the weights of each bar asked of st with the account at that close.
// It stops asking once equity reaches zero.
func RunStepper(ctx context.Context, assets []strategy.Bars, st Stepper, reb Rebalance, cfg backtest.Config) (*Result, error) {
	return RunStepperFrom(ctx, assets, st, reb, cfg, Options{})
}

// RunStepperFrom is RunStepper with opts, as RunFrom is Run's: st is
// stepped at every bar, its targets traded from opts.TradeFrom.
func RunStepperFrom(ctx context.Context, assets []strategy.Bars, st Stepper, reb Rebalance, cfg backtest.Config, opts Options) (*Result, error) {
	return run(ctx, assets, reb, cfg, opts, func(i int, e *engine) ([]float64, error) {
		acct := scriptapi.PortfolioAccount{Cash: e.acct.Cash, Equity: e.equityNow(), Positions: e.quantities(), Marks: slices.Clone(e.mark)}
		w, err := st.Step(i, acct)
		if err != nil {
			return nil, &backtest.Error{Kind: backtest.KindStrategy, Msg: fmt.Sprintf("strategy failed at bar %d (%s)", i, timeString(assets[0].Time[i])), Err: err}
		}
		if len(w) != len(assets) {
			return nil, &backtest.Error{Kind: backtest.KindStrategy, Msg: fmt.Sprintf("strategy returned %d targets for %d assets at bar %d", len(w), len(assets), i)}
		}
		return w, nil
	})
}

// decider gives the weights decided at bar i's close.
type decider func(i int, e *engine) ([]float64, error)

func run(ctx context.Context, assets []strategy.Bars, reb Rebalance, cfg backtest.Config, opts Options, decide decider) (*Result, error) {
	e, g, err := newEngine(assets, reb, cfg, opts)
	if err != nil {
		return nil, err
	}
	equity := make([]float64, assets[0].Len())
	rebalances, exposed, err := e.run(ctx, decide, equity)
	if err != nil {
		return nil, err
	}
	return e.result(g, equity, rebalances, exposed), nil
}

func newEngine(assets []strategy.Bars, reb Rebalance, cfg backtest.Config, opts Options) (*engine, strategy.Granularity, error) {
	if len(assets) == 0 || assets[0].Len() == 0 {
		return nil, "", invalidf("no bars to backtest; check the universe's series and the range (`wicket data list`)")
	}
	n := assets[0].Len()
	for _, a := range assets {
		if a.Len() != n || len(a.Open) != n || len(a.Close) != n {
			return nil, "", invalidf("%s is not on the portfolio's calendar of %d bars; align the assets first", a.Series, n)
		}
		if a.Time[0] != assets[0].Time[0] || a.Time[n-1] != assets[0].Time[n-1] {
			return nil, "", invalidf("%s is not on the portfolio's calendar; align the assets first", a.Series)
		}
	}
	capital, _ := cfg.Capital.Float64()
	if !(capital > 0) || math.IsInf(capital, 0) {
		return nil, "", invalidf("capital %s must be a positive amount", cfg.Capital)
	}
	for _, c := range [...]struct {
		name string
		v    float64
	}{{"fee_bps", cfg.FeeBps}, {"slippage_bps", cfg.SlippageBps}} {
		if !(c.v >= 0 && c.v < 10000) {
			return nil, "", invalidf("%s %v must be at least 0 and below 10000", c.name, c.v)
		}
	}
	if cfg.Fill != backtest.FillNextOpen && cfg.Fill != backtest.FillClose {
		return nil, "", invalidf("unknown fill model %v", cfg.Fill)
	}
	g := cfg.Granularity
	if g == "" {
		if _, pg, err := strategy.ParseSeries(assets[0].Series); err == nil {
			g = pg
		}
	}
	if !g.Valid() {
		return nil, "", invalidf("cannot annualise: the assets' granularity %q is not one of 1m, 5m, 15m, 1h, 4h, 1d", g)
	}
	if reb.Period == "" {
		reb = Rebalance{Period: scriptapi.RebalanceBar, Text: scriptapi.RebalanceBar}
	}
	fee, slip := cfg.FeeBps/1e4, cfg.SlippageBps/1e4
	m := len(assets)
	e := &engine{
		assets: assets, cfg: cfg, reb: reb,
		capital: capital, fee: fee, slip: slip, sizing: book.FloatSizing(slip, fee), acct: book.FloatAccount{Cash: capital},
		pos: make([]book.FloatPosition, m), mark: make([]float64, m),
		assetFees: make([]float64, m), assetTrades: make([]int, m),
		negCash: -1, bust: -1, clampedAt: -1,
	}
	e.barSecs = int64(g.Duration() / time.Second)
	if err := e.setOptions(cfg.Costs, opts); err != nil {
		return nil, "", err
	}
	return e, g, nil
}

// periodOf is the rebalance period a bar time falls in: its UTC day, ISO
// week (from Monday) or month.
func periodOf(period string, t int64) int64 {
	day := t / 86400
	if t < 0 && t%86400 != 0 {
		day--
	}
	switch period {
	case scriptapi.RebalanceDaily:
		return day
	case scriptapi.RebalanceWeekly:
		return (day + 3) / 7 // 1970-01-01 was a Thursday
	case scriptapi.RebalanceMonthly:
		u := time.Unix(t, 0).UTC()
		return int64(u.Year())*12 + int64(u.Month())
	}
	return 0
}

// run walks the calendar once: fills at each asset's open, marks, the
// bar's decision, and the equity at its close.
func (e *engine) run(ctx context.Context, decide decider, equity []float64) (rebalances, exposed int, err error) {
	m, n := len(e.assets), e.assets[0].Len()
	fillNext := e.cfg.Fill == backtest.FillNextOpen
	pending := make([]bool, m)
	target := make([]float64, m)
	carried := make([]bool, m)   // the pending target is a capped order's rest
	carryAt := make([]int, m)    // fill=close: the bar that capped it
	closeRest := make([]bool, m) // fill=close: a rest to fill at a later close
	sched := NewSchedule(e.reb, names(e.assets))
	defer func() { e.clamped, e.clampedAt = sched.Clamped, sched.ClampedAt }()
	decideFrom := e.start // a decision fills at its close, or its asset's next open
	if fillNext && decideFrom > 0 {
		decideFrom--
	}
	for i := 0; i < n; i++ {
		if i&0x3ff == 0 {
			if err := ctx.Err(); err != nil {
				return 0, 0, &backtest.Error{Kind: backtest.KindCanceled, Msg: fmt.Sprintf("portfolio backtest stopped at bar %d of %d", i, n), Err: err}
			}
		}
		for a := range e.assets {
			b := &e.assets[a]
			if !has(b, i) {
				continue
			}
			if o, c := b.Open[i], b.Close[i]; !(o > 0 && c > 0 && o <= math.MaxFloat64 && c <= math.MaxFloat64) {
				return 0, 0, invalidf("%s bar %d (%s) has open %v and close %v; prices must be finite and above zero", b.Series, i, timeString(b.Time[i]), o, c)
			}
			if e.bust < 0 && fillNext && pending[a] {
				pending[a] = false
				if dq := target[a] - e.pos[a].Qty; dq != 0 {
					dq, pending[a] = e.capQty(a, i, dq, !carried[a])
					e.fill(a, i, b.Open[i], dq)
					carried[a] = pending[a]
				}
			}
			if e.funding != nil {
				e.fund(a, i, b.Open[i])
			}
			e.mark[a] = b.Close[i]
		}
		e.borrowAt(i)
		eq := e.equityNow()
		if e.bust < 0 && eq <= 0 {
			e.goBust(i)
			eq = e.equityNow()
		}
		if e.bust < 0 {
			// The bar's weights, scaled down when they sum past 1.
			col, err := decide(i, e)
			if err != nil {
				return 0, 0, err
			}
			if i < decideFrom { // warming up: decided, never traded
				equity[i] = eq
				continue
			}
			first := i == decideFrom && e.start > 0 // the first bar that may trade
			trigger, err := sched.Step(Bar{Index: i, Time: e.assets[0].Time[i], First: first,
				Has:  func(a int) bool { return has(&e.assets[a], i) },
				Held: func(a int) float64 { return e.pos[a].Qty * e.mark[a] / eq }}, col)
			if err != nil {
				return 0, 0, err
			}
			if trigger {
				rebalances++
			}
			for a := range e.assets {
				b := &e.assets[a]
				wa, ok := sched.Take(a)
				if !ok {
					continue // the target waits for the asset's next bar, or its next weight
				}
				carried[a], closeRest[a] = false, false // a new decision replaces a capped rest
				if fillNext {
					pending[a], target[a] = true, book.FloatTarget(wa, eq, b.Close[i], e.sizing, 0)
				} else if dq := book.FloatTarget(wa, eq, b.Close[i], e.sizing, e.pos[a].Qty); dq != 0 {
					var rest bool
					dq, rest = e.capQty(a, i, dq, true)
					e.fill(a, i, b.Close[i], dq)
					if rest {
						closeRest[a], carryAt[a], target[a] = true, i, book.FloatTarget(wa, eq, b.Close[i], e.sizing, 0)
					}
				}
			}
			for a := range closeRest {
				if b := &e.assets[a]; closeRest[a] && carryAt[a] < i && has(b, i) {
					var dq float64
					dq, closeRest[a] = e.capQty(a, i, target[a]-e.pos[a].Qty, false)
					carryAt[a] = i
					if dq != 0 {
						e.fill(a, i, b.Close[i], dq)
					}
				}
			}
			eq = e.equityNow()
		}
		equity[i] = eq
		for a := range e.pos {
			if i >= e.start && e.pos[a].Qty != 0 {
				exposed++
				break
			}
		}
	}
	return rebalances, exposed, nil
}

// equityNow is cash plus every position at its mark.
func (e *engine) equityNow() float64 {
	eq := e.acct.Cash
	for a := range e.pos {
		if q := e.pos[a].Qty; q != 0 {
			eq += q * e.mark[a]
		}
	}
	return eq
}

// quantities are the assets' positions.
func (e *engine) quantities() []float64 {
	q := make([]float64, len(e.pos))
	for a := range e.pos {
		q[a] = e.pos[a].Qty
	}
	return q
}

// fill fills dq (signed) of asset a at mark p on bar i, with the
// backtest's slippage (against the trader) and fee (on the notional),
// through the book.
func (e *engine) fill(a, i int, p, dq float64) {
	cash := e.acct.Cash
	fee, closed := e.acct.Fill(&e.pos[a], i, p, dq, e.slip, e.fee)
	if e.hold {
		e.events = append(e.events, event{bar: i, asset: a, qty: e.pos[a].Qty, flow: e.acct.Cash - cash, traded: math.Abs(e.acct.Cash - cash + fee)})
	}
	if e.record {
		px := p * (1 + e.slip)
		if dq < 0 {
			px = p * (1 - e.slip)
		}
		e.fills = append(e.fills, Fill{Series: e.assets[a].Series, Time: unixTime(e.assets[a].Time[i]), Qty: dq, Price: px, Fee: fee})
	}
	e.assetFees[a] += fee
	e.entered = true
	if e.acct.Cash < -1e-9*e.capital && e.negCash < 0 {
		e.negCash = i
	}
	if closed {
		e.closeTrade(a, i, &e.pos[a].Closed, "")
	}
}

func (e *engine) closeTrade(a, i int, o *book.FloatTrip, exit string) {
	pnl := o.PnL()
	e.pnls = append(e.pnls, pnl)
	e.assetTrades[a]++
	b := &e.assets[a]
	e.trades = append(e.trades, Trade{Series: b.Series, Trade: backtest.Trade{
		Side: sideName(o.Side()), EntryBar: o.EntryBar - e.start, ExitBar: i - e.start,
		EntryTime: unixTime(b.Time[o.EntryBar]), ExitTime: unixTime(b.Time[i]),
		EntryPrice: o.Entry, ExitPrice: o.ExitPrice(), Quantity: o.QtyIn,
		PnL: pnl, Return: pnl / o.ValueIn, Fees: o.Fees, Exit: exit,
	}})
}

// goBust ends trading when equity reaches zero: every position is closed
// at its mark without further costs.
func (e *engine) goBust(i int) {
	e.bust = i
	for a := range e.pos {
		if q := e.pos[a].Qty; q != 0 {
			cash := e.acct.Cash
			_, closed := e.acct.Fill(&e.pos[a], i, e.mark[a], -q, 0, 0)
			if e.hold {
				e.events = append(e.events, event{bar: i, asset: a, qty: e.pos[a].Qty, flow: e.acct.Cash - cash, traded: math.Abs(e.acct.Cash - cash)})
			}
			if closed {
				e.closeTrade(a, i, &e.pos[a].Closed, "bust")
			}
		}
	}
}

func sideName(side float64) string {
	if side < 0 {
		return "short"
	}
	return "long"
}

func unixTime(t int64) time.Time { return time.Unix(t, 0).UTC() }

func timeString(t int64) string { return unixTime(t).Format(time.RFC3339) }

// names are the assets' series names.
func names(assets []strategy.Bars) []string {
	out := make([]string, len(assets))
	for i, a := range assets {
		out[i] = a.Series
	}
	return out
}

// Label is a universe's name in a ledger row and a report: its series,
// comma-separated.
func Label(assets []strategy.Bars) string { return strings.Join(names(assets), ",") }

// capQty caps an order of dq for asset a on bar i at the volume cap: the
// quantity to fill, and whether a rest is left to carry. A fresh order (a
// decision's, not a carried rest) counts in the run's participation.
func (e *engine) capQty(a, i int, dq float64, fresh bool) (float64, bool) {
	v := e.assets[a].Volume[i]
	if fresh && dq != 0 && v > 0 {
		p := math.Abs(dq) / v
		lim := e.volPct
		if lim == 0 {
			lim = backtest.DefaultMaxVolumePct / 100
		}
		if p > lim {
			e.over++
		}
		if p > e.maxPart {
			e.maxPart, e.maxAsset, e.maxAt = p, a, i
		}
	}
	if e.volPct == 0 || e.noVol[a] {
		return dq, false
	}
	lim := e.volPct * v
	if !(math.Abs(dq) > lim) {
		return dq, false
	}
	e.capped++
	return math.Copysign(max(lim, 0), dq), !e.volDrop
}

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

// event is a fill or a charge as the per-bar record needs it: its bar
// and asset, the asset's quantity after it, the cash it moved and the
// notional it filled. The run keeps events, not bars, so that its loop
// is the same with the record off.
type event struct {
	bar, asset        int
	qty, flow, traded float64
}

// Holdings is a run's per-bar record (Options.RecordHoldings): at each
// traded calendar bar's close (Time), per asset ([asset][bar]) the
// quantity held (short < 0), its Value at the asset's mark (its last
// close), and its PnL: that value plus the cash its fills, fees, funding
// and borrow moved since the run began, so the assets' PnL plus the
// capital is the equity. Traded is each bar's filled notional (at the
// fill prices, fees left out). Close is each asset's close at the bar,
// NaN where it had none (the buy-and-hold metric's prices).
type Holdings struct {
	Time                   []time.Time
	Qty, Value, PnL, Close [][]float64
	Traded                 []float64
}

// Weight is asset a's value at bar i as a fraction of equity (NaN when
// equity is not above zero).
func (h *Holdings) Weight(a, i int, equity float64) float64 {
	if !(equity > 0) {
		return math.NaN()
	}
	return h.Value[a][i] / equity
}

// holdings replays the run's events over its calendar into its per-bar
// record (nil when not kept): each asset marked at its last close, as the
// run marks it.
func (e *engine) holdings() *Holdings {
	if !e.hold {
		return nil
	}
	m, n := len(e.assets), e.assets[0].Len()
	h := &Holdings{Time: make([]time.Time, 0, n-e.start), Qty: make([][]float64, m), Value: make([][]float64, m), PnL: make([][]float64, m), Close: make([][]float64, m), Traded: make([]float64, 0, n-e.start)}
	for a := range m {
		h.Qty[a], h.Value[a], h.PnL[a] = make([]float64, 0, n-e.start), make([]float64, 0, n-e.start), make([]float64, 0, n-e.start)
		h.Close[a] = make([]float64, 0, n-e.start)
	}
	qty, flow, mark := make([]float64, m), make([]float64, m), make([]float64, m)
	k := 0
	for i := range n {
		traded := 0.0
		for ; k < len(e.events) && e.events[k].bar == i; k++ {
			ev := e.events[k]
			qty[ev.asset], flow[ev.asset] = ev.qty, flow[ev.asset]+ev.flow
			traded += ev.traded
		}
		for a := range m {
			if b := &e.assets[a]; has(b, i) {
				mark[a] = b.Close[i]
			}
		}
		if i < e.start {
			continue
		}
		h.Time = append(h.Time, unixTime(e.assets[0].Time[i]))
		for a := range m {
			v := qty[a] * mark[a]
			h.Qty[a], h.Value[a], h.PnL[a] = append(h.Qty[a], qty[a]), append(h.Value[a], v), append(h.PnL[a], v+flow[a])
			close := math.NaN()
			if b := &e.assets[a]; has(b, i) {
				close = b.Close[i]
			}
			h.Close[a] = append(h.Close[a], close)
		}
		h.Traded = append(h.Traded, traded)
	}
	return h
}
