package backtest

import (
	"context"
	"fmt"
	"math"
	"time"

	"wicket/internal/intrabar"
	"wicket/strategy"
	"wicket/strategy/book"
)

// Run backtests decisions over bars under cfg. The context is checked every
// few thousand bars; a Stepper that runs long should watch it too.
func Run(ctx context.Context, bars strategy.Bars, cfg Config, d Decisions) (*Result, error) {
	capital, g, err := check(bars, cfg, d)
	if err != nil {
		return nil, err
	}
	n := bars.Len()
	s := newSim(bars, cfg, g, capital, make([]float64, n), make([]float64, n), 0)
	if err := s.run(ctx, d); err != nil {
		return nil, err
	}
	return s.result(cfg, g), nil
}

// Evaluation is what Evaluate keeps of a run: the metrics, exactly as Run
// reports them, and the moments of the per-bar returns.
type Evaluation struct {
	Metrics Metrics
	Moments Moments
	// Blocks are the returns cut into Scratch.Blocks blocks (BlockStats),
	// summed in the pass that finds their moments; nil when not asked for
	// or when there are too few returns.
	Blocks []BlockStat
	// Returns are the per-bar returns (see Returns) when Scratch.Returns
	// asked for them, else nil. They live in the Scratch the evaluation
	// used and are overwritten by its next use.
	Returns []float64
}

// Scratch is the memory Evaluate reuses from one run to the next, so a
// sweep's combinations allocate nothing per bar. A Scratch serves one
// evaluation at a time. It also remembers the price check and the time
// grid of the last bars it saw (holding their open, close and time
// columns, known by address): bars evaluated through one Scratch must not
// change between evaluations.
type Scratch struct {
	// Blocks, when >= 2, asks each evaluation for its returns in that
	// many blocks (Evaluation.Blocks).
	Blocks int
	// Returns asks each evaluation for its per-bar returns
	// (Evaluation.Returns). Without it a run of targets or signals writes
	// none: its moments and blocks come from sums kept as it goes.
	Returns bool
	returns []float64
	prices  priceCheck
	grid    timeGrid
}

func grow(b []float64, n int) []float64 {
	if cap(b) < n {
		return make([]float64, n)
	}
	return b[:n]
}

// Evaluate backtests like Run in one streaming pass that keeps neither the
// trades nor the equity curve: the metrics, the moments and the blocks
// accumulate bar by bar, and the only per-bar memory is sc's return
// buffer, reused across calls and written only when sc.Returns asks for
// the returns (or the decisions come from a stepper). Its Metrics are bit
// for bit the ones Run reports for the same inputs.
func Evaluate(ctx context.Context, bars strategy.Bars, cfg Config, d Decisions, sc *Scratch) (Evaluation, error) {
	capital, g, err := check(bars, cfg, d)
	if err != nil {
		return Evaluation{}, err
	}
	// A stepper keeps state and a fill hook is told each fill, so neither
	// can run twice: those runs write their returns from the start.
	keep := sc.Returns || d.Stepper != nil || cfg.OnFill != nil
	for {
		var returns []float64
		if keep {
			sc.returns = grow(sc.returns, bars.Len())
			returns = sc.returns
		}
		s := newSim(bars, cfg, g, capital, nil, returns, sc.Blocks)
		s.prices = &sc.prices
		s.curve.step = int64(g.Duration() / time.Second)
		s.curve.even = sc.grid.evenBars(bars.Time, s.curve.step)
		if err := s.run(ctx, d); err != nil {
			return Evaluation{}, err
		}
		m, mo, bs, ok := s.metrics(g)
		if !ok && !keep {
			// The returns' mean is too large against their spread for
			// the moments from power sums (curveAcc.moments): run again
			// keeping the returns, for the two-pass moments.
			keep = true
			continue
		}
		ev := Evaluation{Metrics: m, Moments: mo, Blocks: bs}
		if sc.Returns {
			ev.Returns = returns
		}
		return ev, nil
	}
}

