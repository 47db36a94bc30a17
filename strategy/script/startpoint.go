package script

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"go.starlark.net/starlark"

	"wicket/strategy"
	"wicket/strategy/scriptapi"
)

// The start-point check (freqtrade's recursive analysis). The lookahead
// proof removes bars at the end; this removes them at the start: the
// strategy runs again from later first bars, and each series it computes
// is compared, bar for bar, with the run over all the bars. A value that
// differs was computed from where the history began (an EMA seeded from
// its first bars, Wilder's smoothing in RSI and ADX); the number of bars
// after which every value agrees is the warm-up the strategy really
// needs, which may be far longer than the bars before its first value
// (Warmup). A deployment given less history than that trades on values a
// backtest over longer history would not have computed.

// startRun is what one run of the check keeps: its series and, for a
// signals strategy, its signals; for an on_bar strategy its intents and
// the numbers it kept on ctx after each bar (by field, NaN where a field
// was not a number).
type startRun struct {
	series  []*Series
	sig     *strategy.Signals
	intents []strategy.Intent
	state   map[string][]float64
}

// CheckStartPoint runs s over bars and again from each StartPointOffsets
// first bar, and reports per series the bars it needs before its values
// agree with the full run's, the largest of them, and whether warmup bars
// of history are enough. An error of a run (a limit, a cancellation, the
// strategy failing on the shorter history) is returned, naming the run.
func (s *Strategy) CheckStartPoint(ctx context.Context, bars strategy.Bars, warmup int) (scriptapi.StartPoint, error) {
	n := bars.Len()
	rep := scriptapi.StartPoint{Bars: n, Offsets: scriptapi.StartPointOffsets(n), Tolerance: scriptapi.StartPointTolerance, Series: []scriptapi.StartPointSeries{}, Warmup: warmup}
	if len(rep.Offsets) == 0 {
		rep.Verdict = fmt.Sprintf("not run: %d bar(s) leave no later first bar to compare", n)
		return rep, nil
	}
	track := trackCap(n)
	full, err := s.startRun(ctx, bars, track)
	if err != nil {
		return rep, fmt.Errorf("start-point check: the run over all %d bars: %w", n, err)
	}
	names := make([]string, len(full.series))
	for k, f := range full.series {
		names[k] = f.startName()
	}
	need := make([]int, len(full.series))
	undecided := make([]bool, len(full.series))
	converged := make([]bool, len(full.series))
	stateNames := slices.Sorted(maps.Keys(full.state))
	stateNeed := make(map[string]scriptapi.StartPointSeries, len(stateNames))
	for _, name := range stateNames {
		stateNeed[name] = scriptapi.StartPointSeries{Name: "ctx." + name, Converged: true}
	}
	for k := range converged {
		converged[k] = true
	}
	outNeed, outConverged := 0, true
	for _, off := range rep.Offsets {
		pre, err := s.startRun(ctx, bars.Slice(off, n), track)
		if err != nil {
			return rep, fmt.Errorf("start-point check: the run from bar %d: %w", off, err)
		}
		if len(pre.series) != len(full.series) {
			return rep, fmt.Errorf("start-point check: the run from bar %d computed %d series and the full run %d; the series a strategy computes must not depend on its bars", off, len(pre.series), len(full.series))
		}
		for k, f := range full.series {
			fv, pv := f.values(), pre.series[k].values()
			a := agreement(fv[min(off, len(fv)):], pv, f.boolean)
			need[k], undecided[k] = max(need[k], a.need), undecided[k] || a.undecided
			converged[k] = converged[k] && a.ok
		}
		for _, name := range stateNames {
			fv, pv := full.state[name], pre.state[name]
			if pv == nil {
				pv = nanColumn(n - off)
			}
			a := agreement(fv[off:], pv, false)
			e := stateNeed[name]
			e.Needed, e.Converged, e.Undecided = max(e.Needed, a.need), e.Converged && a.ok, e.Undecided || a.undecided
			stateNeed[name] = e
		}
		switch {
		case full.sig != nil:
			j, ok := signalsAgreeFrom(*full.sig, *pre.sig, off, n-off)
			outNeed = max(outNeed, j)
			outConverged = outConverged && ok
		case full.intents != nil:
			j, ok := intentsAgreeFrom(full.intents[off:], pre.intents)
			outNeed = max(outNeed, j)
			outConverged = outConverged && ok
		}
	}
	// A converged series is not undecided.
	for k := range undecided {
		undecided[k] = undecided[k] && !converged[k]
	}
	// One entry per name: a series computed twice (the memo shares its
	// values) is one indicator.
	byName := map[string]int{}
	for k, name := range names {
		if i, ok := byName[name]; ok {
			e := &rep.Series[i]
			e.Needed, e.Converged, e.Undecided = max(e.Needed, need[k]), e.Converged && converged[k], e.Undecided || undecided[k]
		} else {
			byName[name] = len(rep.Series)
			rep.Series = append(rep.Series, scriptapi.StartPointSeries{Name: name, Needed: need[k], Converged: converged[k], Undecided: undecided[k]})
		}
	}
	for _, name := range stateNames { // what on_bar kept, after setup's series
		e := stateNeed[name]
		e.Undecided = e.Undecided && !e.Converged
		rep.Series = append(rep.Series, e)
	}
	passed := true
	for _, e := range rep.Series {
		rep.Needed = max(rep.Needed, e.Needed)
		passed = passed && e.Converged
	}
	switch {
	case full.sig != nil:
		rep.Outputs = &scriptapi.StartPointSeries{Name: "signals", Needed: outNeed, Converged: outConverged}
	case full.intents != nil:
		rep.Outputs = &scriptapi.StartPointSeries{Name: "on_bar intents", Needed: outNeed, Converged: outConverged}
	}
	if rep.Outputs != nil {
		rep.Needed = max(rep.Needed, outNeed)
		passed = passed && outConverged
	}
	if len(rep.Series) > scriptapi.MaxStartPointSeries {
		// The ones that need the most are the ones to read.
		slices.SortStableFunc(rep.Series, func(a, b scriptapi.StartPointSeries) int { return b.Needed - a.Needed })
		rep.SeriesClamped = fmt.Sprintf("showing the %d of %d series that need the most bars", scriptapi.MaxStartPointSeries, len(rep.Series))
		rep.Series = rep.Series[:scriptapi.MaxStartPointSeries]
	}
	rep.Passed = passed && warmup >= rep.Needed
	rep.Verdict = startVerdict(rep)
	return rep, nil
}

