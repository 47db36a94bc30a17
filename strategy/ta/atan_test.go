package ta

import (
	"math"
	"math/big"
	"math/rand"
	"testing"
)

// bigAtan is atan(x) to 250 bits, rounded to a double: four halvings of
// the argument (atan(c) = 2 atan(c / (1 + sqrt(1 + c^2)))), then the
// series.
func bigAtan(x float64) float64 {
	const prec = 250
	c := new(big.Float).SetPrec(prec).SetFloat64(x)
	one := new(big.Float).SetPrec(prec).SetInt64(1)
	for range 4 {
		r := new(big.Float).SetPrec(prec).Mul(c, c)
		r.Add(r, one)
		r.Sqrt(r)
		r.Add(r, one)
		c.Quo(c, r)
	}
	c2 := new(big.Float).SetPrec(prec).Mul(c, c)
	sum := new(big.Float).SetPrec(prec)
	term := new(big.Float).SetPrec(prec).Set(c)
	for n := 0; n < 400 && term.Sign() != 0; n++ {
		q := new(big.Float).SetPrec(prec).Quo(term, new(big.Float).SetPrec(prec).SetInt64(int64(2*n+1)))
		if n%2 == 0 {
			sum.Add(sum, q)
		} else {
			sum.Sub(sum, q)
		}
		term.Mul(term, c2)
		if e := term.MantExp(nil); e < -prec-8 {
			break
		}
	}
	sum.Mul(sum, new(big.Float).SetPrec(prec).SetInt64(16))
	f, _ := sum.Float64()
	return f
}

// TestAtanCorrectlyRounded: atan is the double nearest the arc tangent
// (checked against 250-bit arithmetic) on inputs from 1e-9 to 1e9 of both
// signs, where math.Atan is off in the last bit at about one in five.
func TestAtanCorrectlyRounded(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	bad, goBad := 0, 0
	const n = 1500
	for i := 0; i < n; i++ {
		x := math.Pow(10, -9+18*r.Float64())
		if i%2 == 1 {
			x = -x
		}
		if i < 300 { // the table's range and its edges
			x = float64(i%65)/64 + (r.Float64()-0.5)/64
		}
		want := bigAtan(x)
		if got := atan(x); got != want {
			bad++
			if bad <= 3 {
				t.Errorf("atan(%v) = %v, the correctly rounded value is %v", x, got, want)
			}
		}
		if math.Atan(x) != want {
			goBad++
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d values not correctly rounded", bad, n)
	}
	t.Logf("math.Atan is off at %d of %d", goBad, n)
	for _, x := range []float64{0, math.Copysign(0, -1), 1e-300, math.Inf(1), math.Inf(-1), 1e300} {
		if got, want := atan(x), math.Atan(x); got != want && !(got == 0 && want == 0) {
			t.Errorf("atan(%v) = %v, want %v", x, got, want)
		}
	}
	if !math.IsNaN(atan(math.NaN())) {
		t.Error("atan(NaN) is not NaN")
	}
}
