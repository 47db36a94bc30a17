package research

import (
	"context"
	"fmt"
	"math"
	"time"

	"wicket/strategy/backtest"

	"wicket/strategy/worker"
)

// window is one walk-forward step in bar indexes of the analysed range,
// each half-open: in-sample [isLo, isHi), out-of-sample [oosLo, oosHi),
// with isHi == oosLo as layout lays them and isHi == oosLo − purge once
// purged (purge.go).
type window struct{ isLo, isHi, oosLo, oosHi int }

// layout lays windows over n bars. Give windows, or isBars and oosBars,
// or windows and one of them, or none (DefaultWindows); zero means not
// given. The out-of-sample windows tile the end of the range back to
// back; bars left over go to the start (unused when rolling, part of
// every in-sample window when anchored).
func layout(n, windows, isBars, oosBars int, anchored bool) ([]window, error) {
	switch {
	case windows < 0 || isBars < 0 || oosBars < 0:
		return nil, errorf(KindInvalid, "windows, in_sample and out_of_sample must be positive")
	case windows == 0 && isBars == 0 && oosBars == 0:
		windows = DefaultWindows
	}
	switch {
	case windows > MaxWindows:
		return nil, errorf(KindInvalid, "windows %d is above the maximum of %d", windows, MaxWindows)
	case windows == 0 && (isBars == 0 || oosBars == 0):
		return nil, errorf(KindInvalid, "give windows (e.g. 6), or in_sample and out_of_sample lengths (e.g. \"360d\" and \"90d\", or bar counts)")
	}
	switch {
	case windows > 0 && isBars == 0 && oosBars == 0:
		oosBars = n / (windows + DefaultInSampleRatio)
		isBars = DefaultInSampleRatio * oosBars
	case windows > 0 && isBars == 0:
		isBars = n - windows*oosBars
	case windows > 0 && oosBars == 0:
		oosBars = (n - isBars) / windows
	case windows == 0:
		windows = (n - isBars) / oosBars
		if windows > MaxWindows {
			return nil, errorf(KindInvalid, "in_sample %d bars and out_of_sample %d bars make %d windows over the range's %d bars, above the maximum of %d; lengthen out_of_sample, set windows, or narrow the range with from",
				isBars, oosBars, windows, n, MaxWindows)
		}
	}
	if windows < 1 || isBars < 1 || oosBars < 1 || isBars+windows*oosBars > n {
		return nil, errorf(KindInvalid, "the range's %d bars cannot hold an in-sample window of %d bars followed by %d out-of-sample windows of %d bars; use fewer or shorter windows or a longer range",
			n, isBars, windows, oosBars)
	}
	lead := n - isBars - windows*oosBars
	out := make([]window, windows)
	for k := range out {
		w := &out[k]
		w.oosLo = lead + isBars + k*oosBars
		w.oosHi = w.oosLo + oosBars
		w.isHi = w.oosLo
		w.isLo = w.oosLo - isBars
		if anchored {
			w.isLo = 0
		}
	}
	return out, nil
}

// minOutOfSampleBars is the shortest out-of-sample window (returns need
// a few bars to mean anything).
const minOutOfSampleBars = 2

// WalkForward runs a walk-forward analysis: for each window it sweeps the
// grid over the in-sample bars only, picks the best combination by
// req.RankBy, and backtests it over the out-of-sample window that follows
// (indicators see the in-sample bars before it; trading starts flat at
// its first bar). The out-of-sample results are stitched into one equity
// curve. Windows too short for the strategy's warm-up are refused before
// the sweeps run. progress, when set, is called from one goroutine at a
// time and must return quickly (the workers' next chunks wait on it).
// When ctx ends mid-analysis, WalkForward returns promptly with the
// leading windows that finished, Partial set, and no error.
func (l *Local) WalkForward(ctx context.Context, req WalkForwardRequest, progress func(Progress)) (WalkForwardResult, error) {
	gate, err := l.gatePlan(ctx, req.Plan, req.StrategyRef, req.Series, &req.From, &req.To) // plan_sealed.go
	if err != nil {
		return WalkForwardResult{}, err
	}
	if err := gate.inSpace(req.Grid, req.Params); err != nil { // plan_space.go
		return WalkForwardResult{}, err
	}
	m, err := l.modeOf(req.Series) // mode.go
	if err != nil {
		return WalkForwardResult{}, err
	}
	return m.walkForward(ctx, req, gate, progress)
}

