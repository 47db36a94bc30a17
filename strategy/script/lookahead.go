package script

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"wicket/strategy"
)

// The lookahead proof. Rule 1 (opaque series in signals, history-only
// indexing in on_bar) makes reading the future impossible by construction;
// this is rule 2, which checks it on every run: the strategy runs again over
// a few prefixes of the same bars, and every decision on the bars a prefix
// shares with the full run must be identical. A decision that changes when
// later bars are removed was made with those bars: whatever leaked it (a
// host function, an indicator, a hole in rule 1), the run is refused.
//
// The prefix runs use the strategy's memo (so an indicator a prefix asks
// for twice is computed once) and compute every indicator over the
// prefix's own bars: slicing the full run's indicators blindly would hide
// exactly the leaks this proof is for. Only a catalog call or a cross
// whose inputs are, in memory, the full run's own inputs cut to the
// prefix takes the full run's output cut (share.go): the catalog is
// prefix-exact, so that is what the prefix run would compute, and a
// leaked input is never the full run's memory. Print output of prefix
// runs is discarded.

// Trace is what a full run decided, bar by bar, for CheckLookahead:
// Signals for a signals(bars) strategy (SignalsTrace returns it), or the
// account each on_bar saw and the intent it expressed (Stepper.Record
// collects these), from the first bar on: every bar, or the bars up to
// where the run stopped stepping (a bust account).
type Trace struct {
	Signals *strategy.Signals
	steps   *steps // on_bar's accounts and intents
	// series are the series the run computed, in order: all of
	// signals(bars)'s, or setup's. Their order cannot depend on the data
	// (no value, length or truth of a series is readable there), so a prefix
	// run computes the same ones, and every value on the shared bars must
	// agree too: that catches a leak on a bar where the final decision
	// happens not to change.
	series []*Series
	chain  *chainTrace // nil: every prefix run restarts
	// crosses are the lazy crosses a signals(bars) run's long, short and
	// exit flags were computed from (nil: not a cross), for its prefix
	// runs to share (share.go).
	crosses [3]*lazyCross
}

// PrefixCuts are the prefix lengths the proof runs for n bars and a
// warm-up of warmup bars: one that ends inside the warm-up, a quarter and
// half of the bars after it, and all bars but the last (others spread over
// the bars where these coincide). Fewer when n is small; none below 2 bars.
func PrefixCuts(n, warmup int) []int {
	if n < 2 {
		return nil
	}
	w := min(max(warmup, 0), n-1)
	var cuts []int
	add := func(c int) {
		if c >= 1 && c <= n-1 && !slices.Contains(cuts, c) && len(cuts) < 4 {
			cuts = append(cuts, c)
		}
	}
	for _, c := range []int{max(1, (w+1)/2), w + (n-w)/4, w + (n-w)/2, n - 1} {
		add(c)
	}
	// Cuts that coincide (a warm-up as long as the bars) are made up with
	// others spread over the bars.
	for _, eighths := range []int{2, 4, 6, 1, 3, 5, 7} {
		add(n * eighths / 8)
	}
	slices.Sort(cuts)
	return cuts
}

// The drawn cuts: DrawnCuts more prefixes, one drawn uniformly inside each
// of DrawnCuts equal strata of the bars after the warm-up (of all the bars
// when fewer than DrawnCuts follow it), from a generator seeded by the
// run's proof seed (ProofSeed): a value drawn at random when the strategy
// is loaded, which its code cannot read, so no name, knob or choice of
// bars decides where the proof looks. Every part of the span is looked at,
// late bars as much as early ones, and a long warm-up moves the strata
// without thinning them: DrawnCuts is a floor as long as the bars hold
// that many cuts.
//
// Beside them, when the bars are few enough (n·(n-1)/2 bars of each
// series the run computed within seriesBudget), the series cuts
// (SeriesPrefixCuts) rerun only what computes series (signals(bars), or
// setup for an on_bar strategy) over every other prefix and compare its
// outputs on every shared bar: that proves those outputs prefix-exact on
// these bars instead of sampling them.
const (
	DrawnCuts    = 32
	seriesBudget = 1 << 24
)

