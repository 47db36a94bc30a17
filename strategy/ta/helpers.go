package ta

import (
	"math"

	talib "github.com/markcheno/go-talib"
)

// helpers are the series utilities that are not TA-Lib functions.
func helpers() []*Entry {
	ab := []string{"a", "b"}
	return []*Entry{
		{Name: "cross_above", Category: Helper, Bool: true, Inputs: ab, Outputs: one, WarmupRule: "1", lookback: fixed(1), aligned: true,
			Summary: "true on the bar where a rises above b (b a series or a number): a > b now and a <= b on the previous bar",
			compute: func(in [][]float64, _ []float64) [][]float64 { return outs(cross(in[0], in[1], 1)) }},
		{Name: "cross_below", Category: Helper, Bool: true, Inputs: ab, Outputs: one, WarmupRule: "1", lookback: fixed(1), aligned: true,
			Summary: "true on the bar where a falls below b (b a series or a number): a < b now and a >= b on the previous bar",
			compute: func(in [][]float64, _ []float64) [][]float64 { return outs(cross(in[0], in[1], -1)) }},
		{Name: "highest", Category: Helper, Inputs: ser, Outputs: one, Params: []Param{periodP(20, 1)},
			WarmupRule: "period - 1", lookback: periodMinus1, Summary: "highest value over the last period bars, the current one included",
			compute: series1(func(x, p []float64) []float64 { return rolling(x, pi(p, 0), talib.Max) })},
		{Name: "lowest", Category: Helper, Inputs: ser, Outputs: one, Params: []Param{periodP(20, 1)},
			WarmupRule: "period - 1", lookback: periodMinus1, Summary: "lowest value over the last period bars, the current one included",
			compute: series1(func(x, p []float64) []float64 { return rolling(x, pi(p, 0), talib.Min) })},
		{Name: "shift", Category: Helper, Inputs: ser, Outputs: one, raw: true,
			Params:     []Param{{Name: "bars", Type: Int, Default: 1, Min: 0, Max: 100000, Doc: "how many bars back (never negative: a strategy cannot read the future)"}},
			WarmupRule: "bars", lookback: func(p []float64) int { return pi(p, 0) },
			Summary: "the series delayed by bars: shift(s, 1)[0] is s[1]",
			compute: func(in [][]float64, p []float64) [][]float64 {
				x, k := in[0], pi(p, 0)
				out := nanSlice(len(x))
				if k < len(x) {
					copy(out[k:], x[:len(x)-k])
				}
				return outs(out)
			}},
		{Name: "nz", Category: Helper, Inputs: ser, Outputs: one, raw: true,
			Params:     []Param{floatP("value", "", 0, -math.MaxFloat64, math.MaxFloat64, "replacement for missing values")},
			WarmupRule: "0", lookback: fixed(0), Summary: "the series with missing values (None) replaced by value",
			compute: func(in [][]float64, p []float64) [][]float64 {
				out := make([]float64, len(in[0]))
				for i, v := range in[0] {
					if math.IsNaN(v) {
						v = p[0]
					}
					out[i] = v
				}
				return outs(out)
			}},
		{Name: "barssince", Category: Helper, Inputs: []string{"condition"}, Outputs: one, raw: true,
			WarmupRule: "until the condition is first true", lookback: fixed(0),
			Summary: "bars since the condition was last true (0 on a true bar); None before it is first true",
			compute: func(in [][]float64, _ []float64) [][]float64 {
				out := make([]float64, len(in[0]))
				last := -1
				for i, v := range in[0] {
					if v != 0 && !math.IsNaN(v) {
						last = i
					}
					if last < 0 {
						out[i] = math.NaN()
					} else {
						out[i] = float64(i - last)
					}
				}
				return outs(out)
			}},
	}
}

// rolling applies a TA-Lib window function, allowing a one-bar window
// (TA-Lib's MAX and MIN require two).
func rolling(x []float64, period int, f func([]float64, int) []float64) []float64 {
	if period == 1 {
		return append([]float64(nil), x...)
	}
	return f(x, period)
}

// cross is 1 where a crosses b in direction dir (+1 above, -1 below), 0
// elsewhere; missing values never cross.
func cross(a, b []float64, dir float64) []float64 {
	out := make([]float64, len(a))
	crossEach(a, b, dir, func(i int) { out[i] = 1 })
	return out
}

// CrossFlags sets out[i] to whether a crosses b at bar i in direction dir
// (+1 above, -1 below): exactly the bars where cross_above (dir +1) or
// cross_below (-1) of a and b is 1, for a strategy's decisions that need
// the flags and not the series (no float column is built). out, a and b
// have one length.
func CrossFlags(out []bool, a, b []float64, dir float64) {
	clear(out)
	crossEach(a, b, dir, func(i int) { out[i] = true })
}

// CrossFlagsBoth is CrossFlags of a and b in both directions in one pass:
// above[i] is cross_above(a, b) at bar i and below[i] cross_below(a, b)
// (a strategy's entry and exit on one pair of series read each once).
// Either may be nil. All have one length.
func CrossFlagsBoth(above, below []bool, a, b []float64) {
	switch {
	case above == nil:
		CrossFlags(below, a, b, -1)
		return
	case below == nil:
		CrossFlags(above, a, b, 1)
		return
	}
	if len(a) == 0 {
		return
	}
	b = b[:len(a)]
	below = below[:len(a)]
	above = above[:len(a)]
	// Four bars at a time where the processor can (crossflags_amd64.s),
	// every flag of bars 1 .. m written; the loop below does the rest.
	if m := crossBothWide(above, below, a, b); m > 0 {
		above[0], below[0] = false, false
		clear(above[m+1:])
		clear(below[m+1:])
		a, b, above, below = a[m:], b[m:], above[m:], below[m:]
	} else {
		clear(above)
		clear(below)
	}
	// crossEach's rule written out for both directions at once (a hot
	// loop: written through it, this pass is a fifth slower);
	// TestCrossFlagsAreTheCrossSeries holds the two to the catalog's
	// series. (a-b)*-1 is -(a-b) exactly, so a cross below is d0 < 0 after
	// d1 >= 0.
	d1 := a[0] - b[0]
	for i := 1; i < len(a); i++ {
		d0 := a[i] - b[i]
		if d0 > 0 {
			if d1 <= 0 {
				above[i] = true
			}
		} else if d0 < 0 && d1 >= 0 {
			below[i] = true
		}
		d1 = d0
	}
}

// crossEach calls set for each bar where a crosses b in direction dir: the
// definition of a cross (CrossFlagsBoth writes it out for both
// directions). A bar crosses when (a-b)*dir is above 0 there
// and at most 0 on the bar before; a missing value (NaN) on either bar
// never crosses, since every comparison with NaN is false.
func crossEach(a, b []float64, dir float64, set func(int)) {
	if len(a) == 0 {
		return
	}
	b = b[:len(a)]
	d1 := (a[0] - b[0]) * dir
	for i := 1; i < len(a); i++ {
		d0 := (a[i] - b[i]) * dir
		if d0 > 0 && d1 <= 0 {
			set(i)
		}
		d1 = d0
	}
}
