package deploy

import (
	"math"
	"testing"

	"github.com/shopspring/decimal"

	"wicket/strategy/backtest"
)

// TestDriftBreakerPastTheReportWindow: a deployment that tracks its
// replay to the fee keeps running past MaxReportDecisions decisions with
// a 2-unit max_tracking_gap, whether it never goes flat (its window
// keeps every decision) or goes flat often (the window moves on, at a
// flat decision, replaying from the equity there). Before, the window
// was cut at the latest 500 decisions and replayed from the capital,
// flat, against a live book that held and had compounded: a drift of
// tens that paused a deployment doing exactly what it should.
func TestDriftBreakerPastTheReportWindow(t *testing.T) {
	const n = MaxReportDecisions + 120
	rising := make([]float64, n) // a steady rise: the book compounds
	cycles := make([]float64, n) // 12 bars up 0.4 %, 8 down 0.3 %: long on up bars, flat on down
	p := 100.0
	for i := range n {
		rising[i] = 100 * math.Pow(1.001, float64(i))
		if i%20 < 12 {
			p *= 1.004
		} else {
			p *= 0.997
		}
		cycles[i] = p
	}
	for _, tc := range []struct {
		name, source string
		closes       []float64
		cut          bool
	}{
		{"never flat", hold, rising, false},
		{"flat in every fall", flip, cycles, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := newRig(t)
			gap, err := backtest.ParseTrackingGap("2")
			if err != nil {
				t.Fatal(err)
			}
			d := g.deploy(Spec{Strategy: "s.star", Source: tc.source, Allowance: Allowance{MaxTrackingGap: &gap}})
			bars := path(tc.closes...)
			for i := range bars {
				g.stepAt(d.ID, bars, i, bars[i].Close)
			}
			dep, _ := g.r.Get(d.ID)
			if dep.State != StateRunning {
				t.Fatalf("%s after %d bars: %s", dep.State, n, dep.Reason)
			}
			l, err := g.r.get(d.ID)
			if err != nil {
				t.Fatal(err)
			}
			kept := *l.d
			gapNow, live, replay, ok, err := g.r.trackingGap(ctxT(t), &kept, &l.drift, bars[n-1])
			if err != nil || !ok || gapNow.Abs().GreaterThan(decimal.NewFromInt(2)) {
				t.Fatalf("gap %s (live %s, replay %s, ok %v): %v", gapNow, live, replay, ok, err)
			}
			if l.drift.cut != tc.cut || (!tc.cut && len(l.drift.decided) < n-1) || (tc.cut && len(l.drift.decided) > MaxReportDecisions) {
				t.Errorf("the window: cut %v, %d decisions", l.drift.cut, len(l.drift.decided))
			}
			// A fresh read of the journal (a restart) finds the same window.
			fresh := &driftWindow{}
			again, _, _, ok2, err := g.r.trackingGap(ctxT(t), &kept, fresh, bars[n-1])
			if err != nil || !ok2 || !again.Equal(gapNow) || len(fresh.decided) != len(l.drift.decided) {
				t.Errorf("fresh read: gap %s against %s, %d decisions against %d (%v)", again, gapNow, len(fresh.decided), len(l.drift.decided), err)
			}
			t.Logf("%d bars: equity %s, live %s, replay %s, gap %s over %d decisions", n, dep.Equity.StringFixed(2), live.StringFixed(2), replay.StringFixed(2), gapNow.StringFixed(4), len(l.drift.decided))
		})
	}
}