// splitmix64 is a fixed generator, so a seed names the same cuts everywhere.
func splitmix64(seed uint64) func() uint64 {
	state := seed
	return func() uint64 {
		state += 0x9E3779B97F4A7C15
		z := state
		z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
		z = (z ^ z>>27) * 0x94D049BB133111EB
		return z ^ z>>31
	}
}

// stratified draws count cuts in lo..hi (inclusive), one uniformly in each
// of count equal strata, none of them in skip; all of lo..hi but skip when
// count covers them. Sorted.
func stratified(lo, hi, count int, seed uint64, skip []int) []int {
	m := hi - lo + 1
	if m <= 0 || count <= 0 {
		return nil
	}
	var cuts []int
	if count >= m {
		for c := lo; c <= hi; c++ {
			if !slices.Contains(skip, c) {
				cuts = append(cuts, c)
			}
		}
		return cuts
	}
	next := splitmix64(seed)
	for k := 0; k < count; k++ {
		a, b := lo+k*m/count, lo+(k+1)*m/count // stratum a..b-1
		for tries := 0; tries < 4; tries++ {
			c := a + int(next()%uint64(b-a))
			if !slices.Contains(skip, c) {
				cuts = append(cuts, c)
				break
			}
		}
	}
	return cuts
}

// drawnRange is where the drawn cuts fall for n bars and a warm-up: the
// bars after the warm-up, or all of them when fewer than DrawnCuts follow
// it.
func drawnRange(n, warmup int) (lo, hi int) {
	w := min(max(warmup, 0), n-1)
	lo, hi = w+1, n-1
	if hi-lo+1 < DrawnCuts {
		lo = 1
	}
	return lo, hi
}

// DrawnPrefixCuts are the drawn prefix lengths for n bars, a warm-up of
// warmup bars and a seed: distinct, sorted, none of them a PrefixCuts cut,
// DrawnCuts of them when the bars hold that many.
func DrawnPrefixCuts(n, warmup int, seed uint64) []int {
	if n < 2 {
		return nil
	}
	lo, hi := drawnRange(n, warmup)
	return stratified(lo, hi, DrawnCuts, seed, PrefixCuts(n, warmup))
}

// SeriesPrefixCuts are the series cuts for n bars, a warm-up and a seed,
// when a run computes width values per bar (the series it computed, times
// the assets of a portfolio): every prefix of 1 to n-1 bars that is not a
// fixed or drawn cut, and every true, when that is affordable; else none.
func SeriesPrefixCuts(n, warmup, width int, seed uint64) (cuts []int, every bool) {
	if n < 2 {
		return nil, false
	}
	skip := append(PrefixCuts(n, warmup), DrawnPrefixCuts(n, warmup, seed)...)
	if (n-1)*n/2 > seriesBudget/max(1, width) {
		return nil, false // the 36 prefixes alone: a sample
	}
	return stratified(1, n-1, n-1, 0, skip), true
}

// ProofSeed is the seed of this load's drawn cuts: Options.ProofSeed, or
// a value drawn at random when the strategy was loaded. The strategy's
// code cannot read it; a result names it (LookaheadPassed), so a proof can
// be rerun with the same cuts (CheckLookaheadSeed).
func (s *Strategy) ProofSeed() uint64 { return s.proofSeed }

// randomSeed draws a proof seed.
func randomSeed() uint64 {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("script: no randomness for the proof seed: %v", err)) // crypto/rand does not fail on supported platforms
	}
	return binary.LittleEndian.Uint64(b[:]) | 1 // never 0: 0 asks for a random one
}

