package research

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path"
	"slices"
	"strings"
	"time"

	"wicket/strategy/backtest"
	"wicket/strategy/history"
	"wicket/strategy/worker"
)

// MaxSeriesSet bounds the series of one request.
const MaxSeriesSet = 32

// A series set is what a request's series names when it names more than
// one: a comma-separated list of series (BTC-USD@1h,ETH-USD@1h), or
// patterns matched against the stored series (*@1d, BTC-*@1h), in any
// mix. Patterns use path.Match syntax (* ? [...]). The names come out in
// the order given, a pattern's matches sorted, each once. A
// single-series strategy runs on each series alone and the results are
// pooled. (A portfolio strategy's universe, the assets it declares and
// holds on one cash account, is another thing: portfolio.go.)

// isPattern says whether a series element is a pattern.
func isPattern(s string) bool { return strings.ContainsAny(s, "*?[") }

// seriesSet resolves spec into series names. single is true when spec is
// one plain name: the request runs as it always has.
func (l *Local) seriesSet(spec string) (names []string, single bool, err error) {
	parts := strings.Split(spec, ",")
	if len(parts) == 1 && !isPattern(strings.TrimSpace(spec)) {
		return []string{strings.TrimSpace(spec)}, true, checkSeries(strings.TrimSpace(spec))
	}
	var stored []string
	seen := map[string]bool{}
	add := func(n string) error {
		if seen[n] {
			return nil
		}
		seen[n] = true
		names = append(names, n)
		if len(names) > MaxSeriesSet {
			return errorf(KindInvalid, "series %q names more than %d series; a series set holds at most %d (narrow the pattern or list fewer)", spec, MaxSeriesSet, MaxSeriesSet)
		}
		return nil
	}
	for _, raw := range parts {
		p := strings.TrimSpace(raw)
		if p == "" {
			return nil, false, errorf(KindInvalid, "series %q has an empty element; separate series with single commas, e.g. BTC-USD@1h,ETH-USD@1h", spec)
		}
		if !isPattern(p) {
			if err := checkSeries(p); err != nil {
				return nil, false, err
			}
			if err := add(p); err != nil {
				return nil, false, err
			}
			continue
		}
		if _, err := path.Match(p, ""); err != nil {
			return nil, false, errorf(KindInvalid, "series pattern %q is malformed: %v; use * and ? (e.g. *@1d)", p, err)
		}
		if stored == nil {
			if stored, err = l.storedSeries(); err != nil {
				return nil, false, err
			}
		}
		matched := 0
		for _, n := range stored {
			if ok, _ := path.Match(p, n); ok {
				matched++
				if err := add(n); err != nil {
					return nil, false, err
				}
			}
		}
		if matched == 0 {
			return nil, false, errorf(KindNotFound, "series pattern %q matches no stored series; stored are: %s", p, strings.Join(stored, ", "))
		}
	}
	return names, false, nil
}

// storedSeries lists the names in the history store, sorted.
func (l *Local) storedSeries() ([]string, error) {
	if err := l.needProject(); err != nil {
		return nil, err
	}
	store, err := history.OpenReadOnly(l.cfg.Project.HistoryPath())
	if err != nil {
		return nil, classify(err)
	}
	defer store.Close()
	infos, err := store.List()
	if err != nil {
		return nil, classify(err)
	}
	out := make([]string, 0, len(infos))
	for _, s := range infos {
		out = append(out, s.Name)
	}
	slices.Sort(out)
	return out, nil
}

// SeriesMetrics are one series' metrics of a combination in a series set.
type SeriesMetrics struct {
	Series  string          `json:"series"`
	Score   *float64        `json:"score"`
	Metrics json.RawMessage `json:"metrics"`
}

// SeriesSweep is one series of a series-set sweep: its count of evaluated
// and failed combinations and the winner's deflated Sharpe ratio among
// that series' trials.
type SeriesSweep struct {
	Series         string          `json:"series"`
	Bars           int             `json:"bars"`
	Evaluated      int             `json:"evaluated"`
	Failed         int             `json:"failed"`
	DeflatedSharpe *DeflatedSharpe `json:"deflated_sharpe"`
}

