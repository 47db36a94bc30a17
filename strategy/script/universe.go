package script

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"go.starlark.net/starlark"

	"wicket/strategy"
	"wicket/strategy/scriptapi"
	"wicket/strategy/ta"
)

// Portfolio strategies. A strategy that declares a top-level
//
//	universe = ["BTC-USD@1d", "ETH-USD@1d"]   # or patterns, "*-USD@1d"
//	rebalance = "weekly"                      # bar, daily, weekly, monthly, drift:0.05
//
// runs signals(universe) once over every asset's bars, all on one
// calendar (the union of their bar times, with no forward fill: an asset
// without a bar at a time has missing values there), and returns a dict
// asset → target weight (a series or a number). universe["BTC-USD@1d"]
// (or universe["BTC-USD"]) is that asset's bars, read like signals(bars)'s
// bars; universe.rank and universe.top are the cross-sectional reads. The
// series are opaque as in signals(bars), so the same rules keep every
// decision on its own bar and the bars before it, and the lookahead proof
// reruns the strategy over prefixes of the calendar (every asset cut at
// the same bar) and compares every weight and every series.

// Rebalance schedules a strategy may declare (declared in scriptapi, so
// that callers that never run a strategy need not link this package).
const (
	RebalanceBar     = scriptapi.RebalanceBar
	RebalanceDaily   = scriptapi.RebalanceDaily
	RebalanceWeekly  = scriptapi.RebalanceWeekly
	RebalanceMonthly = scriptapi.RebalanceMonthly
)

// RebalanceHelp names the schedules, for messages.
const RebalanceHelp = scriptapi.RebalanceHelp

// MaxUniverse bounds the assets of one portfolio strategy.
const MaxUniverse = scriptapi.MaxUniverse

// ParseRebalance reads a rebalance schedule (scriptapi.ParseRebalance).
func ParseRebalance(s string) (period string, drift float64, err error) {
	return scriptapi.ParseRebalance(s)
}

// IsPortfolio reports whether the strategy declares a universe.
func (s *Strategy) IsPortfolio() bool { return s.universe != nil }

// Universe is the universe the strategy declares: series names and
// patterns, as written (nil when it declares none).
func (s *Strategy) Universe() []string { return slices.Clone(s.universe) }

// Rebalance is the rebalance schedule the strategy declares ("bar" when
// it declares none).
func (s *Strategy) Rebalance() string { return s.rebalance }

// readUniverse reads the universe and rebalance globals after the top
// level ran.
func (s *Strategy) readUniverse(g starlark.StringDict) error {
	rb, hasRb := g["rebalance"]
	v, ok := g["universe"]
	if !ok {
		if hasRb {
			return &Error{Kind: KindEntry, File: s.name, Line: 1, Column: 1, Bar: -1,
				Msg:  "rebalance is set but no universe is declared; a rebalance schedule is for portfolio strategies",
				Hint: `declare universe = ["BTC-USD@1d", "ETH-USD@1d"] (or a pattern such as "*-USD@1d"), or remove rebalance`}
		}
		return nil
	}
	bad := func(msg string) error {
		return &Error{Kind: KindEntry, File: s.name, Line: 1, Column: 1, Bar: -1, Msg: msg,
			Hint: `declare universe = ["BTC-USD@1d", "ETH-USD@1d"], a list of series names or patterns such as "*-USD@1d"`}
	}
	seq, ok := v.(starlark.Indexable)
	if _, isStr := v.(starlark.String); !ok || isStr {
		return bad(fmt.Sprintf("universe is a %s; it must be a list of series names (SYMBOL@GRANULARITY) or patterns", v.Type()))
	}
	if seq.Len() == 0 || seq.Len() > MaxUniverse {
		return bad(fmt.Sprintf("universe holds %d entries; a portfolio holds 1 to %d", seq.Len(), MaxUniverse))
	}
	u := make([]string, 0, seq.Len())
	for i := 0; i < seq.Len(); i++ {
		e, ok := seq.Index(i).(starlark.String)
		if !ok {
			return bad(fmt.Sprintf("universe[%d] is a %s, not a string", i, seq.Index(i).Type()))
		}
		name := strings.TrimSpace(string(e))
		if err := checkUniverseEntry(name); err != nil {
			return bad(fmt.Sprintf("universe[%d]: %v", i, err))
		}
		if slices.Contains(u, name) {
			return bad(fmt.Sprintf("universe[%d]: %q is listed twice", i, name))
		}
		u = append(u, name)
	}
	s.universe = u
	s.rebalance = RebalanceBar
	if hasRb {
		str, ok := rb.(starlark.String)
		if !ok {
			return bad(fmt.Sprintf("rebalance is a %s; it must be one of %s", rb.Type(), RebalanceHelp))
		}
		if _, _, err := ParseRebalance(string(str)); err != nil {
			return &Error{Kind: KindEntry, File: s.name, Line: 1, Column: 1, Bar: -1, Msg: err.Error(), Hint: "rebalance is one of " + RebalanceHelp}
		}
		s.rebalance = string(str)
	}
	return nil
}

