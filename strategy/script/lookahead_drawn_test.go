package script

import (
	"math"
	"slices"
	"strings"
	"testing"

	"go.starlark.net/starlark"

	"wicket/strategy"
	"wicket/strategy/ta"
)

// sparseSMA is a copy of ta.sma(s, period) with a sparse leak planted in
// it: at about one bar in 64 (the bars whose next close, in ticks of 1e-4,
// is a multiple of 64) it returns the average of the next period values
// instead of the last period ones. Everywhere else it is the honest
// average, so a prefix run differs from the full run only at those bars,
// and only when the prefix ends within period bars after one.
func sparseSMA(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var s *Series
	var period int
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 2, &s, &period); err != nil {
		return nil, err
	}
	x := s.values()
	out := make([]float64, len(x))
	for i := range out {
		out[i] = math.NaN()
		if i+1 < len(x) && int64(math.Round(x[i+1]*1e4))%64 == 0 && i+period < len(x) {
			out[i] = mean(x[i+1 : i+1+period])
		} else if i+1 >= period {
			out[i] = mean(x[i+1-period : i+1])
		}
	}
	// Tracked as the ta module's series are, so the proof compares it too.
	return s.run.track(&Series{vals: out, key: s.run.memo.Key("test.sparse_sma", []ta.Key{s.key}, []float64{float64(period)}), start: s.start + period - 1, run: s.run, what: "sparse_sma"}), nil
}

func mean(v []float64) float64 {
	t := 0.0
	for _, x := range v {
		t += x
	}
	return t / float64(len(v))
}

// twelveSeries are 12 series of 3000 hourly bars: consecutive windows of
// one long synthetic walk.
func twelveSeries() []strategy.Bars {
	all := SmokeBars(12 * 3000)
	out := make([]strategy.Bars, 12)
	for k := range out {
		out[k] = all.Slice(k*3000, (k+1)*3000)
		out[k].Series = all.Series
	}
	return out
}

// TestProofCatchesSparseLeak: the sparse leak planted in a copy of a host
// function is refused by the per-run proof on each of 12 series, in both
// styles; the fixed cuts alone let it through on some of them (what the
// outside verification saw), the drawn ones catch it.
func TestProofCatchesSparseLeak(t *testing.T) {
	registerTestBuiltin(t, "sparse_sma", sparseSMA)
	sig := mustLoad(t, "def signals(bars):\n    f = sparse_sma(bars.close, 14)\n    return {'long': bars.close > f, 'exit': bars.close < f}\n", Options{})
	onBar := mustLoad(t, "def setup(ctx):\n    ctx.f = sparse_sma(ctx.close, 14)\ndef on_bar(ctx):\n    if ctx.f[0] != None and ctx.close[0] > ctx.f[0]:\n        ctx.target(1)\n    else:\n        ctx.flat()\n", Options{})
	fixedMissed := 0
	for k, bars := range twelveSeries() {
		_, tr, err := sig.SignalsTrace(bg(t), bars)
		if err != nil {
			t.Fatal(err)
		}
		seed := sig.ProofSeed(bars)
		if _, err := sig.CheckLookaheadSeed(bg(t), bars, tr, seed); err == nil {
			t.Errorf("series %d: the sparse leak passed the proof (seed %016x)", k+1, seed)
		} else {
			asError(t, err, KindLookahead)
		}
		if !caughtAt(PrefixCuts(bars.Len(), sig.Warmup()), bars) {
			fixedMissed++
		}
		if k%4 == 0 { // on_bar reruns cost more: every fourth series
			if _, err := onBar.CheckLookahead(bg(t), bars, stepAll(t, onBar, bars)); err == nil {
				t.Errorf("series %d: the sparse leak passed the on_bar proof", k+1)
			}
		}
	}
	if fixedMissed == 0 {
		t.Errorf("the fixed cuts alone caught the leak on all 12 series: the test no longer shows what the drawn cuts add")
	}
	t.Logf("the 4 fixed cuts alone miss the leak on %d of 12 series", fixedMissed)
}

// caughtAt reports whether one of cuts ends within 14 bars after a leaking
// bar of sparseSMA on bars (where a prefix run's value differs).
func caughtAt(cuts []int, bars strategy.Bars) bool {
	for _, c := range cuts {
		for i := max(13, c-14); i < c; i++ {
			if i+1 < bars.Len() && int64(math.Round(bars.Close[i+1]*1e4))%64 == 0 {
				return true
			}
		}
	}
	return false
}

// TestDrawnPrefixCuts: the drawn cuts are distinct, sorted, after the
// warm-up, none a fixed cut, the same for a seed and different for
// another, and their total length stays within the budget.
func TestDrawnPrefixCuts(t *testing.T) {
	for _, tc := range []struct{ n, warmup int }{{2, 0}, {10, 3}, {100, 20}, {3000, 14}, {100000, 50}, {1000000, 200}, {1000, 999}} {
		a := DrawnPrefixCuts(tc.n, tc.warmup, 1)
		if !slices.Equal(a, DrawnPrefixCuts(tc.n, tc.warmup, 1)) {
			t.Errorf("n=%d: one seed, two sets of cuts", tc.n)
		}
		if len(a) > 0 && tc.n > 100 && slices.Equal(a, DrawnPrefixCuts(tc.n, tc.warmup, 2)) {
			t.Errorf("n=%d: seeds 1 and 2 drew the same cuts %v", tc.n, a)
		}
		fixed := PrefixCuts(tc.n, tc.warmup)
		total := 0
		for k, c := range a {
			if c <= min(tc.warmup, tc.n-1) || c > tc.n-1 || slices.Contains(fixed, c) || (k > 0 && c <= a[k-1]) {
				t.Errorf("n=%d warmup=%d: bad cut %d in %v (fixed %v)", tc.n, tc.warmup, c, a, fixed)
			}
			total += c
		}
		if len(a) > DrawnCuts || total > max(tc.n/4, drawnBudgetFloor) {
			t.Errorf("n=%d: %d drawn cuts rerun %d bars, over the budget", tc.n, len(a), total)
		}
	}
	if n := len(DrawnPrefixCuts(3000, 14, 7)); n != DrawnCuts {
		t.Errorf("3000 bars: %d drawn cuts, want %d", n, DrawnCuts)
	}
	if got := LookaheadPassed(4, 32, 0xabc); !strings.HasPrefix(got, "passed (36 prefixes: 4 fixed, 32 drawn with seed 0000000000000abc") || !Passed(got) {
		t.Errorf("LookaheadPassed = %q", got)
	}
}