// check validates a run's inputs and returns the capital as a float and
// the granularity that annualises it.
func check(bars strategy.Bars, cfg Config, d Decisions) (float64, strategy.Granularity, error) {
	n := bars.Len()
	if n == 0 {
		return 0, "", invalidf("no bars to backtest; pick a series and range that hold some (`wicket data list`)")
	}
	if len(bars.Open) != n || len(bars.High) != n || len(bars.Low) != n || len(bars.Close) != n || len(bars.Volume) != n {
		return 0, "", invalidf("the bar columns have different lengths")
	}
	capital, _ := cfg.Capital.Float64()
	if !(capital > 0) || math.IsInf(capital, 0) {
		return 0, "", invalidf("capital %s must be a positive amount", cfg.Capital)
	}
	for _, c := range [...]struct {
		name string
		v    float64
	}{{"fee_bps", cfg.FeeBps}, {"slippage_bps", cfg.SlippageBps}} {
		if !(c.v >= 0 && c.v < 10000) {
			return 0, "", invalidf("%s %v must be at least 0 and below 10000", c.name, c.v)
		}
	}
	if cfg.Fill != FillNextOpen && cfg.Fill != FillClose {
		return 0, "", invalidf("unknown fill model %v", cfg.Fill)
	}
	g := cfg.Granularity
	if g == "" {
		_, pg, err := strategy.ParseSeries(bars.Series)
		if err != nil {
			return 0, "", invalidf("cannot annualise: set Config.Granularity or name the bars' series (%v)", err)
		}
		g = pg
	}
	if !g.Valid() {
		return 0, "", invalidf("granularity %q is not one of 1m, 5m, 15m, 1h, 4h, 1d", g)
	}
	kinds := 0
	for _, given := range []bool{d.Targets != nil, d.Signals != nil, d.Stepper != nil} {
		if given {
			kinds++
		}
	}
	switch {
	case kinds > 1:
		return 0, "", invalidf("decisions have more than one of targets, signals and a stepper; a strategy is vectorised or event-driven, not both")
	case kinds == 0:
		return 0, "", invalidf("decisions have neither targets, signals nor a stepper")
	case d.Targets != nil && len(d.Targets) != n:
		return 0, "", invalidf("%d targets for %d bars; a vectorised strategy decides once per bar", len(d.Targets), n)
	case d.Signals != nil:
		if err := d.Signals.Exits.Validate(); err != nil {
			return 0, "", invalidf("signals: %v", err)
		}
	}
	if _, err := intrabar.ParseRule(cfg.Intrabar.String()); err != nil {
		return 0, "", invalidf("%v", err)
	}
	if err := cfg.Allowance.Check(); err != nil {
		return 0, "", err
	}
	if err := cfg.Costs.Check(); err != nil {
		return 0, "", err
	}
	return capital, g, nil
}

// sim is one run's mutable state.
type sim struct {
	bars     strategy.Bars
	capital  float64
	fee      float64 // fraction of notional
	slip     float64 // fraction of price
	sizing   float64 // (1+slip)(1+fee): a target's position costs this much per unit of open price
	fillNext bool

	acct        book.FloatAccount  // cash, fees and slippage (strategy/book)
	held        book.FloatPosition // the position and its round trip
	target      float64            // the standing target; NaN after a Qty trade
	equity      []float64          // nil when the curve is not kept (Evaluate)
	returns     []float64          // nil when the returns are not kept (Evaluate)
	curve       curveAcc
	blocks      blockSums
	closed      tradeAcc
	keep        bool        // keep every trade (Run) or only their tally (Evaluate)
	prices      *priceCheck // a Scratch's price check; nil checks every run
	finalEquity float64
	exposed     int
	entered     bool
	negCash     int     // first bar with negative cash, or -1
	bust        int     // bar where equity reached zero, or -1
	allow       *limits // the allowance (allowance.go); nil: none

	trades []Trade

	// Protective orders (protect.go).
	rule           intrabar.Rule
	exits          strategy.Exits                   // the exits the position was opened with
	legs           []intrabar.Order[intrabar.Float] // resting exits, one group
	legKind        []exitKind                       // which exit each leg is
	fills          []intrabar.Fill[intrabar.Float]
	bandLo, bandHi float64 // a bar inside (low > bandLo, high < bandHi) reaches no leg
	exitAs         string  // the exit closing the trade being filled, for its Trade
	onFill         func(FillEvent)

	cost costState // funding, borrow, margin and the volume cap (costs.go)
}

