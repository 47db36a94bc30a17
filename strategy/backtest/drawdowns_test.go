package backtest

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestDrawdownsAgreeWithMetrics: on random curves (some starting below
// the capital, some ending under water, some with flat runs at the
// peak), the deepest period's depth is the metrics' max drawdown to the
// bit and the longest period's bars and time are the metrics' longest
// drawdown; every period recovers at a bar at or above its peak, or is
// the last and ends at the last bar.
func TestDrawdownsAgreeWithMetrics(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	const capital = 1000.0
	for k := range 400 {
		n := 1 + rng.IntN(60)
		c := Curve{Time: make([]int64, n), Equity: make([]float64, n)}
		e := capital * (0.9 + 0.2*rng.Float64())
		for i := range n {
			c.Time[i] = int64(1_600_000_000 + 3600*i + 60*rng.IntN(30)*i)
			if rng.IntN(5) > 0 { // else equity stays: a flat run
				e *= 1 + 0.06*(rng.Float64()-0.5)
			}
			c.Equity[i] = e
		}
		m := EquityMetrics(c, nil, capital, 8760, time.Hour)
		ds := Drawdowns(c, capital)
		deepest, longest := 0.0, Drawdown{}
		for j, d := range ds {
			deepest = max(deepest, d.Depth)
			if d.Duration > longest.Duration || d.Duration == longest.Duration && d.Bars > longest.Bars {
				longest = d
			}
			peak := capital
			if d.Peak > 0 || c.Equity[0] >= capital {
				peak = c.Equity[d.Peak]
			}
			if d.Recovered != (c.Equity[d.End] >= peak) || !d.Recovered && (j != len(ds)-1 || d.End != n-1) {
				t.Fatalf("curve %d: period %d %+v (peak %v, equity at its end %v)", k, j, d, peak, c.Equity[d.End])
			}
			if got := 1 - c.Equity[d.Trough]/peak; got != d.Depth {
				t.Fatalf("curve %d: period %d depth %v, its trough says %v", k, j, d.Depth, got)
			}
		}
		if deepest != m.MaxDrawdown || longest.Bars != m.MaxDrawdownBars || longest.Duration != m.MaxDrawdownDuration {
			t.Fatalf("curve %d: periods say depth %v, longest %d bars %v; metrics %v, %d bars %v",
				k, deepest, longest.Bars, longest.Duration, m.MaxDrawdown, m.MaxDrawdownBars, m.MaxDrawdownDuration)
		}
	}
}

// TestDeepestDrawdowns: the k deepest, deepest first, ties in time order.
func TestDeepestDrawdowns(t *testing.T) {
	ds := []Drawdown{{Peak: 0, Depth: 0.1}, {Peak: 5, Depth: 0.3}, {Peak: 9, Depth: 0.1}, {Peak: 12, Depth: 0.2}}
	got := DeepestDrawdowns(ds, 3)
	if len(got) != 3 || got[0].Peak != 5 || got[1].Peak != 12 || got[2].Peak != 0 {
		t.Errorf("deepest 3: %+v", got)
	}
	if len(DeepestDrawdowns(ds, 9)) != 4 || ds[0].Peak != 0 {
		t.Errorf("k beyond the periods, or the input reordered: %+v", ds)
	}
}
