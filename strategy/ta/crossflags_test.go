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