func (m seriesMode) walkForward(ctx context.Context, req WalkForwardRequest, gate *planGate, progress func(Progress)) (WalkForwardResult, error) {
	l := m.l
	p, err := l.plan(ctx, planInput{
		ref: req.StrategyRef, series: req.Series, grid: req.Grid, params: req.Params, rankBy: req.RankBy,
		from: req.From, to: req.To, costs: req.Costs, intrabar: req.Intrabar, maxCombinations: req.MaxCombinations,
	})
	if err != nil {
		return WalkForwardResult{}, err
	}
	if p.tooMany != nil {
		return WalkForwardResult{}, p.tooMany
	}
	wins, purge, embargo, err := windowsOf(req, p)
	if err != nil {
		return WalkForwardResult{}, err
	}
	// Each window's in-sample sweep keeps its returns in PBO blocks, as a
	// sweep does: the window's overfitting and the export's recomputation
	// read them.
	p.base.Blocks = pboBlocksFor(p.count)
	if err := gate.admit(len(wins) * p.count); err != nil {
		return WalkForwardResult{}, err
	}
	sr := wfSeries{p: p, times: p.bars.Time}

	// The warm-up, measured on the first (shortest) in-sample window with
	// each swept knob at its extremes, before any sweep runs.
	probe := sr.rangeOf(wins[0].isLo, wins[0].isHi)
	probe.Combos = p.corners()
	if err := l.checkWarmup(ctx, probe, wins[0].isHi-wins[0].isLo); err != nil {
		return WalkForwardResult{}, err
	}

	res := WalkForwardResult{
		Strategy: p.display, Series: req.Series, RankBy: p.rankBy, Anchored: req.Anchored, Knobs: p.swept,
		Combinations: p.count, Windows: []Window{}, Equity: []EquityPoint{}, Settings: p.settings, Warnings: []string{},
	}
	gate.warn(&res.Warnings)
	run, err := l.runWindows(ctx, sr, wins, embargo, progress)
	if err != nil {
		return WalkForwardResult{}, err
	}
	if w := refusedWarning(run.refused); w != "" {
		res.Warnings = append(res.Warnings, w)
	}
	if err := sr.stitch(ctx, wins, run, &res); err != nil {
		return WalkForwardResult{}, err
	}
	sr.validationSpans(wins, purge, embargo, &res)
	windows := make([]inSample, len(wins))
	for k, w := range wins {
		is := sr.span(w.isLo, w.isHi)
		windows[k] = inSample{from: is.From, to: is.To, trials: run.trials[k]}
		if k < len(res.Windows) { // a finished window: its winner
			windows[k].winner = run.trials[k][run.ranks[k].order[0]]
		}
	}
	l.afterWalkForward(ctx, p, req, windows, &res) // tried, so counted, whatever the check finds
	if res.LookaheadCheck, err = l.checkWindows(ctx, p, wins, sr.times, &res); err != nil {
		return WalkForwardResult{}, err
	}
	return res, nil
}