// sweepSeriesSet sweeps the grid over every series of the set and
// ranks the combinations by their pooled figures.
func (l *Local) sweepSeriesSet(ctx context.Context, req SweepRequest, names []string, progress func(Progress)) (SweepResult, error) {
	if req.Estimate {
		return SweepResult{}, errorf(KindInvalid, "estimate works on one series; estimate on one of the set's series (%s) and multiply by %d", names[0], len(names))
	}
	if err := noPooled(req.RankBy); err != nil {
		return SweepResult{}, err
	}
	plans, err := l.seriesSetPlans(ctx, req, names)
	if err != nil {
		return SweepResult{}, err
	}
	p0 := plans[0]
	count := p0.count
	res := SweepResult{
		Strategy: p0.display, Series: req.Series, SeriesSet: names, RankBy: p0.rankBy, Knobs: p0.swept,
		Combinations: count, Top: []Trial{}, Settings: p0.settings, Warnings: []string{},
	}
	var top int
	top, res.TopClamped = topOf(req.Top)
	total := count * len(names)
	trials, done, refused, err := l.runSeriesSet(ctx, plans, progress)
	if w := refusedWarning(refused); w != "" {
		res.Warnings = append(res.Warnings, w)
	}
	if err != nil {
		return SweepResult{}, err
	}
	if ctx.Err() != nil {
		res.Partial = true
		res.PartialReason = fmt.Sprintf("cancelled after %d of %d runs: %v", done, total, context.Cause(ctx))
	}
	// Per series: its ranking (for the deflated Sharpe ratio) and its span.
	ranks := make([]ranking, len(names))
	for s := range names {
		ranks[s] = rankTrials(trials[s], p0.rankBy)
		res.PerSeries = append(res.PerSeries, SeriesSweep{Series: names[s], Bars: plans[s].bars.Len(), Evaluated: ranks[s].evaluated, Failed: ranks[s].failed})
	}
	l.recordSeriesSet(ctx, plans, trials, &res) // tried, so counted: every series' combinations
	ranked := rankPooled(plans, trials, names, &res)
	if res.Failed > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d runs failed and their combinations are not ranked; errors lists the first", res.Failed))
	}
	if len(ranked) == 0 {
		if !res.Partial && res.Failed > 0 {
			return SweepResult{}, errorf(KindStrategy, "every combination failed on some series; the first (%s): %s", fmtParams(res.Errors[0].Params), res.Errors[0].Message)
		}
		return res, nil
	}
	capF, _ := p0.capital.Float64()
	for r, pt := range ranked[:min(top, len(ranked))] {
		pooled, err := json.Marshal(pt.p.report(len(names), capF))
		if err != nil {
			return SweepResult{}, errorf(KindUnavailable, "encode pooled metrics: %v", err)
		}
		t := Trial{Rank: r + 1, Params: trials[0][pt.combo].Values, Score: backtest.Ratio(pt.p.score(p0.rankBy)), Metrics: pooled}
		for s := range names {
			st := trials[s][pt.combo]
			t.Series = append(t.Series, SeriesMetrics{Series: names[s], Score: reportedScore(st.Scores, p0.rankBy), Metrics: st.Metrics})
		}
		res.Top = append(res.Top, t)
	}
	if len(ranked) > top && res.TopClamped == "" && req.Top == 0 {
		res.TopClamped = fmt.Sprintf("showing the best %d of %d ranked combinations; ask for up to %d with top", top, len(ranked), MaxTop)
	}
	win := ranked[0].combo
	for s := range names {
		res.PerSeries[s].DeflatedSharpe = deflated(trials[s][win].Stats, variance(ranks[s].srs), ranks[s].evaluated)
	}
	res.Warnings = append(res.Warnings, "a series set's deflated Sharpe ratio is per series (per_series): each series' trials deflate the pooled winner's Sharpe ratio on that series")
	if ranked[0].p.trades < backtest.TooFewTrades {
		res.Warnings = append(res.Warnings, fmt.Sprintf("the winner made only %d closed trades over the series set; its metrics rest on too few to judge it by", ranked[0].p.trades))
	}
	return res, nil
}

// seriesSetPlans plans the sweep on each series of the set and
// checks the runs against the cap.
func (l *Local) seriesSetPlans(ctx context.Context, req SweepRequest, names []string) ([]*plan, error) {
	plans := make([]*plan, len(names))
	for s, name := range names {
		p, err := l.plan(ctx, planInput{
			ref: req.StrategyRef, series: name, grid: req.Grid, params: req.Params, rankBy: req.RankBy,
			from: req.From, to: req.To, costs: req.Costs, intrabar: req.Intrabar, maxCombinations: req.MaxCombinations,
		})
		if err != nil {
			return nil, fmt.Errorf("series %s: %w", name, err)
		}
		if p.tooMany != nil {
			return nil, p.tooMany
		}
		plans[s] = p
	}
	count := plans[0].count
	limit := l.cfg.Research.MaxCombinations
	if req.MaxCombinations > 0 {
		limit = min(limit, req.MaxCombinations)
	}
	if count*len(names) > limit {
		return nil, errorf(KindTooMany, "the grid's %d combinations over %d series are %d runs and the cap is %d (research.max_combinations): narrow the grid or the series set", count, len(names), count*len(names), limit)
	}
	return plans, nil
}