// LookaheadPassed is the lookahead_check text of a passed proof over
// fixed PrefixCuts prefixes and drawn DrawnPrefixCuts ones drawn with
// seed; series more prefixes checked the series alone (SeriesPrefixCuts),
// every when all prefixes were checked.
func LookaheadPassed(fixed, drawn int, seed uint64, series int, every bool) string {
	if fixed+drawn+series == 1 {
		return "passed (1 prefix)"
	}
	if drawn == 0 && series == 0 {
		return fmt.Sprintf("passed (%d prefixes)", fixed)
	}
	text := fmt.Sprintf("passed (%d prefixes: %d fixed, %d drawn over the whole span with seed %016x", fixed+drawn, fixed, drawn, seed)
	switch {
	case every:
		text += fmt.Sprintf("; the series on every prefix, %d in all", fixed+drawn+series)
	case series > 0:
		text += fmt.Sprintf("; the series on %d more", series)
	}
	return text + ")"
}

// difference is the first decision a prefix run made differently.
type difference struct {
	bar       int
	output    string
	full, pre string
	cut       int
}

// CheckLookahead proves that s decided each bar of bars from that bar and
// the ones before it only: it reruns s over every PrefixCuts prefix and
// every DrawnPrefixCuts prefix for the run's ProofSeed, and compares each
// decision, and each series computed, with full, the trace of the full run
// over bars. It returns the lookahead_check text ("passed (36 prefixes: 4
// fixed, 32 drawn with seed ...)"), or an
// *Error of KindLookahead naming the first bar and output that differ; an
// error of a prefix run that is not the strategy's (a limit, a
// cancellation) is returned as it is.
func (s *Strategy) CheckLookahead(ctx context.Context, bars strategy.Bars, full Trace) (string, error) {
	return s.CheckLookaheadSeed(ctx, bars, full, s.proofSeed)
}

// CheckLookaheadSeed is CheckLookahead with the drawn cuts of seed.
func (s *Strategy) CheckLookaheadSeed(ctx context.Context, bars strategy.Bars, full Trace, seed uint64) (string, error) {
	check, _, err := s.checkLookahead(ctx, bars, full, seed)
	return check, err
}

// checkLookahead is CheckLookaheadSeed; chained is how many prefix runs
// of an on_bar strategy were chained (chain.go).
func (s *Strategy) checkLookahead(ctx context.Context, bars strategy.Bars, full Trace, seed uint64) (check string, chained int, err error) {
	n := bars.Len()
	fixed := PrefixCuts(n, s.Warmup())
	drawn := DrawnPrefixCuts(n, s.Warmup(), seed)
	series, every := SeriesPrefixCuts(n, s.Warmup(), len(full.series), seed)
	steps := len(fixed) + len(drawn) // cuts before this compare every decision
	cuts := append(append(slices.Clone(fixed), drawn...), series...)
	if len(cuts) == 0 {
		return fmt.Sprintf("not run: %d bar(s) leave no prefix to compare", n), 0, nil
	}
	switch s.style {
	case StyleSignals:
		if full.Signals == nil {
			return "", 0, fmt.Errorf("lookahead check: no signals recorded for a signals-style strategy")
		}
	default:
		// The engine stops calling on_bar once the account is bust: a
		// trace may end early, and the bars it decided are the ones to check.
		if m := full.steps.len(); m == 0 || m > n {
			return "", 0, fmt.Errorf("lookahead check: %d recorded steps for %d bars; on_bar must be stepped through the bars in order from the first (Stepper.Record before the first Step)", m, n)
		}
	}
	diffs := make([]*difference, len(cuts))
	errs := make([]error, len(cuts))
	chain := make([]bool, len(cuts))
	sem := make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))
	var wg sync.WaitGroup
	for k, c := range cuts {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			switch {
			case s.style == StyleSignals:
				diffs[k], errs[k] = s.prefixSignals(ctx, bars, c, full)
			case k < steps:
				diffs[k], chain[k], errs[k] = s.prefixOnBar(ctx, bars, c, full)
			default:
				diffs[k], errs[k] = s.prefixSetup(ctx, bars, c, full)
			}
		}()
	}
	wg.Wait()
	for k, err := range errs {
		if err != nil {
			return "", 0, err // the first: they are likely one cause (a cancellation)
		}
		if chain[k] {
			chained++
		}
	}
	var first *difference
	for _, d := range diffs {
		if d != nil && (first == nil || d.bar < first.bar) {
			first = d
		}
	}
	if first != nil {
		return "", chained, s.lookaheadError(bars, first)
	}
	return LookaheadPassed(len(fixed), len(drawn), seed, len(series), every), chained, nil
}