// windowsOf lays out req's windows over the plan's bars and purges them,
// refusing lengths shorter than a bar, out-of-sample windows too short
// to judge and a purge or an embargo that leaves too little to train on.
// It returns the purge and the embargo in bars.
func windowsOf(req WalkForwardRequest, p *plan) (wins []window, purge, embargo int, err error) {
	bar := p.gran.Duration()
	isBars, oosBars := req.InSample.barsOf(bar), req.OutOfSample.barsOf(bar)
	for _, c := range []struct {
		name string
		l    Length
		bars int
	}{{"in_sample", req.InSample, isBars}, {"out_of_sample", req.OutOfSample, oosBars}} {
		if !c.l.IsZero() && c.bars < 1 {
			return nil, 0, 0, errorf(KindInvalid, "%s %s is shorter than one %s bar", c.name, c.l, p.gran)
		}
	}
	if purge, embargo, err = validationBars(req, bar); err != nil {
		return nil, 0, 0, err
	}
	if wins, err = layout(p.bars.Len(), req.Windows, isBars, oosBars, req.Anchored); err != nil {
		return nil, 0, 0, err
	}
	if got := wins[0].oosHi - wins[0].oosLo; got < minOutOfSampleBars {
		return nil, 0, 0, errorf(KindInvalid, "out-of-sample windows of %d bar are too short; each needs at least %d bars: use fewer windows or a longer range", got, minOutOfSampleBars)
	}
	if err := purgeWindows(wins, purge); err != nil {
		return nil, 0, 0, err
	}
	if err := checkEmbargo(wins, embargo, p.rankBy); err != nil {
		return nil, 0, 0, err
	}
	return wins, purge, embargo, nil
}

// wfSeries is a walk-forward's plan with its bars' times: the spans and
// the chunk ranges of its windows.
type wfSeries struct {
	p     *plan
	times []int64
}

// span is bars [lo, hi) as a result names them.
func (s wfSeries) span(lo, hi int) Span {
	return Span{From: unixRFC3339(s.times[lo]), To: unixRFC3339(s.times[hi-1]), Bars: hi - lo}
}

// rescorer rescores the plan's in-sample trials (purge.go).
func (s wfSeries) rescorer() rescorer {
	capF, _ := s.p.capital.Float64()
	return rescorer{capital: capF, periodsPerYear: s.p.gran.PeriodsPerYear(), bar: s.p.gran.Duration(), blocks: s.p.base.Blocks}
}

// rangeOf is the plan's chunk over bars [lo, hi).
func (s wfSeries) rangeOf(lo, hi int) worker.SweepChunk {
	r := s.p.base
	r.From, r.To = unixRFC3339(s.times[lo]), unixRFC3339(s.times[hi-1])
	r.Digest = s.p.bars.Slice(lo, hi).Digest()
	return r
}

// wfRun is what a walk-forward's windows gave: per window the in-sample
// trials, their ranking and the winner's out-of-sample trial (nil for a
// window that did not finish).
type wfRun struct {
	trials  [][]*worker.Trial
	ranks   []ranking
	oos     []*worker.Trial
	refused int
}