// runSeriesSet runs every plan's combinations, and returns the trials per
// series (nil: did not finish), how many finished, and how many forged
// answers a cluster refused.
func (l *Local) runSeriesSet(ctx context.Context, plans []*plan, progress func(Progress)) (trials [][]*worker.Trial, done, refused int, err error) {
	count := plans[0].count
	type owner struct{ series, offset int }
	var tasks []worker.SweepChunk
	var owners []owner
	nw, err := l.chunkWorkers(ctx)
	if err != nil {
		return nil, 0, 0, err
	}
	for s, p := range plans {
		off := 0
		for _, c := range p.chunks(p.base, nw) {
			tasks = append(tasks, c)
			owners = append(owners, owner{s, off})
			off += len(c.Combos)
		}
	}
	trials = make([][]*worker.Trial, len(plans))
	for s := range trials {
		trials[s] = make([]*worker.Trial, count)
	}
	total := count * len(plans)
	report(progress, Progress{Done: 0, Total: total, Message: fmt.Sprintf("0 of %d runs (%d combinations × %d series)", total, count, len(plans))})
	err = l.runTasks(ctx, tasks, func(i int, resp *worker.SweepChunkResult) ([]worker.SweepChunk, error) {
		o := owners[i]
		for j := range resp.Trials {
			trials[o.series][plans[o.series].index(o.offset+j)] = &resp.Trials[j]
		}
		done += len(resp.Trials)
		refused += resp.Refused
		report(progress, Progress{Done: done, Total: total, Message: fmt.Sprintf("%d of %d runs", done, total)})
		return nil, nil
	})
	if err != nil {
		return nil, done, refused, classify(err)
	}
	return trials, done, refused, nil
}

// reportSleeve reads the figures pool needs from a backtest report's
// metrics (as reported, to six significant digits).
func reportSleeve(metrics json.RawMessage) (sleeve, error) {
	var m backtest.ReportedMetrics
	if err := json.Unmarshal(metrics, &m); err != nil {
		return sleeve{}, err
	}
	f := func(p *float64) float64 {
		if p == nil {
			return math.NaN()
		}
		return *p
	}
	s := sleeve{totalReturn: f(m.TotalReturn), sharpe: f(m.Sharpe), sortino: f(m.Sortino), maxDD: f(m.MaxDrawdown),
		winRate: f(m.WinRate), exposure: f(m.Exposure), trades: m.Trades}
	var err error
	if s.start, err = time.Parse(time.RFC3339, m.Start); err != nil {
		return s, err
	}
	s.end, err = time.Parse(time.RFC3339, m.End)
	return s, err
}

// SeriesSetBacktest is BacktestResult.Result for a series set: every
// series' report, in the set's order, and the pooled figures. The JSON
// key of the set's series stays "universe" (the series the run covered,
// as in a portfolio's report), so readers of the result keep working.
type SeriesSetBacktest struct {
	SeriesSet []string         `json:"universe"`
	Pooled    Pooled           `json:"pooled"`
	Results   []SeriesBacktest `json:"results"`
}

// SeriesBacktest is one series' backtest report in a series set.
type SeriesBacktest struct {
	Series string          `json:"series"`
	Result json.RawMessage `json:"result"`
}