// newSim prepares a run over bars; equity is where the curve goes,
// returns where the per-bar returns go (nil: not kept), both of
// bars.Len(); blocks is how many blocks of returns to sum (BlockStats).
func newSim(bars strategy.Bars, cfg Config, g strategy.Granularity, capital float64, equity, returns []float64, blocks int) *sim {
	fee, slip := cfg.FeeBps/1e4, cfg.SlippageBps/1e4
	return &sim{
		bars:     bars,
		capital:  capital,
		fee:      fee,
		slip:     slip,
		sizing:   book.FloatSizing(slip, fee),
		fillNext: cfg.Fill == FillNextOpen,
		acct:     book.FloatAccount{Cash: capital},
		equity:   equity,
		returns:  returns,
		curve:    newCurveAcc(capital, bars.Time),
		keep:     equity != nil,
		negCash:  -1,
		bust:     -1,
		rule:     cfg.Intrabar,
		bandLo:   math.Inf(-1),
		bandHi:   math.Inf(1),
		allow:    newLimits(cfg.Allowance, cfg.Capital, capital, bars.Time),
		cost:     newCostState(cfg.Costs, int64(g.Duration()/time.Second), bars.Volume),
		onFill:   cfg.OnFill,
		blocks:   newBlockSums(bars.Len(), blocks),
	}
}