// checkUniverseEntry checks the shape of a series name or pattern:
// SYMBOL@GRANULARITY, where the symbol may hold * ? [ ] wildcards.
func checkUniverseEntry(name string) error {
	sym, g, ok := strings.Cut(name, "@")
	if !ok || sym == "" {
		return fmt.Errorf("%q is not SYMBOL@GRANULARITY (e.g. BTC-USD@1d, or *-USD@1d)", name)
	}
	if !strategy.Granularity(g).Valid() {
		return fmt.Errorf("%q: granularity %q is not one of 1m, 5m, 15m, 1h, 4h, 1d (a universe is one granularity, written out)", name, g)
	}
	for _, r := range sym {
		if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.*?[]", r)) {
			return fmt.Errorf("%q: %q is not allowed in a symbol", name, r)
		}
	}
	return nil
}

// UniversePattern reports whether a universe entry is a pattern
// (scriptapi.UniversePattern).
func UniversePattern(name string) bool { return scriptapi.UniversePattern(name) }

// PortfolioTrace is what a full run of a portfolio strategy decided, for
// CheckPortfolioLookahead: every asset's weights and the series computed.
type PortfolioTrace struct {
	Weights [][]float64 // signals(universe): per asset, per bar
	// Accounts are what each on_bar saw (BeginPortfolio's Record), and
	// steps the targets it set.
	Accounts []PortfolioAccount
	steps    [][]float64
	series   []*Series
}

// Weights runs signals(universe) over assets, which share one calendar
// (every asset's Time is the same column; missing bars are NaN), and
// returns one weight per asset per bar, in the order of assets: a target
// fraction of equity, NaN for no decision (the holding stays), 0 for an
// asset the returned dict leaves out.
func (s *Strategy) Weights(ctx context.Context, assets []strategy.Bars) ([][]float64, error) {
	w, _, err := s.runWeights(ctx, assets, s.out, true, 0)
	return w, err
}

// WeightsTrace is Weights that also returns the trace for
// CheckPortfolioLookahead.
func (s *Strategy) WeightsTrace(ctx context.Context, assets []strategy.Bars) ([][]float64, PortfolioTrace, error) {
	n := 0
	if len(assets) > 0 {
		n = assets[0].Len()
	}
	w, built, err := s.runWeights(ctx, assets, s.out, true, trackCap(n*max(1, len(assets))))
	if err != nil {
		return nil, PortfolioTrace{}, err
	}
	return w, PortfolioTrace{Weights: w, series: built}, nil
}