func startVerdict(rep scriptapi.StartPoint) string {
	worst, never, undecided := "", "", ""
	for _, e := range rep.Series {
		switch {
		case !e.Converged && !e.Undecided && never == "":
			never = e.Name
		case e.Undecided && undecided == "":
			undecided = e.Name
		}
		if worst == "" && (e.Needed == rep.Needed || !e.Converged) {
			worst = e.Name
		}
	}
	if worst == "" && rep.Outputs != nil {
		worst = rep.Outputs.Name
	}
	if never == "" && undecided == "" && rep.Outputs != nil && !rep.Outputs.Converged {
		never = rep.Outputs.Name
	}
	runs := fmt.Sprintf("runs from bars %s of %d", joinInts(rep.Offsets), rep.Bars)
	switch {
	case never != "":
		return fmt.Sprintf("failed: %s still depends on the first bar after every bar of some of the %s, and the difference is not shrinking; it never forgets where the history began (a cumulative series?), so no warm-up is enough", never, runs)
	case undecided != "":
		return fmt.Sprintf("not enough bars to tell: %s still differs at the last bar of some of the %s, but the difference is shrinking; at its rate it needs about %d bars; run the check over more bars than that", undecided, runs, rep.Needed)
	case rep.Passed:
		return fmt.Sprintf("passed: a warm-up of %d bars is enough; the values need %d (%s, to a relative %g)", rep.Warmup, rep.Needed, runs, rep.Tolerance)
	}
	return fmt.Sprintf("failed: a warm-up of %d bars is too short; %s needs %d bars before its values stop depending on the first bar (%s, to a relative %g); give at least %d bars of history", rep.Warmup, worst, rep.Needed, runs, rep.Tolerance, rep.Needed)
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}

