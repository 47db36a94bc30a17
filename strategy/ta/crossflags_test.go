package ta

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestCrossFlagsAreTheCrossSeries: the flags a strategy's decisions take
// from a cross (CrossFlags) are exactly the bars where the catalog's
// cross_above and cross_below are 1, on inputs with missing stretches,
// ties, infinities and a number as b.
func TestCrossFlagsAreTheCrossSeries(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		n := rng.IntN(300)
		a, b := make([]float64, n), make([]float64, n)
		lead := rng.IntN(20)
		for i := range n {
			a[i], b[i] = math.Round(rng.NormFloat64()*3), math.Round(rng.NormFloat64()*3)
			switch {
			case i < lead || rng.IntN(40) == 0:
				a[i] = math.NaN()
			case rng.IntN(60) == 0:
				b[i] = math.Inf(1 - 2*rng.IntN(2))
			case trial%3 == 0:
				b[i] = 0.5 // a number as b, broadcast
			}
		}
		for name, dir := range map[string]float64{"cross_above": 1, "cross_below": -1} {
			e, ok := Builtin().Lookup(name)
			if !ok {
				t.Fatalf("%s is not in the catalog", name)
			}
			res, err := Compute(e, [][]float64{a, b}, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := make([]bool, n)
			for i := range got {
				got[i] = rng.IntN(2) == 0 // garbage the flags must overwrite
			}
			CrossFlags(got, a, b, dir)
			both := [2][]bool{make([]bool, n), make([]bool, n)}
			both[0][0], both[1][0] = true, true // garbage again
			CrossFlagsBoth(both[0], both[1], a, b)
			fused := both[0]
			if dir < 0 {
				fused = both[1]
			}
			for i, v := range res.Outputs[0] {
				if want := v == 1; got[i] != want || fused[i] != want {
					t.Fatalf("trial %d %s bar %d: flag %v (both directions: %v), series value %v (a %v→%v, b %v→%v)", trial, name, i, got[i], fused[i], v, at(a, i-1), a[i], at(b, i-1), b[i])
				}
			}
		}
	}
}

func at(x []float64, i int) float64 {
	if i < 0 {
		return math.NaN()
	}
	return x[i]
}

// TestCrossFlagsPrefixExact: the flags of a cross over the first cut bars
// are the flags over all the bars cut to those bars, on every cut, from
// CrossFlags and CrossFlagsBoth alike, on inputs with gaps (NaN
// stretches), lone NaNs, ties, signed zeros and infinities, and lengths
// around the wide kernel's four bars. The lookahead proof's prefix runs
// take the full run's flags cut to the prefix on that ground
// (strategy/script, sharedFlags), and the full run may have taken the
// fused pass where a prefix run would take the single one, or back.
func TestCrossFlagsPrefixExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	special := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN()}
	for trial := range 120 {
		n := 1 + trial%37 + rng.IntN(40)
		a, b := make([]float64, n), make([]float64, n)
		gap := rng.IntN(n)
		for i := range n {
			a[i], b[i] = math.Round(rng.NormFloat64()*2), math.Round(rng.NormFloat64()*2)
			switch {
			case i < trial%9, i >= gap && i < gap+rng.IntN(6): // warm-up and a gap
				a[i], b[i] = math.NaN(), math.NaN()
			case rng.IntN(6) == 0:
				a[i] = special[rng.IntN(len(special))]
			case rng.IntN(6) == 0:
				b[i] = special[rng.IntN(len(special))]
			}
		}
		full := [2][]bool{make([]bool, n), make([]bool, n)}
		CrossFlagsBoth(full[0], full[1], a, b)
		for cut := 0; cut <= n; cut++ {
			for d, dir := range []float64{1, -1} {
				one := make([]bool, cut)
				CrossFlags(one, a[:cut], b[:cut], dir)
				both := [2][]bool{make([]bool, cut), make([]bool, cut)}
				CrossFlagsBoth(both[0], both[1], a[:cut], b[:cut])
				for i := range cut {
					if one[i] != full[d][i] || both[d][i] != full[d][i] {
						t.Fatalf("trial %d dir %v cut %d bar %d: over the prefix %v (fused %v), over all %d bars %v", trial, dir, cut, i, one[i], both[d][i], n, full[d][i])
					}
				}
			}
		}
	}
}