// runWindows runs every window's in-sample sweep, windows in order; as
// soon as a window's sweep is complete its trials are rescored without
// their embargoed bars and its winner is queued out-of-sample, with the
// bars before it for the indicators.
func (l *Local) runWindows(ctx context.Context, sr wfSeries, wins []window, embargo int, progress func(Progress)) (wfRun, error) {
	p, times := sr.p, sr.times
	total := len(wins) * (p.count + 1)
	done := 0
	tick := func(msg string) {
		report(progress, Progress{Done: done, Total: total, Message: msg})
	}
	tick(fmt.Sprintf("%d windows of %d combinations", len(wins), p.count))

	type owner struct {
		win, offset int
		oos         bool
	}
	var tasks []worker.SweepChunk
	var owners []owner
	nw, err := l.chunkWorkers(ctx)
	if err != nil {
		return wfRun{}, err
	}
	keeps := make([][]bool, len(wins))
	for k, w := range wins {
		keeps[k] = keepMask(wins, k, embargo)
		off := 0
		for _, c := range p.chunks(sr.rangeOf(w.isLo, w.isHi), nw) {
			c.Returns = keeps[k] != nil // rescored below
			tasks = append(tasks, c)
			owners = append(owners, owner{win: k, offset: off})
			off += len(c.Combos)
		}
	}
	run := wfRun{trials: make([][]*worker.Trial, len(wins)), ranks: make([]ranking, len(wins)), oos: make([]*worker.Trial, len(wins))}
	left := make([]int, len(wins))
	for k := range wins {
		run.trials[k] = make([]*worker.Trial, p.count)
		left[k] = p.count
	}
	trials, ranks := run.trials, run.ranks
	err = l.runTasks(ctx, tasks, func(i int, resp *worker.SweepChunkResult) ([]worker.SweepChunk, error) {
		o := owners[i]
		k := o.win
		run.refused += resp.Refused
		if o.oos {
			run.oos[k] = &resp.Trials[0]
			done++
			tick(fmt.Sprintf("window %d of %d: out-of-sample", k+1, len(wins)))
			return nil, nil
		}
		for j := range resp.Trials {
			trials[k][p.index(o.offset+j)] = &resp.Trials[j]
		}
		left[k] -= len(resp.Trials)
		done += len(resp.Trials)
		tick(fmt.Sprintf("window %d of %d: in-sample sweep", k+1, len(wins)))
		if left[k] > 0 {
			return nil, nil
		}
		// The window's sweep is complete: rank it without its embargoed
		// bars, and pick its winner, refusing any warm-up the probe
		// missed.
		if keeps[k] != nil {
			for _, t := range trials[k] {
				if err := sr.rescorer().rescore(t, keeps[k]); err != nil {
					return nil, err
				}
			}
		}
		ranks[k] = rankTrials(trials[k], p.rankBy)
		if len(ranks[k].order) == 0 {
			return nil, errorf(KindStrategy, "window %d: every combination failed in-sample; the first (%s): %s",
				k+1, fmtParams(ranks[k].errors[0].Params), ranks[k].errors[0].Message)
		}
		w := wins[k]
		for _, t := range trials[k] {
			if t.Error == "" && !warmupFits(t.Warmup, w.isHi-w.isLo) {
				return nil, warmupError(w.isHi-w.isLo, t.Warmup, t.Values)
			}
		}
		r := sr.rangeOf(w.isLo, w.oosHi)
		r.TradeFrom = unixRFC3339(times[w.oosLo])
		r.Returns = true
		r.Combos = []map[string]any{trials[k][ranks[k].order[0]].Values}
		owners = append(owners, owner{win: k, oos: true})
		return []worker.SweepChunk{r}, nil
	})
	if err != nil {
		return wfRun{}, classify(err)
	}
	return run, nil
}

