package ta

import (
	"math"
	"math/big"
	"sync"
)

// atan is the arc tangent rounded correctly (to the double nearest the
// true value, but for inputs within about 2^-70 of a rounding boundary),
// as the C library's atan is wherever it is measured: Go's math.Atan is
// off by one in the last bit at about one input in five, and TA-Lib's
// MAMA divides phase differences that are rounding noise after a flat
// stretch, so that bit grows into a visible difference.
//
// The value is summed in double-double arithmetic: atan(x) for |x| > 1 is
// pi/2 - atan(1/x); for |x| <= 1 it is atan(c) + atan((x-c)/(1+x*c)) with
// c the nearest multiple of 1/64 (atan(c) from a table computed once with
// math/big), and the second term, of an argument under 1/128, is its
// Taylor series to the 11th power.
func atan(x float64) float64 {
	switch a := math.Abs(x); {
	case math.IsNaN(x) || a < 0x1p-27:
		return x
	case a > 0x1p60:
		return math.Copysign(math.Pi/2, x)
	case a > 1:
		// r = 1/a as a double-double.
		rh := 1 / a
		rl := math.FMA(-rh, a, 1) / a
		t := atanSmallDD(rh, rl)
		h, l := twoSum(math.Pi/2, -t.hi)
		l += piOver2Lo - t.lo
		return math.Copysign(h+l, x)
	default:
		t := atanSmallDD(a, 0)
		return math.Copysign(t.hi+t.lo, x)
	}
}

type ddouble struct{ hi, lo float64 }

const piOver2Lo = 6.123233995736766e-17 // pi/2 - float64(pi/2)

func twoSum(a, b float64) (float64, float64) {
	s := a + b
	bb := s - a
	return s, (a - (s - bb)) + (b - bb)
}

// atanSmallDD is atan(xh + xl) for 0 <= xh <= 1, as a double-double.
func atanSmallDD(xh, xl float64) ddouble {
	atanTableOnce.Do(fillAtanTable)
	k := int(math.Round(xh * 64))
	c := float64(k) / 64
	// num = x - c: exact for the high part (Sterbenz), den = 1 + x*c.
	nh := xh - c
	nl := xl
	ph := xh * c
	pl := math.FMA(xh, c, -ph) + xl*c
	dh, dl := twoSum(1, ph)
	dl += pl
	th := nh / dh
	tl := (math.FMA(-th, dh, nh) + nl - th*dl) / dh
	s := th * th
	poly := th * s * (-1.0/3 + s*(1.0/5+s*(-1.0/7+s*(1.0/9-s*(1.0/11)))))
	lo := tl - s*tl + poly
	// atan(c) + (th + lo)
	e := atanTable[k]
	h, l := twoSum(e.hi, th)
	l += e.lo + lo
	h, l = twoSum(h, l)
	return ddouble{h, l}
}

var (
	atanTableOnce sync.Once
	atanTable     [65]ddouble // atan(k/64) as double-doubles
)

// fillAtanTable computes atan(k/64) to 200 bits: two halvings of the
// argument (atan(c) = 2 atan(c / (1 + sqrt(1 + c^2)))) and the series.
func fillAtanTable() {
	const prec = 200
	for k := range atanTable {
		c := new(big.Float).SetPrec(prec).SetFloat64(float64(k) / 64)
		one := new(big.Float).SetPrec(prec).SetInt64(1)
		for range 2 {
			r := new(big.Float).SetPrec(prec).Mul(c, c)
			r.Add(r, one)
			r.Sqrt(r)
			r.Add(r, one)
			c.Quo(c, r)
		}
		c2 := new(big.Float).SetPrec(prec).Mul(c, c)
		sum := new(big.Float).SetPrec(prec)
		term := new(big.Float).SetPrec(prec).Set(c)
		for n := 0; n < 200 && term.Sign() != 0; n++ {
			q := new(big.Float).SetPrec(prec).Quo(term, new(big.Float).SetPrec(prec).SetInt64(int64(2*n+1)))
			if n%2 == 0 {
				sum.Add(sum, q)
			} else {
				sum.Sub(sum, q)
			}
			term.Mul(term, c2)
			if term.MantExp(nil) < -prec {
				break
			}
		}
		sum.Mul(sum, new(big.Float).SetPrec(prec).SetInt64(4))
		hi, _ := sum.Float64()
		rest := new(big.Float).SetPrec(prec).Sub(sum, new(big.Float).SetPrec(prec).SetFloat64(hi))
		lo, _ := rest.Float64()
		atanTable[k] = ddouble{hi, lo}
	}
}
