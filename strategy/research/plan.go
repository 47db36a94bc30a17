package research

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"wicket/strategy"
	"wicket/strategy/backtest"
	"wicket/strategy/history"
	"wicket/strategy/scriptapi"
	"wicket/strategy/ta"
	"wicket/strategy/worker"
)

// planInput is what sweeps and walk-forward analyses have in common.
type planInput struct {
	ref             StrategyRef
	series          string
	grid            Grid
	params          map[string]any
	rankBy          string
	from, to        string
	costs           Costs
	intrabar        string // path (default) or pessimistic
	maxCombinations int
	// barsInWorker leaves the bars to the workers: the caller checks that
	// the series exists, the worker that answers the params request reads
	// the bars into its cache and reports what it read (digest, count,
	// span), every chunk names that digest, and this process never holds
	// them. Without it the caller reads the bars itself (a walk-forward
	// cuts windows by their times, a series set pools them).
	barsInWorker bool
	// shareDir, with barsInWorker on the local pool, is a directory
	// private to this sweep in which the params request's worker writes
	// the bars once, for every worker to map read-only
	// (worker.BarsRange.ShareDir); the caller removes it.
	shareDir string
	// space is an optimisation's search space: the grid's values are
	// checked against the knobs, but its size is not capped (a budget
	// bounds the trials) and the combinations are never listed.
	space bool
}

// plan is a validated grid over a strategy and a range: everything needed
// to hand chunks to workers.
type plan struct {
	display  string // the strategy as the result names it
	rankBy   string
	gran     strategy.Granularity
	bars     strategy.Bars // the range's bars (times used to lay out windows)
	knobs    []scriptapi.Knob
	swept    []string // swept knob names, in declaration order
	axes     [][]any  // values per swept knob, in the knobs' Go types
	fixed    map[string]any
	count    int
	tooMany  *Error // set when count is over the cap (an estimate still reports it)
	capital  decimal.Decimal
	settings Settings
	base     worker.SweepChunk // everything but the range and the combinations
	seen     *worker.BarsSeen  // what the params request's worker, or a cluster's Warm, read (barsInWorker)
	order    []int             // the chunks' order of the combinations (evalOrder); nil: their own
	asked    time.Duration     // the params request's round trip (SweepTiming.Params)
	// cost is what a combination costs a bar as its dispatcher measured
	// it (a cluster's coster), for the chunks' floor (worthChunkAt); 0:
	// barTrialCost.
	cost time.Duration

	// ledgerName is the name its trials are recorded under (LedgerName).
	ledgerName string
}

// saw takes a chunk's report of its bars: other bars than the plan's
// mean the series changed while the sweep ran (a worker that read the
// store finds the change itself, a cluster's copy cannot).
func (p *plan) saw(b worker.BarsSeen) error {
	switch {
	case p.seen == nil:
		p.seen = &b
	case b.Digest != p.seen.Digest:
		return errorf(KindUnavailable, "the bars of %s changed while the sweep ran (another import or fetch wrote the series); run it again", p.base.Series)
	}
	return nil
}

// span is the first and last bar time (RFC 3339) of the plan's bars, or
// its settings' range when they are not known.
func (p *plan) span() (from, to string) {
	switch {
	case p.bars.Len() > 0:
		return unixRFC3339(p.bars.Time[0]), unixRFC3339(p.bars.Time[p.bars.Len()-1])
	case p.seen != nil && p.seen.Count > 0:
		return unixRFC3339(p.seen.First), unixRFC3339(p.seen.Last)
	}
	return p.settings.From, p.settings.To
}