// startRun runs s over bars for the check: print output discarded, the
// warm-up not noted, series kept up to track.
func (s *Strategy) startRun(ctx context.Context, bars strategy.Bars, track int) (startRun, error) {
	if s.style == StyleSignals {
		sig, tr, err := s.runSignals(ctx, bars, discard, false, track, nil)
		if err != nil {
			return startRun{}, err
		}
		return startRun{series: tr.series, sig: &sig}, nil
	}
	st, err := s.begin(ctx, bars, discard, false, track, nil)
	if err != nil {
		return startRun{}, err
	}
	defer st.Close()
	// on_bar stepped through every bar with one flat account in every
	// run, so that what differs is what it computed from its history.
	n := bars.Len()
	run := startRun{series: st.r.built, intents: make([]strategy.Intent, n), state: map[string][]float64{}}
	acct := strategy.Account{Cash: 10000, Equity: 10000}
	for i := 0; i < n; i++ {
		in, err := st.Step(i, acct)
		if err != nil {
			return startRun{}, err
		}
		run.intents[i] = in
		for name, v := range st.ctx.fields {
			x, ok := stateNumber(v)
			if !ok {
				continue
			}
			col := run.state[name]
			if col == nil {
				col = nanColumn(n)
				run.state[name] = col
			}
			col[i] = x
		}
	}
	return run, nil
}

// stateNumber is a value on_bar kept, as a number the check compares: a
// float, an int or a bool (None is missing: NaN); ok is false for any
// other value.
func stateNumber(v starlark.Value) (float64, bool) {
	switch v := v.(type) {
	case starlark.Float:
		return float64(v), true
	case starlark.Int:
		f, _ := starlark.AsFloat(v)
		return f, true
	case starlark.Bool:
		if v {
			return 1, true
		}
		return 0, true
	case starlark.NoneType:
		return math.NaN(), true
	}
	return 0, false
}

func nanColumn(n int) []float64 {
	c := make([]float64, n)
	for i := range c {
		c[i] = math.NaN()
	}
	return c
}

// intentsAgreeFrom is agreeFrom for on_bar's intents: the first bar of the
// later run from which every intent equals the full run's.
func intentsAgreeFrom(full, pre []strategy.Intent) (int, bool) {
	m := min(len(full), len(pre))
	for j := m - 1; j >= 0; j-- {
		a, b := full[j], pre[j]
		if a.Kind != b.Kind || !same(a.Value, b.Value) || a.Exits != b.Exits {
			return j + 1, j+1 < m
		}
	}
	return 0, true
}

// agreed is how one series of a later run agrees with the full run's.
type agreed struct {
	need      int  // the first bar from which they agree (an estimate when undecided)
	ok        bool // they agree at the last bar
	undecided bool // they do not, but the difference is shrinking: too few bars to tell
}

