package ta

import (
	"math"
	"testing"
)

// TestMAMAAfterFlatStretches measures what issue 44 item 10 found: STOCH
// smoothed with MAMA leaves TA-Lib C after flat stretches on 1,000,000
// bars (13 of 20 stretches, up to 4.4e-3 relative). In a flat stretch the
// Hilbert phase MAMA adapts by is the angle of rounding noise, so its
// value after the stretch depends on the last bit of arc tangents of
// noise, where the C library's atan and wicket's correctly rounded one
// differ at about one input in a thousand. The test shows that no
// 1e-9 agreement can be promised there: a change of one unit in the last
// place of one close inside each flat stretch (what one differently
// rounded atan amounts to) moves %K's MAMA average after the stretch by
// far more than 1e-9, and leaves every bar before the first stretch
// untouched. docs/strategies.md states this exception to the 1e-9 claim.
func TestMAMAAfterFlatStretches(t *testing.T) {
	const n, stretches, flatLen = 60_000, 20, 120
	e, ok := Builtin().Lookup("stoch")
	if !ok {
		t.Fatal("no stoch")
	}
	c := millionBars(n, 9)
	high, low, cls := c["high"], c["low"], c["close"]
	flatAt := func(k int) int { return 2000 + k*(n-4000)/stretches }
	for k := range stretches {
		at := flatAt(k)
		for i := at; i < at+flatLen; i++ {
			high[i], low[i], cls[i] = cls[at-1], cls[at-1], cls[at-1]
		}
	}
	nudged := append([]float64(nil), cls...)
	nh, nl := append([]float64(nil), high...), append([]float64(nil), low...)
	for k := range stretches {
		i := flatAt(k) + flatLen/2
		nudged[i] = math.Nextafter(nudged[i], math.Inf(1))
		nh[i] = max(nh[i], nudged[i])
	}
	run := func(matype float64) (base, moved Result) {
		p := e.Defaults()
		for i, q := range e.Params {
			if q.Type == MAType {
				p[i] = matype
			}
		}
		var err error
		if base, err = Compute(e, [][]float64{high, low, cls}, p); err != nil {
			t.Fatal(err)
		}
		if moved, err = Compute(e, [][]float64{nh, nl, nudged}, p); err != nil {
			t.Fatal(err)
		}
		return base, moved
	}
	// The control: an SMA forgets the nudge within its window, inside the
	// stretch, so every bar after the stretches is as it was, but for the
	// last-place residue of its running sum.
	sb, sm := run(0)
	for k := range stretches {
		for i := flatAt(k) + flatLen; i < n; i++ {
			if a, b := sb.Outputs[0][i], sm.Outputs[0][i]; !(math.Abs(a-b) <= 1e-12*math.Abs(a) || math.IsNaN(a) && math.IsNaN(b)) {
				t.Fatalf("SMA smoothing: bar %d after stretch %d moved: %v and %v", i, k+1, a, b)
			}
			if k+1 < stretches && i+1 == flatAt(k+1) {
				break
			}
		}
	}
	base, moved := run(7) // mama
	worst, after := 0.0, 0
	for k := range stretches {
		end := flatAt(k) + flatLen
		stop := n
		if k+1 < stretches {
			stop = flatAt(k + 1)
		}
		w := 0.0
		for i := end; i < stop; i++ {
			a, b := base.Outputs[0][i], moved.Outputs[0][i]
			if math.IsNaN(a) || math.IsNaN(b) {
				continue
			}
			w = max(w, math.Abs(a-b)/max(math.Abs(a), math.Abs(b), 1e-300))
		}
		if w > 1e-9 {
			after++
		}
		worst = max(worst, w)
	}
	for i := 0; i < flatAt(0); i++ {
		if a, b := base.Outputs[0][i], moved.Outputs[0][i]; !(a == b || math.IsNaN(a) && math.IsNaN(b)) {
			t.Fatalf("bar %d before the first stretch moved: %v and %v", i, a, b)
		}
	}
	if after == 0 || worst <= 1e-9 {
		t.Fatalf("one ulp in each flat stretch moved nothing past 1e-9 (worst %g): the docs' exception would be unfounded", worst)
	}
	t.Logf("after %d of %d flat stretches %%K's MAMA average moved past 1e-9 relative, up to %.3g", after, stretches, worst)
}
