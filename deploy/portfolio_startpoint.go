package deploy

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"wicket/strategy"
	"wicket/strategy/scriptapi"
	"wicket/strategy/worker"
)

// The start-point check of a portfolio deployment. A deployment decides
// each bar over its warm-up and the bars since, a backtest over all the
// history before; they decide alike only when the strategy's decisions
// no longer depend on where its history began. For one series the
// research engine's check compares every value the strategy computes
// (preview.go); a portfolio's decision is its weights, asked of the
// worker by the deployment's own decision function (decidePortfolio):
// at each of the warm-up's last startPointDecisions calendar bars, the
// weights decided over the whole warm-up are compared with those decided
// from each later first bar (scriptapi.StartPointOffsets: 1/16 to 1/2 of the
// warm-up in), within scriptapi.StartPointTolerance. The decisions need the
// longest history whose run disagreed; a run that never agreed refuses
// the deployment, naming the bar, both weights and the fix.

// startPointDecisions is how many of the warm-up's last calendar bars
// the portfolio start-point check decides at.
const startPointDecisions = 4

// portfolioStartPoint runs the start-point check of portfolio deployment
// d over its legs' warm-up bars.
func (r *Runner) portfolioStartPoint(ctx context.Context, d *Deployment, bars []strategy.Bars) (scriptapi.StartPoint, string, error) {
	var cal []int64
	for _, b := range bars {
		cal = append(cal, b.Time...)
	}
	slices.Sort(cal)
	cal = slices.Compact(cal)
	n := len(cal)
	sp := scriptapi.StartPoint{Bars: n, Offsets: scriptapi.StartPointOffsets(n), Tolerance: scriptapi.StartPointTolerance, Series: []scriptapi.StartPointSeries{}, Warmup: d.Warmup}
	if len(sp.Offsets) == 0 {
		sp.Verdict = fmt.Sprintf("not run: %d calendar bar(s) of warm-up leave no later first bar to compare", n)
		return sp, fmt.Sprintf("the start-point check of strategy %s cannot run over %d calendar bars of warm-up: give --warmup 4 or more (and that much history: wicket data fetch each of %s)", d.Strategy, n, d.Series), nil
	}
	k := min(startPointDecisions, n-sp.Offsets[len(sp.Offsets)-1])
	names := make([]string, len(d.Legs))
	for a := range d.Legs {
		names[a] = d.Legs[a].Series
	}
	// window is each leg's bars from calendar bar from to bar to.
	window := func(from, to int) []strategy.Bars {
		out := make([]strategy.Bars, len(bars))
		for a, b := range bars {
			i, _ := slices.BinarySearch(b.Time, cal[from])
			j, ok := slices.BinarySearch(b.Time, cal[to])
			if ok {
				j++
			}
			out[a] = b.Slice(i, j)
			out[a].Series = b.Series
		}
		return out
	}
	out := scriptapi.StartPointSeries{Name: "weights", Converged: true}
	refusal := ""
	for j := n - k; j < n; j++ {
		full, err := r.decidePortfolio(ctx, d, window(0, j))
		if err != nil {
			return sp, "", fmt.Errorf("the start-point check over the warm-up to %s: %w", unixRFC(cal[j]), err)
		}
		for _, o := range sp.Offsets {
			if o > j {
				continue
			}
			got, err := r.decidePortfolio(ctx, d, window(o, j))
			if err != nil {
				return sp, "", fmt.Errorf("the start-point check from %s to %s: %w", unixRFC(cal[o]), unixRFC(cal[j]), err)
			}
			if sameWeights(full, got) {
				continue
			}
			// Decided from o on, the weights differ: they need more than
			// the j-o+1 bars that run had.
			if need := j - o + 2; need > out.Needed {
				out.Needed = need
			}
			if o == sp.Offsets[0] { // even the longest later run disagreed
				out.Converged = false
				if refusal == "" {
					refusal = fmt.Sprintf("at the calendar bar of %s, its weights decided over the %d warm-up bars up to it (%s) differ from those decided over only the last %d (%s)",
						unixRFC(cal[j]), j+1, strings.TrimPrefix(weightsNote(names, full), "weights "), j-o+1, strings.TrimPrefix(weightsNote(names, got), "weights "))
				}
			}
		}
	}
	sp.Series = append(sp.Series, out)
	sp.Outputs = &out
	sp.Needed = out.Needed
	sp.Passed = out.Converged && d.Warmup >= sp.Needed
	runs := fmt.Sprintf("weights decided at the warm-up's last %d calendar bars from bars %s of %d", k, joinOffsets(sp.Offsets), n)
	switch {
	case sp.Passed && sp.Needed == 0:
		sp.Verdict = fmt.Sprintf("passed: the %s equal those decided over the whole warm-up", runs)
	case sp.Passed:
		sp.Verdict = fmt.Sprintf("passed: the decisions need %d bars of history and the warm-up is %d (%s)", sp.Needed, d.Warmup, runs)
	default:
		sp.Verdict = fmt.Sprintf("failed: %s (%s)", refusal, runs)
		if refusal == "" {
			sp.Verdict = fmt.Sprintf("failed: the decisions need %d bars of history and the warm-up is %d (%s)", sp.Needed, d.Warmup, runs)
		}
	}
	if sp.Passed {
		return sp, "", nil
	}
	return sp, fmt.Sprintf("the start-point check of portfolio strategy %s %s: its decisions still depend on where the history began, so the deployment would not decide as its backtest does: give a longer warm-up, --warmup %d or more (with that much history of each of %s: wicket data fetch), or use windowed indicators (e.g. ta.sma) instead of seeded ones (ta.ema)",
		d.Strategy, strings.TrimPrefix(sp.Verdict, "failed: "), max(2*d.Warmup, sp.Needed), d.Series), nil
}

// sameWeights reports whether two decisions of a portfolio agree: the
// same assets decided, each weight within the start-point tolerance.
func sameWeights(a, b worker.PortfolioDecision) bool {
	if len(a.Has) != len(b.Has) {
		return false
	}
	for k := range a.Has {
		if a.Has[k] != b.Has[k] {
			return false
		}
		if !a.Has[k] {
			continue
		}
		x, y := a.Weights[k], b.Weights[k]
		if math.Abs(x-y) > scriptapi.StartPointBound(x, y, 1e-12) {
			return false
		}
	}
	return true
}

func joinOffsets(offs []int) string {
	parts := make([]string, len(offs))
	for i, o := range offs {
		parts[i] = fmt.Sprint(o)
	}
	return strings.Join(parts, ", ")
}