func (s *Strategy) lookaheadError(bars strategy.Bars, d *difference) *Error {
	fn, phase := s.signals, "signals"
	if s.style == StyleOnBar {
		fn, phase = s.onBar, "on_bar"
	}
	when := time.Unix(bars.Time[d.bar], 0).UTC().Format(time.RFC3339)
	e := newError(KindLookahead, s.name, fn.Position(), fmt.Sprintf(
		"lookahead proof: %s at bar %d (%s) is %s in the run over all %d bars but %s in the run over the first %d; it changed when later bars were removed, so it was computed with them",
		d.output, d.bar, when, d.full, bars.Len(), d.pre, d.cut))
	e.Phase, e.Bar = phase, d.bar
	return e
}

// prefixError turns a prefix run's failure into a difference at the bar it
// failed (the full run did not fail there), or returns it when it is not
// the strategy's doing.
func prefixError(err error, cut int) (*difference, error) {
	var e *Error
	if !errors.As(err, &e) || e.Kind == KindLimit || e.Kind == KindCanceled {
		return nil, err
	}
	bar := max(e.Bar, 0)
	return &difference{bar: bar, output: "the run", full: "fine", pre: fmt.Sprintf("failing (%s)", e.Error()), cut: cut}, nil
}

func (s *Strategy) prefixSignals(ctx context.Context, bars strategy.Bars, cut int, full Trace) (*difference, error) {
	pre, tr, err := s.runSignals(ctx, bars.Slice(0, cut), discard, false, trackCap(bars.Len()), &full)
	if err != nil {
		return prefixError(err, cut)
	}
	var first *difference
	note := func(d *difference) {
		if d != nil && (first == nil || d.bar < first.bar) {
			first = d
		}
	}
	for _, o := range []struct {
		name   string
		fa, pa []bool
	}{{"long", full.Signals.Long, pre.Long}, {"short", full.Signals.Short, pre.Short}, {"exit", full.Signals.Exit, pre.Exit}} {
		if i := flagDifference(o.fa, o.pa, cut); i >= 0 {
			note(&difference{bar: i, output: strconv.Quote(o.name), full: strconv.FormatBool(at(o.fa, i)), pre: strconv.FormatBool(at(o.pa, i)), cut: cut})
		}
	}
	fs, ps := full.Signals.Size, pre.Size
	agree := len(fs) <= 1 && len(ps) <= 1 && same(sizeAt(fs, 0), sizeAt(ps, 0)) || // one size each
		len(fs) >= cut && len(ps) >= cut && sameBits(fs[:cut], ps[:cut]) // a size a bar, at memory speed
	for i := 0; i < cut && !agree; i++ {
		if a, b := sizeAt(fs, i), sizeAt(ps, i); !same(a, b) {
			note(&difference{bar: i, output: `"size"`, full: fmtFloat(a), pre: fmtFloat(b), cut: cut})
			break
		}
	}
	note(seriesDifference(full.series, tr.series, cut)) // after the outputs: they win a tie
	return first, nil
}

// prefixSetup runs setup over the first cut bars and compares the series
// it computed with the full run's: the series cuts of an on_bar strategy.
func (s *Strategy) prefixSetup(ctx context.Context, bars strategy.Bars, cut int, full Trace) (*difference, error) {
	st, err := s.begin(ctx, bars.Slice(0, cut), discard, false, trackCap(bars.Len()), full.series)
	if err != nil {
		return prefixError(err, cut)
	}
	defer st.Close()
	return seriesDifference(full.series, st.r.built, cut), nil
}