// plan validates in and expands its grid against the strategy's knobs
// before any combination runs.
func (l *Local) plan(ctx context.Context, in planInput) (*plan, error) {
	label, source, err := l.resolve(in.ref)
	if err != nil {
		return nil, err
	}
	if err := checkSeries(in.series); err != nil {
		return nil, err
	}
	if err := l.needProject(); err != nil {
		return nil, err
	}
	if err := l.needPool(); err != nil {
		return nil, err
	}
	p := &plan{display: strings.TrimSuffix(label, ".star"), rankBy: in.rankBy}
	if c, ok := l.cfg.Chunks.(coster); ok {
		p.cost = c.TrialCost(source)
	}
	if in.ref.Name != "" {
		p.display = in.ref.Name
	}
	p.ledgerName = LedgerName(in.ref, label, source)
	if p.rankBy == "" {
		p.rankBy = RankSharpe
	}
	if !slices.Contains(RankMetrics, p.rankBy) {
		return nil, errorf(KindInvalid, "rank_by %q is not one of %s", in.rankBy, strings.Join(RankMetrics, ", "))
	}
	limit, err := l.combinationCap(in)
	if err != nil {
		return nil, err
	}
	if len(in.grid) == 0 {
		return nil, errorf(KindInvalid, "grid is empty: map at least one knob to a list of values or {\"from\", \"to\", \"step\"}, e.g. {\"fast\": {\"from\": 5, \"to\": 50, \"step\": 5}}")
	}

	// Costs and range, checked the way a backtest checks them.
	c := l.costs(in.costs)
	BorrowDefault(l.cfg.Research, in.series, &c.CostOptions)
	breq := backtest.Request{Capital: c.Capital, FeeBps: c.FeeBps, SlippageBps: c.SlippageBps, From: in.from, To: in.to,
		Intrabar: in.intrabar, CostOptions: c.CostOptions}
	cfg, err := breq.Config(backtest.DefaultConfig())
	if err != nil {
		return nil, classify(err)
	}
	p.capital = cfg.Capital
	p.settings = Settings{Capital: cfg.Capital.String(), FeeBps: cfg.FeeBps, SlippageBps: cfg.SlippageBps}
	if !cfg.From.IsZero() {
		p.settings.From = cfg.From.UTC().Format(time.RFC3339)
	}
	if !cfg.To.IsZero() {
		p.settings.To = cfg.To.UTC().Format(time.RFC3339)
	}

	params, digest, err := l.knobsAndBars(ctx, p, in, label, source, cfg)
	if err != nil {
		return nil, err
	}
	p.knobs = params.Knobs
	if params.Bars != nil {
		p.seen, digest = params.Bars, params.Bars.Digest
	}
	if err := p.expand(in.grid, in.params, limit); err != nil {
		return nil, err
	}
	if n := p.barCount(); n > 0 && p.tooMany == nil && !in.space {
		p.order = evalOrder(p.count, p.axes, ta.Columns(workerMemo, n))
	}
	p.base = worker.SweepChunk{
		Name: label, Source: source, IndicatorsDir: l.indicatorsDir(),
		HistoryPath: l.cfg.Project.HistoryPath(), Series: in.series,
		From: p.settings.From, To: p.settings.To,
		Capital: p.settings.Capital, FeeBps: cfg.FeeBps, SlippageBps: cfg.SlippageBps,
		Intrabar: in.intrabar, CostOptions: c.CostOptions,
		Digest: digest, SharedBars: params.Shared,
	}
	return p, nil
}

