package backtest

import (
	"cmp"
	"slices"
	"time"
)

// Drawdown is one drawdown period of an equity curve, by the rules of
// the metrics (curveAcc): the starting capital is the first peak, at the
// first bar; a bar at or above the peak is a new peak; a period runs
// from its peak, through its trough, to the first bar back at or above
// the peak (its recovery), or to the last bar when equity never got
// back. Its depth is 1 - trough/peak, its length the bars and the time
// from the peak to the recovery (or the last bar): the deepest period's
// depth is Metrics.MaxDrawdown, and the longest's length is
// Metrics.MaxDrawdownBars and MaxDrawdownDuration.
type Drawdown struct {
	Peak, Trough, End int // bar indices; End is the recovery bar or the last bar
	PeakTime          time.Time
	TroughTime        time.Time
	EndTime           time.Time
	Recovered         bool
	Depth             float64 // 1 - trough equity / peak equity
	Bars              int     // End - Peak
	Duration          time.Duration
}

// Drawdowns are c's drawdown periods in time order (a curve that never
// fell below its running peak has none).
func Drawdowns(c Curve, capital float64) []Drawdown {
	n := len(c.Equity)
	if n == 0 || len(c.Time) != n {
		return nil
	}
	var out []Drawdown
	peak, peakAt, lastPeak := capital, 0, -1
	var cur *Drawdown
	end := func(i int, recovered bool) {
		cur.End, cur.EndTime, cur.Recovered = i, unixTime(c.Time[i]), recovered
		cur.Bars, cur.Duration = i-cur.Peak, cur.EndTime.Sub(cur.PeakTime)
		out = append(out, *cur)
		cur = nil
	}
	for i, e := range c.Equity {
		if e >= peak {
			if cur != nil {
				end(i, true)
			}
			peak, peakAt, lastPeak = e, i, i
			continue
		}
		if cur == nil {
			cur = &Drawdown{Peak: peakAt, PeakTime: unixTime(c.Time[peakAt]), Trough: i, TroughTime: unixTime(c.Time[i]), Depth: 1 - e/peak}
		} else if d := 1 - e/peak; d > cur.Depth {
			cur.Trough, cur.TroughTime, cur.Depth = i, unixTime(c.Time[i]), d
		}
	}
	if cur != nil && lastPeak != n-1 {
		end(n-1, false)
	}
	return out
}

// DeepestDrawdowns are the k deepest of ds, deepest first (the earlier
// of two as deep first).
func DeepestDrawdowns(ds []Drawdown, k int) []Drawdown {
	out := slices.Clone(ds)
	slices.SortStableFunc(out, func(a, b Drawdown) int { return cmp.Compare(b.Depth, a.Depth) })
	return out[:min(k, len(out))]
}