// prefixOnBar runs on_bar over the first cut bars and compares it with the
// full run: chained (from the full run's state chainWindow bars before the
// cut, and comparing the state at the cut; see chain.go) where the trace
// allows it, else from bar 0. chained says which.
func (s *Strategy) prefixOnBar(ctx context.Context, bars strategy.Bars, cut int, full Trace) (d *difference, chained bool, err error) {
	st, err := s.begin(ctx, bars.Slice(0, cut), discard, false, trackCap(bars.Len()), full.series)
	if err != nil {
		d, err = prefixError(err, cut)
		return d, false, err
	}
	defer st.Close()
	first := seriesDifference(full.series, st.r.built, cut)
	from, steps := 0, min(cut, full.steps.len())
	var end *encoded
	if ch := full.chain; ch != nil && s.chain {
		a := max(0, cut-chainWindow)
		if start := ch.snaps[a]; start != nil && a < steps && start.restore(st.ctx) {
			from, chained, end = a, true, ch.snaps[cut]
		}
	}
	rec := full.steps.from(from)
	for i := from; i < steps && (first == nil || i < first.bar); i++ {
		acct, want := rec.next()
		in, err := st.Step(i, acct)
		if err != nil {
			d, err = prefixError(err, cut)
			return d, chained, err
		}
		if in.Kind != want.Kind || !same(in.Value, want.Value) || in.Exits != want.Exits {
			return &difference{bar: i, output: "the intent", full: intentText(want), pre: intentText(in), cut: cut}, chained, nil
		}
	}
	if end != nil && steps == cut && (first == nil || first.bar >= cut) {
		// The state on_bar leaves for the bars after the cut: what the
		// full run carried past it must be what the prefix run had.
		pre := snapshotCtx(st.ctx, originOf(st.r.built))
		if pre == nil {
			return &difference{bar: cut - 1, output: "the state on ctx after on_bar", full: "a state of plain values and setup's series", pre: "a state holding other values", cut: cut}, chained, nil
		}
		if d := stateDifference(end, pre, cut-1, cut); d != nil {
			return d, chained, nil
		}
	}
	return first, chained, nil
}

// seriesDifference compares the series two runs computed, in order, on
// the first cut bars.
func seriesDifference(full, pre []*Series, cut int) *difference {
	if len(full) != len(pre) {
		return &difference{bar: 0, output: "the number of series computed", full: strconv.Itoa(len(full)), pre: strconv.Itoa(len(pre)), cut: cut}
	}
	var first *difference
	for k, f := range full {
		p := pre[k]
		fv, pv := f.values(), p.values()
		end := min(cut, len(fv), len(pv))
		if first != nil {
			end = min(end, first.bar)
		}
		if sameBits(fv[:end], pv[:end]) {
			continue // the usual case, at memory speed; a difference is looked for value by value
		}
		for i := 0; i < end; i++ {
			if !same(fv[i], pv[i]) {
				first = &difference{bar: i, output: fmt.Sprintf("series #%d (%s)", k+1, f.what), full: f.valueText(i), pre: p.valueText(i), cut: cut}
				break
			}
		}
	}
	return first
}

func (s *Series) valueText(i int) string { return s.elem(i).String() }

func at(v []bool, i int) bool { return i < len(v) && v[i] }

// flagDifference is the first bar i before cut where at(a, i) and at(b, i)
// differ, or -1: a signal's flags, where a missing one (nil, or past its
// end) is false. A signal neither run set compares at memory speed; it
// was looked for bar by bar: 40 % of a million-bar proof's CPU.
func flagDifference(a, b []bool, cut int) int {
	a, b = a[:min(cut, len(a))], b[:min(cut, len(b))]
	m := min(len(a), len(b))
	if !sameFlags(a[:m], b[:m]) {
		for i := range m {
			if a[i] != b[i] {
				return i
			}
		}
	}
	rest := a[m:] // past the shorter one, the other must hold no true flag
	if len(b) > m {
		rest = b[m:]
	}
	if len(rest) > 0 {
		if i := bytes.IndexByte(unsafe.Slice((*byte)(unsafe.Pointer(&rest[0])), len(rest)), 1); i >= 0 {
			return m + i
		}
	}
	return -1
}