// knobsAndBars asks a worker for the strategy's knobs while this process
// reads the bars into p (their digest returned), or checks that the
// worker can: the series must exist and the range hold some. A store
// error is reported before a strategy error. With barsInWorker the worker
// reads the bars into its cache and says what it read (the params
// result's Bars, and Shared when it shares them); on a cluster
// (warmer), the dispatcher reads, hashes and ships them meanwhile and
// says what it read, and the params request only compiles the strategy.
func (l *Local) knobsAndBars(ctx context.Context, p *plan, in planInput, label, source string, cfg backtest.Config) (worker.ParamsResult, string, error) {
	type knobs struct {
		res worker.ParamsResult
		err error
	}
	asked := make(chan knobs, 1)
	preq := worker.StrategyRequest{Name: label, Source: source, IndicatorsDir: l.indicatorsDir(), Overrides: in.params}
	warm, shipped := l.cfg.Chunks.(warmer)
	shipped = shipped && in.barsInWorker
	bars := worker.BarsRange{HistoryPath: l.cfg.Project.HistoryPath(), Series: in.series, From: p.settings.From, To: p.settings.To}
	if in.barsInWorker && !shipped {
		preq.Bars = &bars
		if l.cfg.Chunks == nil {
			preq.Bars.ShareDir, preq.Bars.ShareFrom = in.shareDir, cmp.Or(l.cfg.ShareFromBars, DefaultShareFromBars)
		}
	}
	sent := time.Now()
	go func() {
		res, err := l.cfg.Pool.Params(ctx, preq)
		p.asked = time.Since(sent)
		asked <- knobs{res, err}
	}()
	_, p.gran, _ = history.CheckSeries(in.series)
	if shipped {
		seen, err := warm.Warm(ctx, bars)
		k := <-asked
		switch {
		case err != nil:
			return worker.ParamsResult{}, "", classify(err)
		case k.err != nil:
			return worker.ParamsResult{}, "", classify(k.err)
		}
		k.res.Bars = &seen
		// The winner's lookahead proof runs in this machine's pool: its
		// worker reads the bars into its cache while the chunks run on the
		// cluster, not after them, as the params request's worker does in
		// process. What it reads is its own, like the other workers' reads
		// on a sweep's start; an error shows again on the proof.
		pre := preq
		pre.Bars = &bars
		go l.cfg.Pool.Params(context.WithoutCancel(ctx), pre)
		return k.res, seen.Digest, nil
	}
	digest := ""
	stored := 0 // the series' bars, over any range
	store, err := history.OpenReadOnly(l.cfg.Project.HistoryPath())
	if err == nil {
		if in.barsInWorker {
			if err = store.Covers(in.series, cfg.From, cfg.To); err == nil {
				info, _ := store.Info(in.series)
				stored = info.Bars
			}
		} else if p.bars, err = store.Load(in.series, cfg.From, cfg.To); err == nil {
			digest = p.bars.Digest()
		}
		store.Close()
	}
	if in.barsInWorker && l.cfg.Chunks == nil && err == nil {
		// The pool's other workers start meanwhile, so they start on their
		// first chunk when the first does: with a shared bars file they
		// only compile the strategy (they map the bars the first writes),
		// else they read the bars too. What they read is theirs to keep;
		// an error shows again on a chunk, which reads the same bars. The
		// end of the request does not stop a read (that would kill the
		// worker): it is short, and bounded. Only as many as the sweep
		// may run on start: a grid too small for the whole series to
		// give a second worker its share (workersFor) stays on one.
		pre := context.WithoutCancel(ctx)
		other := preq
		if preq.Bars.ShareDir != "" {
			other.Bars = nil
		}
		size := l.cfg.Pool.Size()
		if n, ok := gridSize(in.grid); ok && !in.space {
			size = workersFor(sweepWork(n, stored), size)
		}
		for range size - 1 {
			go l.cfg.Pool.Params(pre, other)
		}
	}
	k := <-asked
	if err != nil {
		return worker.ParamsResult{}, "", classify(err)
	}
	if k.err != nil {
		return worker.ParamsResult{}, "", classify(k.err)
	}
	return k.res, digest, nil
}

// gridSize counts grid's combinations from the grid alone, before the
// knobs are known: false when a range leaves its step to its knob.
func gridSize(grid Grid) (int, bool) {
	n := 1.0
	for _, g := range grid {
		switch {
		case !g.IsRange():
			n *= float64(len(g.Values))
		case g.From == nil || g.To == nil || g.Step == nil || *g.Step <= 0 || *g.To < *g.From:
			return 0, false
		default:
			n *= math.Floor((*g.To-*g.From) / *g.Step + 1e-9) + 1
		}
	}
	if n > math.MaxInt32 || math.IsNaN(n) {
		return 0, false
	}
	return int(n), true
}