func (s *Strategy) portfolioError() error {
	return &Error{Kind: KindEntry, File: s.name, Bar: -1,
		Msg:  fmt.Sprintf("this strategy declares a universe (%s): it runs as a portfolio over those series, not over one", strings.Join(s.universe, ", ")),
		Hint: "run it without a series: wicket backtest --local NAME (or run_backtest with no series)"}
}

func (s *Strategy) runWeights(ctx context.Context, assets []strategy.Bars, out *capture, note bool, track int) ([][]float64, []*Series, error) {
	if s.universe == nil {
		return nil, nil, &Error{Kind: KindEntry, File: s.name, Bar: -1, Msg: "this strategy declares no universe; it runs over one series",
			Hint: `declare universe = ["BTC-USD@1d", "ETH-USD@1d"] to run it as a portfolio`}
	}
	if s.style != StyleSignals {
		return nil, nil, s.styleError(StyleSignals)
	}
	if err := checkCalendar(assets); err != nil {
		return nil, nil, err
	}
	cal := strategy.Bars{Series: "universe", Time: assets[0].Time}
	r := newRun(s.memo, &cal)
	r.tracing, r.trackCap = track > 0, track
	r.gaps = true
	th := newThread(r, out)
	stop, err := r.watch(ctx, th, s.limits.Wall)
	defer stop()
	if err != nil {
		return nil, nil, err
	}
	u := newUniverseValue(r, assets)
	r.enter(th, "signals", s.limits.SignalsSteps)
	v, err := starlark.Call(th, s.signals, starlark.Tuple{u}, nil)
	if err != nil {
		e := evalError(s.name, err, r)
		e.Phase = "signals"
		e.Hint = hintFor(e)
		return nil, nil, e
	}
	if note {
		s.noteWarmup(r.warmup)
	}
	w, msg := u.toWeights(v)
	if msg != "" {
		e := newError(KindResult, s.name, s.signals.Position(), "signals(universe) "+msg)
		e.Phase = "signals"
		return nil, nil, e
	}
	r.settle()
	return w, r.built, nil
}

var (
	_ starlark.HasAttrs = (*universeValue)(nil)
	_ starlark.Mapping  = (*universeValue)(nil)
)

var _ columnSource = (*assetValue)(nil)

// CheckPortfolioLookahead is CheckLookahead for a portfolio strategy:
// it reruns signals(universe), or setup and every on_bar with the
// recorded accounts, over prefixes of the calendar, every asset cut at
// the same bar, and requires every weight (target) and every series on
// the shared bars to be unchanged.
func (s *Strategy) CheckPortfolioLookahead(ctx context.Context, assets []strategy.Bars, full PortfolioTrace) (string, error) {
	if len(assets) == 0 {
		return "", fmt.Errorf("lookahead check: no assets")
	}
	cal := assets[0]
	names := make([]string, len(assets))
	for i, a := range assets {
		names[i] = a.Series
	}
	cal.Series = strings.Join(names, ",") // the seed names the whole universe
	seed := s.proofSeed
	n := cal.Len()
	fixed := PrefixCuts(n, s.Warmup())
	drawn := DrawnPrefixCuts(n, s.Warmup(), seed)
	cuts := append(slices.Clone(fixed), drawn...)
	onBar := s.style == StyleOnBar
	var series []int
	every := false
	if !onBar { // the series cuts of signals(universe): its weights and series
		series, every = SeriesPrefixCuts(n, s.Warmup(), len(assets)*max(1, len(full.series)), seed)
		cuts = append(cuts, series...)
	}
	if len(cuts) == 0 {
		return fmt.Sprintf("not run: %d bar(s) leave no prefix to compare", n), nil
	}
	switch {
	case onBar && (len(full.steps) == 0 || len(full.steps) != len(full.Accounts) || len(full.steps) > n):
		return "", fmt.Errorf("lookahead check: %d recorded steps and %d accounts for %d bars; step on_bar through the bars in order from the first (Record before the first Step)", len(full.steps), len(full.Accounts), n)
	case !onBar && len(full.Weights) != len(assets):
		return "", fmt.Errorf("lookahead check: %d weight columns recorded for %d assets", len(full.Weights), len(assets))
	}
	diffs := make([]*difference, len(cuts))
	errs := make([]error, len(cuts))
	sem := make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))
	var wg sync.WaitGroup
	for k, c := range cuts {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if onBar {
				diffs[k], errs[k] = s.prefixSteps(ctx, assets, c, full)
			} else {
				diffs[k], errs[k] = s.prefixWeights(ctx, assets, c, full)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return "", err
		}
	}
	var first *difference
	for _, d := range diffs {
		if d != nil && (first == nil || d.bar < first.bar) {
			first = d
		}
	}
	if first != nil {
		return "", s.lookaheadError(cal, first)
	}
	return LookaheadPassed(len(fixed), len(drawn), seed, len(series), every), nil
}