// sizeAt reads strategy.Signals.Size: nil is 1.0 everywhere, one value
// applies to every bar.
func sizeAt(v []float64, i int) float64 {
	switch {
	case len(v) == 0:
		return 1
	case len(v) == 1:
		return v[0]
	case i < len(v):
		return v[i]
	}
	return 1
}

func same(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) }

// sameFlags reports whether a and b are equal, flag for flag.
func sameFlags(a, b []bool) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 0 {
		return true
	}
	return bytes.Equal(unsafe.Slice((*byte)(unsafe.Pointer(&a[0])), len(a)), unsafe.Slice((*byte)(unsafe.Pointer(&b[0])), len(b)))
}

// sameBits reports whether a and b hold the same bits: then every value
// is the same, though values can be the same (NaNs, zeros of two signs)
// in other bits.
func sameBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 0 {
		return true
	}
	ab := unsafe.Slice((*byte)(unsafe.Pointer(&a[0])), 8*len(a))
	bb := unsafe.Slice((*byte)(unsafe.Pointer(&b[0])), 8*len(b))
	return bytes.Equal(ab, bb)
}

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func intentText(in strategy.Intent) string {
	switch in.Kind {
	case strategy.Target:
		e, exits := in.Exits, ""
		for _, x := range [...]struct {
			name string
			v    float64
		}{{"stop_loss", e.StopLoss}, {"take_profit", e.TakeProfit}, {"trailing_stop", e.TrailingStop}} {
			if x.v != 0 {
				exits += fmt.Sprintf(", %s=%s", x.name, fmtFloat(x.v))
			}
		}
		return fmt.Sprintf("ctx.target(%s%s)", fmtFloat(in.Value), exits)
	case strategy.Qty:
		if in.Value < 0 {
			return fmt.Sprintf("ctx.sell(%s)", fmtFloat(-in.Value))
		}
		return fmt.Sprintf("ctx.buy(%s)", fmtFloat(in.Value))
	}
	return "no intent"
}

// Record makes st keep each bar's account and intent, for CheckLookahead.
// Call it before the first Step; Trace returns what was kept.
func (st *Stepper) Record() {
	st.rec = &Trace{steps: newSteps(st.r.n), series: st.r.built}
	if !st.s.chain {
		return
	}
	n, w := st.r.n, st.s.Warmup()
	cuts := append(PrefixCuts(n, w), DrawnPrefixCuts(n, w, st.s.proofSeed)...)
	st.snapAt, st.snapNext = chainPoints(cuts), 0
	st.origin = originOf(st.r.built)
	st.rec.chain = &chainTrace{snaps: make(map[int]*encoded, len(st.snapAt))}
}

// originOf maps each series setup computed to its place in built.
func originOf(built []*Series) map[*Series]int {
	m := make(map[*Series]int, len(built))
	for k, s := range built {
		if _, dup := m[s]; !dup {
			m[s] = k
		}
	}
	return m
}

// snapshot keeps the state before bar i for the chained proof, when the
// bars so far were stepped once each in order.
func (st *Stepper) snapshot(i int) {
	st.snapNext++
	if st.rec == nil || st.recBroken || i != st.rec.steps.len() {
		return
	}
	st.rec.chain.snaps[i] = snapshotCtx(st.ctx, st.origin)
}

// Trace is what Record kept; ok is false when Record was not called or
// the bars were not stepped once each, in order, from bar 0. A run that
// stopped stepping early (the engine stops at a bust account) keeps the
// bars it stepped.
func (st *Stepper) Trace() (tr Trace, ok bool) {
	if st.rec == nil || st.recBroken {
		return Trace{}, false
	}
	return *st.rec, true
}

func (st *Stepper) record(i int, acct strategy.Account, in strategy.Intent) {
	if st.rec == nil || st.recBroken {
		return
	}
	if i != st.rec.steps.len() {
		st.recBroken = true
		return
	}
	st.rec.steps.add(acct, in)
}

// Passed reports whether check, a lookahead_check text, is a passed proof.
func Passed(check string) bool { return strings.HasPrefix(check, "passed (") }
