package backtest

import (
	"context"
	"fmt"
	"math"
	"time"

	"wicket/strategy"
)

// Run backtests decisions over bars under cfg. The context is checked every
// few thousand bars; a Stepper that runs long should watch it too.
func Run(ctx context.Context, bars strategy.Bars, cfg Config, d Decisions) (*Result, error) {
	n := bars.Len()
	if n == 0 {
		return nil, invalidf("no bars to backtest; pick a series and range that hold some (`wicket data list`)")
	}
	if len(bars.Open) != n || len(bars.High) != n || len(bars.Low) != n || len(bars.Close) != n || len(bars.Volume) != n {
		return nil, invalidf("the bar columns have different lengths")
	}
	capital, _ := cfg.Capital.Float64()
	if !(capital > 0) || math.IsInf(capital, 0) {
		return nil, invalidf("capital %s must be a positive amount", cfg.Capital)
	}
	for _, c := range [...]struct {
		name string
		v    float64
	}{{"fee_bps", cfg.FeeBps}, {"slippage_bps", cfg.SlippageBps}} {
		if !(c.v >= 0 && c.v < 10000) {
			return nil, invalidf("%s %v must be at least 0 and below 10000", c.name, c.v)
		}
	}
	if cfg.Fill != FillNextOpen && cfg.Fill != FillClose {
		return nil, invalidf("unknown fill model %v", cfg.Fill)
	}
	g := cfg.Granularity
	if g == "" {
		_, pg, err := strategy.ParseSeries(bars.Series)
		if err != nil {
			return nil, invalidf("cannot annualise: set Config.Granularity or name the bars' series (%v)", err)
		}
		g = pg
	}
	if !g.Valid() {
		return nil, invalidf("granularity %q is not one of 1m, 5m, 15m, 1h, 4h, 1d", g)
	}
	switch {
	case d.Targets != nil && d.Stepper != nil:
		return nil, invalidf("decisions have both targets and a stepper; a strategy is vectorised or event-driven, not both")
	case d.Targets == nil && d.Stepper == nil:
		return nil, invalidf("decisions have neither targets nor a stepper")
	case d.Targets != nil && len(d.Targets) != n:
		return nil, invalidf("%d targets for %d bars; a vectorised strategy decides once per bar", len(d.Targets), n)
	}
	s := newSim(bars, cfg, capital)
	if err := s.run(ctx, d); err != nil {
		return nil, err
	}
	return s.result(cfg, g), nil
}

// sim is one run's mutable state.
type sim struct {
	bars     strategy.Bars
	capital  float64
	fee      float64 // fraction of notional
	slip     float64 // fraction of price
	sizing   float64 // (1+slip)(1+fee): a target's position costs this much per unit of open price
	fillNext bool

	cash, pos float64
	target    float64 // the standing target; NaN after a Qty trade
	equity    []float64
	returns   []float64
	exposed   int
	fees      float64
	slipCost  float64
	entered   bool
	negCash   int // first bar with negative cash, or -1
	bust      int // bar where equity reached zero, or -1

	open   openTrade
	trades []Trade
}

// openTrade accumulates the round trip in progress.
type openTrade struct {
	active   bool
	side     float64 // +1 long, -1 short
	entryBar int
	qtyIn    float64 // quantity entered (increases)
	valueIn  float64 // sum of quantity × fill price of increases
	qtyOut   float64
	valueOut float64
	fees     float64
}

func newSim(bars strategy.Bars, cfg Config, capital float64) *sim {
	fee, slip := cfg.FeeBps/1e4, cfg.SlippageBps/1e4
	return &sim{
		bars:     bars,
		capital:  capital,
		fee:      fee,
		slip:     slip,
		sizing:   (1 + slip) * (1 + fee),
		fillNext: cfg.Fill == FillNextOpen,
		cash:     capital,
		equity:   make([]float64, bars.Len()),
		returns:  make([]float64, bars.Len()),
		negCash:  -1,
		bust:     -1,
	}
}

// run is the one loop both entry-point styles share. The vectorised path
// reads targets[i] with no call back into the strategy. The loop also
// checks the prices and records each bar's equity and return, so a million
// bars are walked once.
func (s *sim) run(ctx context.Context, d Decisions) error {
	b := &s.bars
	n := b.Len()
	open, close := b.Open[:n], b.Close[:n]
	equity, returns := s.equity[:n], s.returns[:n]
	targets, stepper := d.Targets, d.Stepper
	var (
		pending    strategy.Intent
		hasPending bool
		exposed    int
	)
	prev := s.capital
	for i := range n {
		if i&0x3fff == 0 {
			if err := ctx.Err(); err != nil {
				return &Error{Kind: Canceled, Msg: fmt.Sprintf("backtest stopped at bar %d of %d", i, n), Err: err}
			}
		}
		o, c := open[i], close[i]
		if !(o > 0 && o <= math.MaxFloat64 && c > 0 && c <= math.MaxFloat64) {
			return invalidf("bar %d (%s) has open %v and close %v; prices must be finite and above zero", i, timeString(b.Time[i]), o, c)
		}
		if s.bust >= 0 {
			equity[i], returns[i] = prev, 0
			continue
		}
		if hasPending {
			s.apply(i, o, pending)
			hasPending = false
		}
		var in strategy.Intent
		if targets != nil {
			if t := targets[i]; t == t { // not NaN
				if t > math.MaxFloat64 || t < -math.MaxFloat64 {
					return invalidf("target at bar %d (%s) is %v; a target is a finite fraction of equity or NaN for no change", i, timeString(b.Time[i]), t)
				}
				in = strategy.Intent{Kind: strategy.Target, Value: t}
			}
		} else {
			var err error
			in, err = stepper.Step(i, strategy.Account{Position: s.pos, Cash: s.cash, Equity: s.cash + s.pos*c})
			if err != nil {
				return &Error{Kind: Strategy, Msg: fmt.Sprintf("strategy failed at bar %d (%s)", i, timeString(b.Time[i])), Err: err}
			}
			if in.Kind != strategy.None && (math.IsNaN(in.Value) || math.IsInf(in.Value, 0)) {
				return &Error{Kind: Strategy, Msg: fmt.Sprintf("strategy asked for %v at bar %d (%s); an intent needs a finite value", in.Value, i, timeString(b.Time[i]))}
			}
		}
		if in.Kind != strategy.None {
			if s.fillNext {
				if i+1 < n {
					pending, hasPending = in, true
				}
			} else {
				s.apply(i, c, in)
			}
		}
		eq := s.cash + s.pos*c
		equity[i] = eq
		if prev > 0 {
			returns[i] = eq/prev - 1
		}
		prev = eq
		if s.pos != 0 {
			exposed++
		}
		if eq <= 0 {
			s.goBust(i)
		}
	}
	s.exposed = exposed
	return nil
}

