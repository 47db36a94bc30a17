package ta

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestCrossFlagsWideMatchScalar: CrossFlagsBoth four bars at a time
// (crossflags_amd64.s) sets exactly the flags of its scalar loop, over
// every length up to 70 and at every offset of the four-bar steps, on
// values full of ties, signed zeros, infinities and NaNs, with garbage
// in the flags beforehand. Where there is no wide kernel both paths are
// the scalar loop.
func TestCrossFlagsWideMatchScalar(t *testing.T) {
	if !wideCross {
		t.Log("no wide kernel on this processor: the scalar loop twice")
	}
	defer func(w bool) { wideCross = w }(wideCross)
	special := []float64{0, math.Copysign(0, -1), 1, -1, 0.5, math.Inf(1), math.Inf(-1), math.NaN(), 1e-310, -1e-310}
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 400 {
		n := trial % 71
		a, b := make([]float64, n), make([]float64, n)
		for i := range n {
			a[i], b[i] = math.Round(rng.NormFloat64()*2), math.Round(rng.NormFloat64()*2)
			if rng.IntN(4) == 0 {
				a[i] = special[rng.IntN(len(special))]
			}
			if rng.IntN(4) == 0 {
				b[i] = special[rng.IntN(len(special))]
			}
		}
		var got [2][2][]bool // [wide][above, below]
		for w := range 2 {
			wideCross = w == 1 && wideCrossFound
			for d := range 2 {
				got[w][d] = make([]bool, n)
				for i := range n {
					got[w][d][i] = rng.IntN(2) == 0
				}
			}
			CrossFlagsBoth(got[w][0], got[w][1], a, b)
		}
		for d, name := range []string{"above", "below"} {
			for i := range n {
				if got[0][d][i] != got[1][d][i] {
					t.Fatalf("trial %d, %d bars: %s at bar %d: scalar %v, wide %v (a %v→%v, b %v→%v)",
						trial, n, name, i, got[0][d][i], got[1][d][i], at(a, i-1), a[i], at(b, i-1), b[i])
				}
			}
		}
	}
}