// backtestSeriesSet backtests the strategy on every series of the
// set (one after another, each in a worker) and pools the figures.
func (l *Local) backtestSeriesSet(ctx context.Context, req BacktestRequest, names []string) (BacktestResult, error) {
	if req.Plot {
		return BacktestResult{}, errorf(KindInvalid, "plot draws one series; plot one of the set's series (%s)", names[0])
	}
	req.Report = false // a tear sheet shows one series: a series set has none
	out := SeriesSetBacktest{SeriesSet: names}
	var ss []sleeve
	var text strings.Builder
	var output strings.Builder
	var bar time.Duration
	capital := 0.0
	for _, name := range names {
		one := req
		one.Series = name
		r, err := l.Backtest(ctx, one)
		if err != nil {
			return BacktestResult{}, fmt.Errorf("series %s: %w", name, err)
		}
		var rep struct {
			Metrics  json.RawMessage `json:"metrics"`
			Settings struct {
				Capital string `json:"capital"`
			} `json:"settings"`
		}
		if err := json.Unmarshal(r.Result, &rep); err != nil {
			return BacktestResult{}, errorf(KindUnavailable, "series %s: read the report: %v", name, err)
		}
		s, err := reportSleeve(rep.Metrics)
		if err != nil {
			return BacktestResult{}, errorf(KindUnavailable, "series %s: read the metrics: %v", name, err)
		}
		fmt.Sscan(rep.Settings.Capital, &capital)
		_, g, _ := history.CheckSeries(name)
		bar = g.Duration()
		ss = append(ss, s)
		out.Results = append(out.Results, SeriesBacktest{Series: name, Result: r.Result})
		text.WriteString(r.Text)
		if !strings.HasSuffix(r.Text, "\n") {
			text.WriteString("\n")
		}
		text.WriteString("\n")
		if r.Output != "" {
			fmt.Fprintf(&output, "[%s]\n%s", name, r.Output)
		}
	}
	p := pool(ss, bar)
	out.Pooled = p.report(len(names), capital)
	b, err := json.Marshal(out)
	if err != nil {
		return BacktestResult{}, errorf(KindUnavailable, "encode the series set's result: %v", err)
	}
	pm := out.Pooled
	fmt.Fprintf(&text, "pooled over %d series (equal weight, not rebalanced): total return %s  cagr %s  mean sharpe %s  worst drawdown %s  trades %d\n",
		len(names), fmtPct(pm.TotalReturn), fmtPct(pm.CAGR), fmtFixed(pm.Sharpe), fmtPct(pm.MaxDrawdown), pm.Trades)
	return BacktestResult{Result: b, Text: text.String(), Output: output.String()}, nil
}

func fmtPct(x *float64) string {
	if x == nil {
		return "-"
	}
	return fmt.Sprintf("%.2f%%", *x*100)
}

func fmtFixed(x *float64) string {
	if x == nil {
		return "-"
	}
	return fmt.Sprintf("%.3f", *x)
}

// walkForwardSeriesSet runs the walk-forward analysis on every series of
// the set, one after another (each spread over the pool), and pools
// the stitched out-of-sample figures.
func (l *Local) walkForwardSeriesSet(ctx context.Context, req WalkForwardRequest, names []string, progress func(Progress)) (WalkForwardResult, error) {
	if err := noPooled(req.RankBy); err != nil {
		return WalkForwardResult{}, err
	}
	res := WalkForwardResult{Series: req.Series, SeriesSet: names, Anchored: req.Anchored, Windows: []Window{}, Equity: []EquityPoint{}, Warnings: []string{}}
	var ss []sleeve
	var bar time.Duration
	capital := 0.0
	for k, name := range names {
		one := req
		one.Series = name
		r, err := l.WalkForward(ctx, one, func(p Progress) {
			report(progress, Progress{Done: k*p.Total + p.Done, Total: len(names) * p.Total, Message: name + ": " + p.Message})
		})
		if err != nil {
			return WalkForwardResult{}, fmt.Errorf("series %s: %w", name, err)
		}
		res.Strategy, res.RankBy, res.Knobs, res.Combinations, res.Settings = r.Strategy, r.RankBy, r.Knobs, r.Combinations, r.Settings
		res.PerSeries = append(res.PerSeries, r)
		if r.Partial {
			res.Partial, res.PartialReason = true, name+": "+r.PartialReason
			break
		}
		o := r.OutOfSample
		if o == nil {
			continue
		}
		f := func(p *float64) float64 {
			if p == nil {
				return math.NaN()
			}
			return *p
		}
		s := sleeve{totalReturn: f(o.TotalReturn), sharpe: f(o.Sharpe), sortino: f(o.Sortino), maxDD: f(o.MaxDrawdown),
			winRate: math.NaN(), exposure: math.NaN(), trades: o.Trades}
		s.start, _ = time.Parse(time.RFC3339, o.Start)
		s.end, _ = time.Parse(time.RFC3339, o.End)
		ss = append(ss, s)
		fmt.Sscan(r.Settings.Capital, &capital)
		_, g, _ := history.CheckSeries(name)
		bar = g.Duration()
	}
	if len(ss) > 0 {
		p := pool(ss, bar).report(len(ss), capital)
		p.WinRate, p.Exposure = nil, nil // the stitched curves carry neither
		res.Pooled = &p
	}
	return res, nil
}