// apply turns an intent into a fill at price p on bar i.
func (s *sim) apply(i int, p float64, in strategy.Intent) {
	var dq float64
	switch in.Kind {
	case strategy.Target:
		f := in.Value
		if f == s.target {
			return // already at this target; drift is not rebalanced
		}
		s.target = f
		dq = f*(s.cash+s.pos*p)/(p*s.sizing) - s.pos
	case strategy.Qty:
		dq = in.Value
		s.target = math.NaN()
	default:
		return
	}
	if dq != 0 {
		s.execute(i, p, dq)
	}
}

// execute fills dq (signed) at mark p on bar i, with slippage and fees, and
// keeps the round-trip books.
func (s *sim) execute(i int, p, dq float64) {
	side := 1.0
	if dq < 0 {
		side = -1
	}
	qty := math.Abs(dq)
	px := p * (1 + side*s.slip)
	fee := qty * px * s.fee
	s.cash -= dq*px + fee
	s.fees += fee
	s.slipCost += qty * p * s.slip
	s.entered = true
	if s.cash < -1e-9*s.capital && s.negCash < 0 {
		s.negCash = i
	}

	prev := s.pos
	pos := prev + dq
	if math.Abs(pos) <= 1e-9*max(math.Abs(prev), qty) {
		pos = 0 // a round trip that should end flat does, despite float rounding
	}
	switch {
	case prev == 0 || (prev > 0) == (dq > 0):
		s.add(i, side, qty, px, fee)
	default:
		closing := qty
		if pos == 0 || (pos > 0) != (prev > 0) {
			closing = math.Abs(prev)
		}
		share := closing / qty
		s.open.qtyOut += closing
		s.open.valueOut += closing * px
		s.open.fees += fee * share
		if pos == 0 || (pos > 0) != (prev > 0) {
			s.closeTrade(i)
		}
		if pos != 0 && (pos > 0) != (prev > 0) {
			s.add(i, side, math.Abs(pos), px, fee*(1-share))
		}
	}
	s.pos = pos
}

func (s *sim) add(i int, side, qty, px, fee float64) {
	if !s.open.active {
		s.open = openTrade{active: true, side: side, entryBar: i}
	}
	s.open.qtyIn += qty
	s.open.valueIn += qty * px
	s.open.fees += fee
}

func (s *sim) closeTrade(i int) {
	o := s.open
	pnl := o.side*(o.valueOut-o.valueIn) - o.fees
	s.trades = append(s.trades, Trade{
		Side:       sideName(o.side),
		EntryBar:   o.entryBar,
		ExitBar:    i,
		EntryPrice: o.valueIn / o.qtyIn,
		ExitPrice:  o.valueOut / o.qtyOut,
		Quantity:   o.qtyIn,
		PnL:        pnl,
		Return:     pnl / o.valueIn,
		Fees:       o.fees,
	})
	s.open = openTrade{}
}

// goBust ends trading when equity reaches zero: the position is closed at
// bar i's close without further costs and equity stays where it fell.
func (s *sim) goBust(i int) {
	s.bust = i
	if s.pos != 0 {
		c := s.bars.Close[i]
		s.cash += s.pos * c
		s.open.qtyOut += math.Abs(s.pos)
		s.open.valueOut += math.Abs(s.pos) * c
		s.closeTrade(i)
		s.pos = 0
	}
}

// openPosition reports the round trip still open after the last bar,
// marked at its close without exit costs.
func (s *sim) openPosition() *Position {
	if !s.open.active {
		return nil
	}
	o, last := s.open, s.bars.Len()-1
	c := s.bars.Close[last]
	held := math.Abs(s.pos)
	return &Position{
		Side:       sideName(o.side),
		EntryBar:   o.entryBar,
		EntryTime:  unixTime(s.bars.Time[o.entryBar]),
		EntryPrice: o.valueIn / o.qtyIn,
		Quantity:   s.pos,
		Mark:       c,
		PnL:        o.side*(o.valueOut+held*c-o.valueIn) - o.fees,
		Fees:       o.fees,
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