// stitch joins the out-of-sample runs of the leading windows that
// finished into res: the windows, the stitched curve and its metrics.
func (s wfSeries) stitch(ctx context.Context, wins []window, run wfRun, res *WalkForwardResult) error {
	p, times := s.p, s.times
	capF, _ := p.capital.Float64()
	equity := capF
	var curveT []int64
	var curveE, curveR []float64
	var isCAGR []float64
	trades := 0
	for k, w := range wins {
		if run.oos[k] == nil {
			break
		}
		win := run.trials[k][run.ranks[k].order[0]]
		ot := run.oos[k]
		if ot.Error != "" {
			return errorf(KindStrategy, "window %d: the in-sample winner (%s) failed out-of-sample: %s", k+1, fmtParams(win.Values), ot.Error)
		}
		if len(ot.Returns) != w.oosHi-w.oosLo {
			return errorf(KindUnavailable, "window %d: %d out-of-sample returns for %d bars", k+1, len(ot.Returns), w.oosHi-w.oosLo)
		}
		for i, r := range ot.Returns {
			equity *= 1 + r
			curveT = append(curveT, times[w.oosLo+i])
			curveE = append(curveE, equity)
			curveR = append(curveR, r)
		}
		trades += ot.Trades
		isC, oosC := float64(win.Scores.CAGR), float64(ot.Scores.CAGR)
		isCAGR = append(isCAGR, isC)
		rk := run.ranks[k]
		res.Windows = append(res.Windows, Window{
			Index: k + 1, InSample: s.span(w.isLo, w.isHi), OutOfSample: s.span(w.oosLo, w.oosHi),
			Params:        win.Values,
			InSampleScore: reportedScore(win.Scores, p.rankBy), OutOfSampleScore: reportedScore(ot.Scores, p.rankBy),
			Efficiency:      efficiency(oosC, isC),
			InSampleMetrics: win.Metrics, OutOfSampleMetrics: ot.Metrics,
			Evaluated: rk.evaluated, Failed: rk.failed,
			DeflatedSharpe: deflated(win.Stats, variance(rk.srs), rk.evaluated),
			Overfitting:    overfitting(run.trials[k], p.base.Blocks),
		})
		if rk.failed > 0 {
			res.Warnings = append(res.Warnings, fmt.Sprintf("window %d: %d of %d in-sample combinations failed; the first: %s", k+1, rk.failed, rk.evaluated, rk.errors[0].Message))
		}
	}
	if len(res.Windows) < len(wins) {
		res.Partial = true
		res.PartialReason = fmt.Sprintf("cancelled after %d of %d windows: %v", len(res.Windows), len(wins), context.Cause(ctx))
		if ctx.Err() == nil {
			res.PartialReason = fmt.Sprintf("stopped after %d of %d windows", len(res.Windows), len(wins))
		}
	}
	if len(curveE) > 0 {
		s.stitched(backtest.Curve{Time: curveT, Equity: curveE}, curveR, isCAGR, trades, res)
	}
	return nil
}

// stitched sets res's out-of-sample metrics and curve from the stitched
// curve and returns, and its efficiency against the in-sample windows'
// annual returns isCAGR.
func (s wfSeries) stitched(curve backtest.Curve, returns, isCAGR []float64, trades int, res *WalkForwardResult) {
	p := s.p
	capF, _ := p.capital.Float64()
	m := backtest.EquityMetrics(curve, returns, capF, p.gran.PeriodsPerYear(), p.gran.Duration())
	res.OutOfSample = &Stitched{
		TotalReturn: backtest.Ratio(m.TotalReturn), CAGR: backtest.Ratio(m.CAGR), Sharpe: backtest.Ratio(m.Sharpe), Sortino: backtest.Ratio(m.Sortino),
		MaxDrawdown: backtest.Ratio(m.MaxDrawdown), Calmar: backtest.Ratio(m.Calmar), Trades: trades,
		FinalEquity: backtest.Money(m.FinalEquity), Bars: m.Bars,
		Start: m.Start.UTC().Format(time.RFC3339), End: m.End.UTC().Format(time.RFC3339), PeriodsPerYear: m.PeriodsPerYear,
	}
	for _, pt := range backtest.Downsample(curve, capF, backtest.MaxEquityPoints) {
		res.Equity = append(res.Equity, EquityPoint{Time: pt.Time.UTC().Format(time.RFC3339), Equity: backtest.Money(pt.Equity), Drawdown: backtest.Ratio(pt.Drawdown)})
	}
	var sum float64
	for _, c := range isCAGR {
		sum += c
	}
	isAnnual := sum / float64(len(isCAGR))
	res.InSampleAnnualReturn = backtest.Ratio(isAnnual)
	res.OutOfSampleAnnualReturn = backtest.Ratio(m.CAGR)
	res.Efficiency = efficiency(m.CAGR, isAnnual)
	if res.Efficiency == nil {
		res.Warnings = append(res.Warnings, "walk-forward efficiency is undefined: the in-sample annualised return is not positive, so there was no edge to carry forward")
	}
	if trades < backtest.TooFewTrades {
		res.Warnings = append(res.Warnings, fmt.Sprintf("only %d closed trades out-of-sample: too few to judge the strategy by; use longer windows or a finer granularity", trades))
	}
}