// agreement is agreeFrom, and when the values never agree, whether the
// difference is shrinking at a steady rate (an EMA's memory of its first
// bar fades geometrically; a cumulative series' does not): then the bars
// were too few to tell, and need is where that rate would bring it under
// the tolerance.
func agreement(full, pre []float64, boolean bool) agreed {
	j, ok := agreeFrom(full, pre, boolean)
	if ok || boolean {
		return agreed{need: j, ok: ok}
	}
	m := min(len(full), len(pre))
	scale := meanMagnitude(full[:m])
	first, last := -1, -1
	for i := 0; i < m; i++ {
		if d := math.Abs(full[i] - pre[i]); d > 0 && !math.IsNaN(d) && !math.IsInf(d, 0) {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 || last-first < 8 {
		return agreed{need: j}
	}
	d0, d1 := math.Abs(full[first]-pre[first]), math.Abs(full[last]-pre[last])
	mid := (first + last) / 2
	dm := math.Abs(full[mid] - pre[mid])
	// Shrinking over the whole stretch (by a tenth at least, more than a
	// rounding wobble of a constant difference) and over each half of it:
	// an EMA(60) keeps (59/61)^40 ≈ 0.26 of its difference over a 40-bar
	// run, which is too few bars to tell, not a series that never forgets.
	if !(d1 < d0*0.9 && dm < d0 && d1 < dm) {
		return agreed{need: j}
	}
	rate := math.Log(d1/d0) / float64(last-first) // per bar, negative
	tol := scriptapi.StartPointBound(full[last], pre[last], scale)
	more := math.Log(tol/d1) / rate
	if math.IsNaN(more) || math.IsInf(more, 0) || more > 1e9 {
		return agreed{need: j}
	}
	return agreed{need: last + 1 + int(math.Ceil(max(more, 0))), undecided: true}
}

// meanMagnitude is the mean absolute value of v's finite values.
func meanMagnitude(v []float64) float64 {
	scale, count := 0.0, 0
	for _, x := range v {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			scale += math.Abs(x)
			count++
		}
	}
	if count == 0 {
		return 0
	}
	return scale / float64(count)
}

// agreeFrom is the first j from which pre[j:] agrees with full[j:]
// (full is the full run's values on pre's bars), and whether the two agree
// at the last bar (else j is len(pre), a lower bound).
func agreeFrom(full, pre []float64, boolean bool) (int, bool) {
	m := min(len(full), len(pre))
	scale := meanMagnitude(full[:m])
	for j := m - 1; j >= 0; j-- {
		if !agree(full[j], pre[j], scale, boolean) {
			return j + 1, j+1 < m
		}
	}
	return 0, true
}

func agree(a, b, scale float64, boolean bool) bool {
	if a == b || (math.IsNaN(a) && math.IsNaN(b)) {
		return true
	}
	if boolean || math.IsNaN(a) || math.IsNaN(b) {
		return false
	}
	return math.Abs(a-b) <= scriptapi.StartPointBound(a, b, scale)
}

// signalsAgreeFrom is agreeFrom for the signals: the first bar of the run
// from off (m bars) from which its flags and sizes all equal the full
// run's.
func signalsAgreeFrom(full, pre strategy.Signals, off, m int) (int, bool) {
	last := -1 // the last bar that differs
	for _, o := range [][2][]bool{{full.Long, pre.Long}, {full.Short, pre.Short}, {full.Exit, pre.Exit}} {
		for j := m - 1; j > last; j-- {
			if at(o[0], off+j) != at(o[1], j) {
				last = j
				break
			}
		}
	}
	for j := m - 1; j > last; j-- {
		if a, b := sizeAt(full.Size, off+j), sizeAt(pre.Size, j); !same(a, b) && !agree(a, b, 0, false) {
			last = j
			break
		}
	}
	return last + 1, last+1 < m
}

// startName names a series for the report: a ta function with its
// parameters (ta.ema(20)), or the operation that made it.
func (s *Series) startName() string {
	if !strings.HasPrefix(s.what, "ta.") || len(s.params) == 0 {
		return s.what
	}
	ps := make([]string, len(s.params))
	for i, p := range s.params {
		ps[i] = strconv.FormatFloat(p, 'g', -1, 64)
	}
	name, out, multi := strings.Cut(s.what, "(...)")
	if multi {
		return name + "(" + strings.Join(ps, ", ") + ")" + out
	}
	return name + "(" + strings.Join(ps, ", ") + ")"
}
