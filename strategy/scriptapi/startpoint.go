package scriptapi

import (
	"math"
	"slices"
)

// StartPoint is the start-point check's report: how many bars of history
// a strategy's values need before they stop depending on where the
// history began (an EMA's seed, RSI's and ADX's smoothing), and whether a
// given warm-up is that long. The check runs the strategy again from
// later first bars (Offsets) and compares every series it computes, and
// the signals it returns, with the run over all the bars.
type StartPoint struct {
	// Bars is how many bars the check ran over; Offsets the first bars of
	// the later runs (StartPointOffsets: 1/16, 1/8, 1/4 and 1/2 of Bars).
	Bars    int   `json:"bars"`
	Offsets []int `json:"offsets"`
	// Tolerance: two values agree when they differ by at most this much
	// relative to the larger of them, or of the series' mean magnitude
	// (so a series that crosses zero is not judged by its smallest
	// values); missing (NaN) agrees only with missing.
	Tolerance float64 `json:"tolerance"`
	// Series are the series the strategy computed (every ta call and
	// series operation, by name and parameters, one entry per distinct
	// name), each with the bars it needs; Outputs the signals it returns
	// (signals(bars) strategies: long, short, exit and size together). An
	// on_bar strategy is stepped through the bars with the same flat
	// account in every run: its intents are the outputs, and each number
	// it keeps on ctx (ctx.NAME) is compared like a series.
	Series  []StartPointSeries `json:"series"`
	Outputs *StartPointSeries  `json:"outputs,omitempty"`
	// SeriesClamped says how many series are not listed (their bars still
	// count in Needed).
	SeriesClamped string `json:"series_clamped,omitempty"`
	// Needed is the largest over all: the warm-up the strategy needs.
	Needed int `json:"needed"`
	// Warmup is the warm-up judged, Passed whether it is at least Needed
	// (and every series converged), Verdict the sentence that says so.
	Warmup  int    `json:"warmup"`
	Passed  bool   `json:"passed"`
	Verdict string `json:"verdict"`
}

// StartPointSeries is one series' (or the outputs') need: the number of
// bars from a later first bar after which its values agree with the run
// over all bars, the largest over the offsets. Converged is false when
// some run never agreed up to its last bar: then Needed is that run's
// length, a lower bound.
type StartPointSeries struct {
	Name      string `json:"name"`
	Needed    int    `json:"needed"`
	Converged bool   `json:"converged"`
	// Undecided: the values still differed at the last bar but the
	// difference was shrinking, so the bars were too few to tell; Needed
	// is then an estimate from its rate of shrinking (not converged, not
	// shown to never converge).
	Undecided bool `json:"undecided,omitempty"`
}

// MaxStartPointSeries bounds StartPoint.Series.
const MaxStartPointSeries = 32

// StartPointTolerance is the relative difference below which two values
// agree (see StartPoint.Tolerance).
const StartPointTolerance = 1e-9

// StartPointBound is how far apart two values a and b may be and still
// agree: StartPointTolerance of the largest of their magnitudes and scale
// (a series' typical magnitude, so values near zero are not held to a
// relative bound of nothing).
func StartPointBound(a, b, scale float64) float64 {
	return StartPointTolerance * max(math.Abs(a), math.Abs(b), scale)
}

// StartPointOffsets are the first bars the check runs from, for n bars:
// n/16, n/8, n/4 and n/2, the ones that are distinct and at least 1 (none
// below 4 bars). They are fixed so that the same bars give the same
// report, and spread so that a run from the last of them still has half
// the bars to converge in.
func StartPointOffsets(n int) []int {
	var out []int
	if n < 4 {
		return out
	}
	for _, d := range []int{16, 8, 4, 2} {
		if o := n / d; o >= 1 && !slices.Contains(out, o) {
			out = append(out, o)
		}
	}
	return out
}
