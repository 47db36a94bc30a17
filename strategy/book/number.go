package book

import "wicket/internal/intrabar"

// Number is what the book needs of an amount. decimal.Decimal satisfies
// it, and so does Float.
type Number[N any] interface {
	Cmp(N) int
	Add(N) N
	Sub(N) N
	Mul(N) N
	Div(N) N
	Neg() N
	Abs() N
	Sign() int
	IsZero() bool
}

// Float is a float64 amount, for research's float64 columns: the one
// float type that acts as decimal.Decimal does, intrabar's, whose fill
// rule the engines share too.
type Float = intrabar.Float

// larger is the larger of two amounts (a when equal).
func larger[N Number[N]](a, b N) N {
	if b.Cmp(a) > 0 {
		return b
	}
	return a
}

// withSign is |v| with the sign of s (s nonzero).
func withSign[N Number[N]](v, s N) N {
	if s.Sign() < 0 {
		return v.Abs().Neg()
	}
	return v.Abs()
}
