package book

import "math"

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

// Float is a float64 amount, for research's float64 columns.
type Float float64

// Cmp orders two amounts as decimal.Decimal's Cmp does.
func (f Float) Cmp(g Float) int {
	switch {
	case f < g:
		return -1
	case f > g:
		return 1
	}
	return 0
}

// Add returns f+g.
func (f Float) Add(g Float) Float { return f + g }

// Sub returns f-g.
func (f Float) Sub(g Float) Float { return f - g }

// Mul returns f*g.
func (f Float) Mul(g Float) Float { return f * g }

// Div returns f/g.
func (f Float) Div(g Float) Float { return f / g }

// Neg returns -f.
func (f Float) Neg() Float { return -f }

// Abs returns |f|.
func (f Float) Abs() Float { return Float(math.Abs(float64(f))) }

// Sign returns -1, 0 or 1.
func (f Float) Sign() int {
	switch {
	case f < 0:
		return -1
	case f > 0:
		return 1
	}
	return 0
}

// IsZero reports whether f is zero.
func (f Float) IsZero() bool { return f == 0 }

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