// run is the one loop both entry-point styles share. The vectorised path
// reads targets[i] with no call back into the strategy. The loop also
// checks the prices, records each bar's return (and equity, when the curve
// is kept) and accumulates the curve's metrics, so a million bars are
// walked once.
func (s *sim) run(ctx context.Context, d Decisions) error {
	b := &s.bars
	n := b.Len()
	open, close := b.Open[:n], b.Close[:n]
	equity, returns := s.equity, s.returns
	if equity != nil {
		equity = equity[:n]
	}
	if returns != nil {
		returns = returns[:n]
	}
	// The vectorised decisions come as a target source: the engine asks
	// it for the next bar with a target and runs the bars before it in
	// the tight loops below. A stepper (event-driven) is asked every bar.
	stepper := d.Stepper
	var src targetSource
	var exits strategy.Exits // what a vectorised target's position rests with
	switch {
	case d.Targets != nil:
		src = denseTargets(d.Targets)
	case d.Signals != nil:
		src = newSignalCursor(*d.Signals)
		exits = d.Signals.Exits
	}
	high, low := b.High[:n], b.Low[:n]
	valid := s.validUntil(open, close)
	acc := &s.curve
	var (
		pending    strategy.Intent
		hasPending bool
		exposed    int
		sum, down  float64
		s2, s3, s4 float64 // the sums of r^2, r^3 and r^4 (curveAcc)
		bsum, bsq  float64 // the block's sums of r and r^2 (blockSums)
	)
	bnext := s.blocks.first() // the bar that starts the next block
	// The hot state lives in locals; the rare events (fills, new peaks,
	// deeper drawdowns, going bust) update s and the locals are read back.
	cash, pos, bust := s.acct.Cash, s.held.Qty, false
	peak, floor := acc.peak, acc.floor
	prev := s.capital
	next := -1                // the next bar with a target, once asked for (>= i)
	peekFrom, peeked := -1, 0 // src.next(peekFrom, n), asked ahead
	vol := b.Volume[:n]
	for i := 0; i < n; i++ {
		if i == bnext {
			bnext = s.blocks.cut(i, bsum, bsq)
			bsum, bsq = 0, 0
		}
		if i&0x3fff == 0 {
			if err := ctx.Err(); err != nil {
				return &Error{Kind: KindCanceled, Msg: fmt.Sprintf("backtest stopped at bar %d of %d", i, n), Err: err}
			}
		}
		if src != nil && next < i {
			if i == peekFrom {
				next = peeked
			} else {
				next = src.next(i, n)
			}
			// The target after next is found now, and its bar's prices
			// (and the volume its fill is capped by) are fetched ahead:
			// the tight loops skip bars, so the hardware would not, and
			// a million-bar run would wait for memory at every decision.
			if next < n-1 {
				peekFrom, peeked = next+1, src.next(next+1, n)
				if peeked < n {
					prefetch(&open[peeked])
					prefetch(&close[peeked])
					if s.cost.volPct > 0 && peeked+1 < n {
						prefetch(&vol[peeked+1])
					}
				}
			}
		}
		// The bars before the next target (or a bad price, which the
		// bar-by-bar path reports), up to the next context check or
		// block.
		end := min(next, valid, (i|0x3fff)+1, bnext)
		if pos == 0 && !hasPending && !bust && src != nil && end > i && s.cost.carry == 0 {
			// Flat, nothing pending: equity stays at prev and every
			// return is exactly 0, so the sums do not move and the peak
			// only needs its first and last bar.
			j := end
			if returns != nil {
				clear(returns[i:j])
			}
			if equity != nil {
				for k := i; k < j; k++ {
					equity[k] = prev
				}
			}
			if prev >= peak {
				acc.newPeak(i, prev)
				acc.peakAt = j - 1
				peak, floor = acc.peak, acc.floor
			} else if prev < floor {
				acc.deepen(prev)
				floor = acc.floor
			}
			i = j - 1
			continue
		}
		if pos != 0 && !hasPending && !bust && src != nil && end > i && !s.cost.perBar && s.cost.carry == 0 && s.allow == nil {
			// In a position, nothing pending: each bar only marks the
			// position to its close (until equity reaches zero, which the
			// bar-by-bar path handles); the accounting is the bar-by-bar
			// path's, in a tighter loop (markHeld). An allowance marks
			// each bar's equity (limits.mark): the bar-by-bar path does.
			var eqs, rt []float64
			if equity != nil {
				eqs = equity[i:end]
			}
			if returns != nil {
				rt = returns[i:end]
			}
			h := heldSums{cash: cash, pos: pos, prev: prev, peak: peak, floor: floor,
				sum: sum, down: down, s2: s2, s3: s3, s4: s4, bsum: bsum, bsq: bsq}
			k := s.markHeld(&h, i, close[i:end], low[i:end], high[i:end], eqs, rt)
			prev, peak, floor = h.prev, h.peak, h.floor
			sum, down, s2, s3, s4, bsum, bsq = h.sum, h.down, h.s2, h.s3, h.s4, h.bsum, h.bsq
			j := i + k
			if j > i {
				exposed += j - i
				i = j - 1
				continue
			}
		}
		o, c := open[i], close[i]
		if !(o > 0 && o <= math.MaxFloat64 && c > 0 && c <= math.MaxFloat64) {
			return invalidf("bar %d (%s) has open %v and close %v; prices must be finite and above zero", i, timeString(b.Time[i]), o, c)
		}
		eq, r := prev, 0.0
		if !bust {
			if hasPending {
				s.apply(i, i-1, o, pending) // decided at the bar before
				cash, pos = s.acct.Cash, s.held.Qty
				hasPending = false
			}
			if s.cost.on {
				s.atOpen(i, o)
				cash, pos = s.acct.Cash, s.held.Qty
			}
			if len(s.legs) > 0 {
				if err := s.protect(i); err != nil {
					return err
				}
				cash, pos = s.acct.Cash, s.held.Qty
			}
			if s.cost.on {
				if err := s.inBar(i); err != nil {
					return err
				}
				cash, pos = s.acct.Cash, s.held.Qty
			}
			if s.allow != nil {
				s.allow.mark(i, cash+pos*c) // before the bar's decision
			}
			var in strategy.Intent
			if src != nil {
				if t := targetOf(src, i, next); t == t { // not NaN
					if t > math.MaxFloat64 || t < -math.MaxFloat64 {
						return invalidf("target at bar %d (%s) is %v; a target is a finite fraction of equity or NaN for no change", i, timeString(b.Time[i]), t)
					}
					in = strategy.Intent{Kind: strategy.Target, Value: t, Exits: exits}
				}
			} else {
				var err error
				in, err = stepper.Step(i, strategy.Account{Position: pos, Cash: cash, Equity: cash + pos*c})
				if err != nil {
					return &Error{Kind: KindStrategy, Msg: fmt.Sprintf("strategy failed at bar %d (%s)", i, timeString(b.Time[i])), Err: err}
				}
				if in.Kind != strategy.None && (math.IsNaN(in.Value) || math.IsInf(in.Value, 0)) {
					return &Error{Kind: KindStrategy, Msg: fmt.Sprintf("strategy asked for %v at bar %d (%s); an intent needs a finite value", in.Value, i, timeString(b.Time[i]))}
				}
				if err := in.Exits.Validate(); err != nil {
					return &Error{Kind: KindStrategy, Msg: fmt.Sprintf("strategy asked for exits at bar %d (%s): %v", i, timeString(b.Time[i]), err)}
				}
			}
			if in.Kind != strategy.None {
				if s.fillNext {
					if i+1 < n {
						pending, hasPending = in, true
					}
				} else {
					s.apply(i, i, c, in)
					cash, pos = s.acct.Cash, s.held.Qty
				}
			}
			if s.cost.carry != 0 && !s.fillNext && s.cost.carryFrom < i {
				s.fillCarry(i, i, c)
				cash, pos = s.acct.Cash, s.held.Qty
			}
			eq = cash + pos*c
			if prev > 0 && eq != prev { // flat, eq == prev and r is exactly 0: no division
				r = eq/prev - 1
			}
			if pos != 0 {
				exposed++
			}
		}
		if equity != nil {
			equity[i] = eq
		}
		if returns != nil {
			returns[i] = r
		}
		// The curve's metrics (see curveAcc) and the block's sums.
		sum += r
		dn := min(r, 0) // branch-free: gains and losses alternate unpredictably
		down += dn * dn
		r2 := r * r
		s2 += r2
		s3 += r2 * r
		s4 += r2 * r2
		bsum += r
		bsq += r2
		if eq >= peak {
			acc.newPeak(i, eq)
			peak, floor = acc.peak, acc.floor
		} else if eq < floor {
			acc.deepen(eq)
			floor = acc.floor
		}
		prev = eq
		if eq <= 0 && !bust {
			s.goBust(i)
			cash, pos, bust = s.acct.Cash, s.held.Qty, true
		}
	}
	if bnext == n {
		s.blocks.cut(n, bsum, bsq)
	}
	acc.sum, acc.down, acc.s2, acc.s3, acc.s4 = sum, down, s2, s3, s4
	s.exposed, s.finalEquity = exposed, prev
	return nil
}

