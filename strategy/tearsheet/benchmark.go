package tearsheet

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"wicket/strategy/backtest"
	"wicket/strategy/portfolio"
)

// Benchmark is a passive holding drawn beside a run's equity: what the
// capital would have been worth at each of the run's bars (Time, the
// run's bar times) had it been held so; NaN before the holding starts.
type Benchmark struct {
	Name   string
	Time   []int64
	Equity []float64
}

// Hold is capital put into a series at its first close and held: at each
// of the run's bar times, capital × the series' last close at or before
// it over its first close (NaN before its first bar). Over the run's own
// bars (times are run) it ends at capital × (1 + the buy & hold metric,
// close_T / close_0 - 1).
func Hold(name string, run, times []int64, closes []float64, capital float64) Benchmark {
	b := Benchmark{Name: name, Time: run, Equity: make([]float64, len(run))}
	j, first := -1, math.NaN()
	for i, t := range run {
		for j+1 < len(times) && times[j+1] <= t {
			j++
			if math.IsNaN(first) {
				first = closes[j]
			}
		}
		b.Equity[i] = math.NaN()
		if j >= 0 && first > 0 {
			b.Equity[i] = capital * closes[j] / first
		}
	}
	return b
}

// EqualParts is a portfolio's universe held in equal parts, as its buy &
// hold metric holds it: capital split equally between the assets that
// have a bar in the run, each part put into its asset at its first close
// (cash until then) and held to its last, so the holding ends at capital
// × (1 + the metric). h is the run's per-bar record.
func EqualParts(name string, h *portfolio.Holdings, capital float64) Benchmark {
	n := len(h.Time)
	b := Benchmark{Name: name, Time: make([]int64, n), Equity: make([]float64, n)}
	for i, t := range h.Time {
		b.Time[i] = t.Unix()
	}
	sum := make([]float64, n)
	held := 0
	for _, closes := range h.Close {
		k := slices.IndexFunc(closes, func(c float64) bool { return !math.IsNaN(c) })
		if k < 0 {
			continue // no bar in the run: no part
		}
		held++
		first, last := closes[k], closes[k]
		for i, c := range closes {
			if i >= k && !math.IsNaN(c) {
				last = c
			}
			sum[i] += last / first // 1 (cash) before its first bar
		}
	}
	for i := range sum {
		b.Equity[i] = math.NaN()
		if held > 0 {
			b.Equity[i] = capital * sum[i] / float64(held)
		}
	}
	return b
}

// MaxDrawdownRows is how many drawdown periods the page lists.
const MaxDrawdownRows = 5

// drawdownTable is the deepest drawdown periods of the run's curve.
type drawdownTable struct {
	Head []string
	Rows [][]string
	Note string
}

// drawdowns lists c's MaxDrawdownRows deepest drawdown periods, deepest
// first: the depth is the max drawdown metric's for the deepest, the
// length as the longest drawdown metric writes it.
func drawdowns(c backtest.Curve, capital float64) *drawdownTable {
	all := backtest.Drawdowns(c, capital)
	t := &drawdownTable{Head: []string{"start (peak)", "trough", "recovery", "depth", "length"}}
	for _, d := range backtest.DeepestDrawdowns(all, MaxDrawdownRows) {
		rec := "not recovered"
		if d.Recovered {
			rec = when(d.EndTime)
		}
		t.Rows = append(t.Rows, []string{when(d.PeakTime), when(d.TroughTime), rec, pct(d.Depth), length(d.Bars, d.Duration)})
	}
	switch n := len(all); {
	case n == 0:
		t.Note = "equity never fell below its running peak"
	case n > MaxDrawdownRows:
		t.Note = fmt.Sprintf("the %d deepest of %d drawdown periods", MaxDrawdownRows, n)
	}
	return t
}

// thinned notes that the table was read from a curve of n reported
// points rather than every bar, so its depths and ends are those points'.
func (t *drawdownTable) thinned(n int) {
	t.Note = strings.TrimPrefix(t.Note+"; ", "; ") + "from the report's " + strconv.Itoa(n) + "-point curve, not every bar"
}

// length writes a drawdown's length in bars and days.
func length(bars int, d time.Duration) string {
	return fmt.Sprintf("%d bars (%s days)", bars, num1(d.Hours()/24))
}

// when writes a bar's time: the date alone at midnight UTC.
func when(t time.Time) string {
	t = t.UTC()
	if t.Hour() == 0 && t.Minute() == 0 && t.Second() == 0 {
		return t.Format(time.DateOnly)
	}
	return t.Format("2006-01-02 15:04")
}