// combinationCap is the most combinations in's grid may have: the
// project's cap, or the request's own below it; none for a search space.
func (l *Local) combinationCap(in planInput) (int, error) {
	limit := l.cfg.Research.MaxCombinations
	switch {
	case in.maxCombinations < 0:
		return 0, errorf(KindInvalid, "max_combinations %d must be positive (default %d)", in.maxCombinations, limit)
	case in.maxCombinations > limit:
		return 0, errorf(KindInvalid, "max_combinations %d is above this project's cap of %d (research.max_combinations in wicket.toml, which only the operator raises)", in.maxCombinations, limit)
	case in.maxCombinations > 0:
		limit = in.maxCombinations
	}
	if in.space {
		limit = math.MaxInt64
	}
	return limit, nil
}

// maxAxis bounds one knob's values however large the cap (a range is
// counted before it is expanded).
const maxAxis = 1_000_000

// expand checks the grid against the knobs and builds the axes. It counts
// the combinations before expanding any range, so an over-large grid is
// refused (p.tooMany) without work.
func (p *plan) expand(grid Grid, fixed map[string]any, limit int) error {
	byName := map[string]scriptapi.Knob{}
	names := make([]string, len(p.knobs))
	for i, k := range p.knobs {
		byName[k.Name] = k
		names[i] = k.Name
	}
	for name := range grid {
		if _, ok := byName[name]; !ok {
			return errorf(KindInvalid, "grid: unknown knob %q; this strategy's knobs are: %s", name, strings.Join(names, ", "))
		}
		if _, ok := fixed[name]; ok {
			return errorf(KindInvalid, "knob %s is both in grid and in params; sweep it or fix it, not both", name)
		}
	}
	p.fixed = map[string]any{}
	for name, v := range fixed {
		p.fixed[name] = v
	}
	// Count first.
	type axis struct {
		knob       scriptapi.Knob
		spec       GridSpec
		n          int
		from, step float64
	}
	var axes []axis
	total := 1.0
	for _, k := range p.knobs {
		spec, ok := grid[k.Name]
		if !ok {
			continue
		}
		a := axis{knob: k, spec: spec}
		if !spec.IsRange() {
			if len(spec.Values) == 0 {
				return errorf(KindInvalid, "grid %s: the list is empty; give at least one value (%s)", k.Name, k.Range())
			}
			a.n = len(spec.Values)
		} else {
			n, from, step, err := rangeCount(k, spec)
			if err != nil {
				return err
			}
			a.n, a.from, a.step = n, from, step
		}
		total *= float64(a.n)
		axes = append(axes, a)
	}
	if total > float64(limit) {
		parts := make([]string, len(axes))
		for i, a := range axes {
			parts[i] = fmt.Sprintf("%s %d", a.knob.Name, a.n)
		}
		count := strconv.FormatFloat(total, 'f', 0, 64)
		p.count = int(min(total, math.MaxInt32))
		p.tooMany = errorf(KindTooMany, "the grid has %s combinations (%s) and the cap is %d (research.max_combinations): narrow the ranges, coarsen the steps or sweep fewer knobs",
			count, strings.Join(parts, " × "), limit)
		for _, a := range axes {
			p.swept = append(p.swept, a.knob.Name)
		}
		return nil
	}
	p.count = int(total)
	// Expand and check every value against its knob.
	for _, a := range axes {
		vals := make([]any, 0, a.n)
		seen := map[string]bool{}
		for i := range a.n {
			var raw any
			if a.spec.IsRange() {
				raw = roundStep(a.from + float64(i)*a.step)
			} else {
				raw = a.spec.Values[i]
			}
			v, err := a.knob.Check(raw)
			if err != nil {
				return &Error{Kind: KindInvalid, Msg: "grid: " + err.Error(), Err: err}
			}
			key := fmt.Sprint(v)
			if seen[key] {
				return errorf(KindInvalid, "grid %s: the value %s is listed twice", a.knob.Name, key)
			}
			seen[key] = true
			vals = append(vals, v)
		}
		p.swept = append(p.swept, a.knob.Name)
		p.axes = append(p.axes, vals)
	}
	return nil
}