// heldSums are what the in-position loop (markHeld) carries from bar to bar:
// the account, the last equity, the curve's peak and floor and the running
// sums (run's locals of the same names).
type heldSums struct {
	cash, pos, prev       float64
	peak, floor           float64
	sum, down, s2, s3, s4 float64
	bsum, bsq             float64
}

// markHeld marks a held position to the closes cl of bars i, i+1, ... with
// the bar-by-bar path's accounting, and returns how many bars it took: it
// stops before a bar whose equity would reach zero, or whose low or high
// (lw, hg) may reach a resting exit, for the bar-by-bar path. It writes
// each bar's equity and return where eqs and rt (views of bars i on) are
// not nil. A function of its own without calls in its loop, so that its
// state stays in registers.
func (s *sim) markHeld(h *heldSums, i int, cl, lw, hg, eqs, rt []float64) int {
	if len(s.legs) == 0 && eqs == nil && rt == nil {
		return s.curve.markPlain(h, i, cl)
	}
	cash, pos, prev := h.cash, h.pos, h.prev
	peak, floor := h.peak, h.floor
	sum, down, s2, s3, s4 := h.sum, h.down, h.s2, h.s3, h.s4
	bsum, bsq := h.bsum, h.bsq
	guarded, lo, hi := len(s.legs) > 0, s.bandLo, s.bandHi
	lw, hg = lw[:len(cl)], hg[:len(cl)] // indexed by k unchecked
	acc := &s.curve
	k := 0
	for ; k < len(cl); k++ {
		if guarded && !(lw[k] > lo && hg[k] < hi) {
			break // an exit may fill: the bar-by-bar path walks it
		}
		eq := cash + pos*cl[k]
		if eq <= 0 {
			break
		}
		// prev > 0 (equity never reached zero), and eq == prev gives
		// exactly 0, as the bar-by-bar path's branch does.
		r := eq/prev - 1
		if eqs != nil {
			eqs[k] = eq
		}
		if rt != nil {
			rt[k] = r
		}
		sum += r
		dn := min(r, 0)
		down += dn * dn
		r2 := r * r
		s2 += r2
		s3 += r2 * r
		s4 += r2 * r2
		bsum += r
		bsq += r2
		if eq >= peak {
			acc.newPeak(i+k, eq)
			peak, floor = acc.peak, acc.floor
		} else if eq < floor {
			acc.deepen(eq)
			floor = acc.floor
		}
		prev = eq
	}
	h.prev, h.peak, h.floor = prev, peak, floor
	h.sum, h.down, h.s2, h.s3, h.s4 = sum, down, s2, s3, s4
	h.bsum, h.bsq = bsum, bsq
	return k
}