func (s *Strategy) prefixWeights(ctx context.Context, assets []strategy.Bars, cut int, full PortfolioTrace) (*difference, error) {
	pre := make([]strategy.Bars, len(assets))
	for i := range assets {
		pre[i] = assets[i].Slice(0, cut)
	}
	w, built, err := s.runWeights(ctx, pre, discard, false, trackCap(assets[0].Len()*len(assets)))
	if err != nil {
		return prefixError(err, cut)
	}
	var first *difference
	for a := range w {
		fa, pa := full.Weights[a], w[a]
		for t := 0; t < cut && (first == nil || t < first.bar); t++ {
			if !same(fa[t], pa[t]) {
				first = &difference{bar: t, output: fmt.Sprintf("the weight of %s", assets[a].Series), full: fmtFloat(fa[t]), pre: fmtFloat(pa[t]), cut: cut}
				break
			}
		}
	}
	if d := seriesDifference(full.series, built, cut); d != nil && (first == nil || d.bar < first.bar) {
		first = d
	}
	return first, nil
}

// SmokeUniverse is the synthetic universe a portfolio strategy is
// validated over: one asset per declared name (a pattern stands for
// three), each a different stretch of the smoke walk on one calendar,
// the second missing every 17th bar so the calendar rule is exercised.
func SmokeUniverse(universe []string, n int) []strategy.Bars {
	var names []string
	for _, e := range universe {
		if !UniversePattern(e) {
			names = append(names, e)
			continue
		}
		sym, g, _ := strings.Cut(e, "@")
		for k := 1; k <= 3; k++ {
			names = append(names, strings.NewReplacer("*", "SYN"+strconv.Itoa(k), "?", "X", "[", "", "]", "").Replace(sym)+"@"+g)
		}
	}
	const shift = 97
	walk := SmokeBars(n + shift*len(names))
	out := make([]strategy.Bars, len(names))
	for k, name := range names {
		b := walk.Slice(k*shift, k*shift+n)
		a := strategy.Bars{Series: name, Time: walk.Time[:n],
			Open: slices.Clone(b.Open), High: slices.Clone(b.High), Low: slices.Clone(b.Low), Close: slices.Clone(b.Close), Volume: slices.Clone(b.Volume)}
		if k == 1 {
			nan := math.NaN()
			for t := 16; t < n; t += 17 {
				a.Open[t], a.High[t], a.Low[t], a.Close[t], a.Volume[t] = nan, nan, nan, nan, nan
			}
		}
		out[k] = a
	}
	return out
}

// validatePortfolio is Validate's smoke run and proof for a portfolio
// strategy.
func validatePortfolio(ctx context.Context, s *Strategy, rep *Report) error {
	assets := SmokeUniverse(s.universe, SmokeLength)
	var tr PortfolioTrace
	var err error
	if s.style == StyleOnBar {
		tr, err = smokePortfolio(ctx, s, assets)
	} else {
		_, tr, err = s.WeightsTrace(ctx, assets)
	}
	rep.Output = s.Output()
	rep.Warmup = s.Warmup()
	if err != nil {
		return err
	}
	check, err := s.CheckPortfolioLookahead(ctx, assets, tr)
	if err != nil {
		return err
	}
	rep.LookaheadCheck = check
	return nil
}