// rangeCount checks a {from, to, step} range for knob k and counts its
// values.
func rangeCount(k scriptapi.Knob, spec GridSpec) (n int, from, step float64, err error) {
	if k.Type != scriptapi.KnobInt && k.Type != scriptapi.KnobFloat {
		return 0, 0, 0, errorf(KindInvalid, "grid %s: a {from, to, step} range needs an int or float knob, and %s is a %s knob; list its values instead (%s)", k.Name, k.Name, k.Type, k.Range())
	}
	from, to := *spec.From, *spec.To
	switch {
	case spec.Step != nil:
		step = *spec.Step
	case k.Step != nil:
		step = *k.Step
	case k.Type == scriptapi.KnobInt:
		step = 1
	default:
		return 0, 0, 0, errorf(KindInvalid, "grid %s: give the range a step; the float knob %s declares none", k.Name, k.Name)
	}
	for _, x := range []float64{from, to, step} {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return 0, 0, 0, errorf(KindInvalid, "grid %s: from, to and step must be finite numbers", k.Name)
		}
	}
	switch {
	case step <= 0:
		return 0, 0, 0, errorf(KindInvalid, "grid %s: step %s must be positive", k.Name, fmtNum(step))
	case from > to:
		return 0, 0, 0, errorf(KindInvalid, "grid %s: from %s is above to %s", k.Name, fmtNum(from), fmtNum(to))
	case k.Type == scriptapi.KnobInt && (from != math.Trunc(from) || to != math.Trunc(to) || step != math.Trunc(step)):
		return 0, 0, 0, errorf(KindInvalid, "grid %s: %s is an int knob, so from, to and step must be whole numbers", k.Name, k.Name)
	}
	for _, x := range []float64{from, to} {
		if _, err := k.Check(x); err != nil {
			return 0, 0, 0, &Error{Kind: KindInvalid, Msg: "grid: " + err.Error(), Err: err}
		}
	}
	cnt := math.Floor((to-from)/step+1e-9) + 1
	if cnt > maxAxis {
		return 0, 0, 0, errorf(KindTooMany, "grid %s: from %s to %s by %s is %s values; coarsen the step", k.Name, fmtNum(from), fmtNum(to), fmtNum(step), strconv.FormatFloat(cnt, 'f', 0, 64))
	}
	return int(cnt), from, step, nil
}

// roundStep removes the binary noise of from + i*step (0.1*3 is
// 0.30000000000000004) by rounding to 12 significant digits.
func roundStep(x float64) float64 {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 12, 64), 64)
	return r
}

func fmtNum(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// combo returns combination i: the last swept knob varies fastest.
func (p *plan) combo(i int) map[string]any {
	c := make(map[string]any, len(p.fixed)+len(p.axes))
	for k, v := range p.fixed {
		c[k] = v
	}
	for k := len(p.axes) - 1; k >= 0; k-- {
		n := len(p.axes[k])
		c[p.swept[k]] = p.axes[k][i%n]
		i /= n
	}
	return c
}

// barCount is how many bars the plan's range holds, as far as the caller
// knows (0 when it does not).
func (p *plan) barCount() int {
	if n := p.bars.Len(); n > 0 {
		return n
	}
	if p.seen != nil {
		return p.seen.Count
	}
	return 0
}

// workerMemo is a worker's indicator cache budget (worker.MemoBytes),
// which evalOrder's blocks are cut for; a variable so that a test can
// sweep a short series in blocks.
var workerMemo int64 = worker.MemoBytes

// maxChunk bounds a chunk of guided scheduling, so progress and
// cancellation stay fine-grained (a chunk of worthChunk's size takes
// about minWorkerShare however many combinations that is).
const maxChunk = 64