// markPlain is markHeld where no exit rests and neither equity nor
// returns are kept, as in a sweep's trials: the same sums in the same
// order, without the bounds and the writes, so that its loop's state
// fits in the registers.
func (acc *curveAcc) markPlain(h *heldSums, i int, cl []float64) int {
	cash, pos, prev := h.cash, h.pos, h.prev
	peak, floor := h.peak, h.floor
	sum, down, s2, s3, s4 := h.sum, h.down, h.s2, h.s3, h.s4
	bsum, bsq := h.bsum, h.bsq
	k := 0
	for ; k < len(cl); k++ {
		eq := cash + pos*cl[k]
		if eq <= 0 {
			break
		}
		r := eq/prev - 1
		sum += r
		dn := min(r, 0)
		down += dn * dn
		r2 := r * r
		s2 += r2
		s3 += r2 * r
		s4 += r2 * r2
		bsum += r
		bsq += r2
		if eq >= peak {
			acc.newPeak(i+k, eq)
			peak, floor = acc.peak, acc.floor
		} else if eq < floor {
			acc.deepen(eq)
			floor = acc.floor
		}
		prev = eq
	}
	h.prev, h.peak, h.floor = prev, peak, floor
	h.sum, h.down, h.s2, h.s3, h.s4 = sum, down, s2, s3, s4
	h.bsum, h.bsq = bsum, bsq
	return k
}

// metrics are the run's figures: the curve's from the accumulator, the
// trades' from their tally, and the rest from the run's counters; the
// moments and blocks of its returns. It reports false when the moments
// need the returns and the run did not keep them (curveAcc.moments).
func (s *sim) metrics(g strategy.Granularity) (Metrics, Moments, []BlockStat, bool) {
	b := &s.bars
	n := b.Len()
	m, mo, ok := s.curve.metrics(n, s.finalEquity, b.Time[0], b.Time[n-1], s.returns, g.PeriodsPerYear(), g.Duration())
	s.closed.fill(&m)
	m.Exposure = float64(s.exposed) / float64(n)
	m.FeesPaid, m.SlippageCost = s.acct.Fees, s.acct.Slipped
	m.Charged, m.FundingPaid, m.BorrowPaid = s.cost.charged, s.cost.paidFund, s.cost.paidBorr
	m.Liquidations, m.VolumeCappedFills = s.cost.liqs, s.cost.capped
	m.BuyAndHoldReturn = b.Close[n-1]/b.Close[0] - 1
	return m, mo, s.blocks.out, ok
}