// compute runs a ta function through the memo. On a portfolio's
// calendar an asset has no values at the bars it lacks; an indicator
// over it skips them rather than letting one gap poison every value
// after it (a running sum that met NaN): the inputs are computed over
// the bars where all of them have values (after their common warm-up)
// and the outputs put back at those bars, missing at the others. That
// keeps every output a function of its bar and earlier ones.
func (r *run) compute(e *ta.Entry, cols [][]float64, keys []ta.Key, p []float64) (ta.Result, ta.Key, error) {
	if !r.gaps || len(cols) == 0 {
		return r.memo.Compute(e, cols, keys, p)
	}
	n := len(cols[0])
	lead := 0
	for _, c := range cols {
		if len(c) != n {
			return r.memo.Compute(e, cols, keys, p)
		}
		lead = max(lead, leadingNaN(c))
	}
	keep := make([]int, 0, n)
	for t := lead; t < n; t++ {
		ok := true
		for _, c := range cols {
			if math.IsNaN(c[t]) {
				ok = false
				break
			}
		}
		if ok {
			keep = append(keep, t)
		}
	}
	if len(keep) == n-lead {
		return r.memo.Compute(e, cols, keys, p)
	}
	packed := make([][]float64, len(cols))
	pkeys := make([]ta.Key, len(cols))
	for i, c := range cols {
		pc := make([]float64, lead+len(keep))
		copy(pc, c[:lead])
		for k, t := range keep {
			pc[lead+k] = c[t]
		}
		packed[i], pkeys[i] = pc, r.memo.ValuesKey(pc)
	}
	res, key, err := r.memo.Compute(e, packed, pkeys, p)
	if err != nil {
		return res, key, err
	}
	pos := make([]float64, len(keep))
	for k, t := range keep {
		pos[k] = float64(t)
	}
	out := ta.Result{Outputs: make([][]float64, len(res.Outputs))}
	for j, o := range res.Outputs {
		x := nanFill(n)
		copy(x[:lead], o[:lead])
		for k, t := range keep {
			x[t] = o[lead+k]
		}
		out.Outputs[j] = x
	}
	return out, r.memo.Key("gaps", []ta.Key{key, r.memo.ValuesKey(pos)}, []float64{float64(n)}), nil
}

func nanFill(n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = math.NaN()
	}
	return x
}

// smokePortfolio steps an on_bar portfolio over assets with a simple
// account filled at each close, no costs, and returns its trace.
func smokePortfolio(ctx context.Context, s *Strategy, assets []strategy.Bars) (PortfolioTrace, error) {
	st, err := s.BeginPortfolio(ctx, assets)
	if err != nil {
		return PortfolioTrace{}, err
	}
	defer st.Close()
	st.Record()
	m := len(assets)
	acct := PortfolioAccount{Cash: 10000, Equity: 10000, Positions: make([]float64, m), Marks: make([]float64, m)}
	for i := 0; i < assets[0].Len(); i++ {
		acct.Equity = acct.Cash
		for a := range assets {
			if c := assets[a].Close[i]; !math.IsNaN(c) {
				acct.Marks[a] = c
			}
			acct.Equity += acct.Positions[a] * acct.Marks[a]
		}
		w, err := st.Step(i, acct)
		if err != nil {
			return PortfolioTrace{}, err
		}
		for a, f := range w {
			if c := assets[a].Close[i]; !math.IsNaN(f) && !math.IsNaN(c) {
				q := f * acct.Equity / c
				acct.Cash -= (q - acct.Positions[a]) * c
				acct.Positions[a] = q
			}
		}
	}
	tr, _ := st.Trace()
	return tr, nil
}