// efficiency is oos / is, undefined (nil) when is is not positive.
func efficiency(oos, is float64) *float64 {
	if !(is > 0) || math.IsNaN(oos) {
		return nil
	}
	return backtest.Ratio(oos / is)
}

// warmupFits says whether an in-sample window of isBars bars leaves room
// to trade after a warm-up of warmup bars: at least as many bars again.
func warmupFits(warmup, isBars int) bool { return isBars >= 2*warmup }

func warmupError(isBars, warmup int, at map[string]any) error {
	return errorf(KindInvalid, "in-sample windows of %d bars are too short for this strategy's warm-up of %d bars (at %s): each needs at least %d bars (twice the warm-up) to leave room to trade; use fewer windows, a longer in_sample, or a longer range",
		isBars, warmup, fmtParams(at), 2*warmup)
}

// checkWarmup runs probe (the extreme combinations on the first
// in-sample window) and refuses windows its warm-ups do not fit.
func (l *Local) checkWarmup(ctx context.Context, probe worker.SweepChunk, isBars int) error {
	var resp worker.SweepChunkResult
	if err := l.cfg.Pool.Do(ctx, worker.KindSweep, probe, &resp); err != nil {
		return classify(err)
	}
	worst := -1
	for i, t := range resp.Trials {
		if t.Error == "" && (worst < 0 || t.Warmup > resp.Trials[worst].Warmup) {
			worst = i
		}
	}
	if worst >= 0 && !warmupFits(resp.Trials[worst].Warmup, isBars) {
		return warmupError(isBars, resp.Trials[worst].Warmup, resp.Trials[worst].Values)
	}
	return nil
}

// maxCorners bounds the warm-up probe.
const maxCorners = 16

// corners returns the combinations with each swept numeric knob at its
// smallest or largest value (every mix of them when there are few, else
// the all-smallest and the all-largest), other swept knobs at their first
// value.
func (p *plan) corners() []map[string]any {
	lo, hi := make([]any, len(p.axes)), make([]any, len(p.axes))
	var varying []int
	for k, vals := range p.axes {
		lo[k], hi[k] = vals[0], vals[0]
		for _, v := range vals {
			if f, ok := toF(v); ok {
				if lf, _ := toF(lo[k]); f < lf {
					lo[k] = v
				}
				if hf, _ := toF(hi[k]); f > hf {
					hi[k] = v
				}
			}
		}
		if fmt.Sprint(lo[k]) != fmt.Sprint(hi[k]) {
			varying = append(varying, k)
		}
	}
	build := func(high func(k int) bool) map[string]any {
		c := make(map[string]any, len(p.fixed)+len(p.axes))
		for k, v := range p.fixed {
			c[k] = v
		}
		for k := range p.axes {
			c[p.swept[k]] = lo[k]
			if high(k) {
				c[p.swept[k]] = hi[k]
			}
		}
		return c
	}
	if 1<<len(varying) > maxCorners {
		return []map[string]any{
			build(func(int) bool { return false }),
			build(func(int) bool { return true }),
		}
	}
	out := make([]map[string]any, 0, 1<<len(varying))
	for mask := range 1 << len(varying) {
		out = append(out, build(func(k int) bool {
			for bit, v := range varying {
				if v == k {
					return mask&(1<<bit) != 0
				}
			}
			return false
		}))
	}
	return out
}

func toF(v any) (float64, bool) {
	switch v := v.(type) {
	case float64:
		return v, true
	case int64:
		return float64(v), true
	}
	return 0, false
}

func unixRFC3339(t int64) string { return time.Unix(t, 0).UTC().Format(time.RFC3339) }