// apply turns an intent decided at bar dec into a fill at price p on bar
// i (dec is i, or the bar before when a decision fills at the next open).
func (s *sim) apply(i, dec int, p float64, in strategy.Intent) {
	var dq float64
	switch in.Kind {
	case strategy.Target:
		f := in.Value
		if f == s.target {
			return // already at this target; drift is not rebalanced
		}
		s.cost.carry = 0 // a new decision supersedes a capped fill's rest
		s.target = f
		dq = book.FloatTarget(f, s.acct.Cash+s.held.Qty*p, p, s.sizing, s.held.Qty)
	case strategy.Qty:
		s.cost.carry = 0
		dq = in.Value
		s.target = math.NaN()
	default:
		return
	}
	if s.allow != nil {
		if dq = s.allow.size(dec, p, s.held.Qty, dq); s.allow.tripped != nil {
			return // paused: no order
		}
	}
	if s.keep {
		// Only a result's warnings report the participation: an
		// evaluation does not read the bar's volume for it.
		s.participate(i, dq)
	}
	if s.cost.volPct > 0 {
		dq = s.capFill(i, dq)
	}
	if dq != 0 {
		s.fillAt(i, p, dq, s.slip, s.fee)
		if s.allow != nil {
			s.allow.mark(i, s.acct.Cash+s.held.Qty*p)
		}
	}
	if dq != 0 || in.Exits != s.exits {
		s.place(in.Exits)
	}
}

// fillAt fills dq (signed) at mark p on bar i, with slippage slip (a
// fraction of the price) and fee rate fee, through the book.
func (s *sim) fillAt(i int, p, dq, slip, fee float64) {
	s.fillWith(i, p, dq, slip, fee)
	s.entered = true
	if s.acct.Cash < -1e-9*s.capital && s.negCash < 0 {
		s.negCash = i
	}
}

// fillWith books a fill with fee rate fee and records the trip it closed.
func (s *sim) fillWith(i int, p, dq, slip, fee float64) {
	charged, closed := s.acct.Fill(&s.held, i, p, dq, slip, fee)
	if s.onFill != nil {
		s.onFill(FillEvent{Bar: i, Mark: p, Qty: dq, Slip: slip, Rate: fee, Fee: charged, Exit: s.exitAs})
	}
	if closed {
		s.closeTrade(i, &s.held.Closed)
	}
}

func (s *sim) closeTrade(i int, o *book.FloatTrip) {
	pnl := o.PnL()
	s.closed.add(pnl)
	if !s.keep {
		return
	}
	s.trades = append(s.trades, Trade{
		Side:       sideName(o.Side()),
		EntryBar:   o.EntryBar,
		ExitBar:    i,
		EntryPrice: o.Entry,
		ExitPrice:  o.ExitPrice(),
		Quantity:   o.QtyIn,
		PnL:        pnl,
		Return:     pnl / o.ValueIn,
		Fees:       o.Fees,
		Exit:       s.exitAs,
	})
}

// goBust ends trading when equity reaches zero: the position is closed at
// bar i's close without further costs and equity stays where it fell.
func (s *sim) goBust(i int) {
	s.bust = i
	s.legs, s.legKind = s.legs[:0], s.legKind[:0]
	if s.held.Qty != 0 {
		s.fillWith(i, s.bars.Close[i], -s.held.Qty, 0, 0)
	}
}

// openPosition reports the round trip still open after the last bar,
// marked at its close without exit costs.
func (s *sim) openPosition() *Position {
	if !s.held.Trip.Active {
		return nil
	}
	o, last := &s.held.Trip, s.bars.Len()-1
	c := s.bars.Close[last]
	held := math.Abs(s.held.Qty)
	return &Position{
		Side:       sideName(o.Side()),
		EntryBar:   o.EntryBar,
		EntryTime:  unixTime(s.bars.Time[o.EntryBar]),
		EntryPrice: o.Entry,
		Quantity:   s.held.Qty,
		Mark:       c,
		PnL:        o.Side()*(o.ValueOut+held*c-o.ValueIn) - o.Fees - o.Costs,
		Fees:       o.Fees,
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
