package ta

import (
	"fmt"
	"math"

	"strings"
)

// mathEntries are TA-Lib's math transforms (one series in, the function
// applied bar by bar) and its element-wise math operators (two series).
// Out-of-domain bars (ln of a negative, acos beyond ±1, a division by 0)
// give NaN or ±Inf, as in TA-Lib.
func mathEntries() []*Entry {
	transforms := []struct {
		name, doc string
		f         func(float64) float64
	}{
		{"acos", "arc cosine, in radians", math.Acos},
		{"asin", "arc sine, in radians", math.Asin},
		{"atan", "arc tangent, in radians", atan},
		{"ceil", "smallest whole number not below the value", math.Ceil},
		{"cos", "cosine of a value in radians", math.Cos},
		{"cosh", "hyperbolic cosine", cosh},
		{"exp", "e to the power of the value", exp},
		{"floor", "largest whole number not above the value", math.Floor},
		{"ln", "natural logarithm", math.Log},
		{"log10", "base-10 logarithm", math.Log10},
		{"sin", "sine of a value in radians", math.Sin},
		{"sinh", "hyperbolic sine", sinh},
		{"sqrt", "square root", math.Sqrt},
		{"tan", "tangent of a value in radians", math.Tan},
		{"tanh", "hyperbolic tangent", math.Tanh},
	}
	var es []*Entry
	for _, t := range transforms {
		f := t.f
		es = append(es, &Entry{Name: t.name, TALib: strings.ToUpper(t.name), Category: Math, Summary: t.doc + ", bar by bar",
			Inputs: ser, Outputs: one, WarmupRule: "0", lookback: fixed(0),
			compute: series1(func(x, _ []float64) []float64 {
				out := make([]float64, len(x))
				for i, v := range x {
					out[i] = f(v)
				}
				return out
			})})
	}
	operators := []struct {
		name, doc string
		f         func(a, b float64) float64
	}{
		{"add", "a + b", func(a, b float64) float64 { return a + b }},
		{"sub", "a - b", func(a, b float64) float64 { return a - b }},
		{"mult", "a * b", func(a, b float64) float64 { return a * b }},
		{"div", "a / b", func(a, b float64) float64 { return a / b }},
	}
	for _, o := range operators {
		f := o.f
		es = append(es, &Entry{Name: o.name, TALib: strings.ToUpper(o.name), Category: Math, Summary: o.doc + ", bar by bar",
			Inputs: []string{"a", "b"}, Outputs: one, WarmupRule: "0", lookback: fixed(0),
			compute: func(in [][]float64, _ []float64) [][]float64 {
				out := make([]float64, len(in[0]))
				for i := range out {
					out[i] = f(in[0][i], in[1][i])
				}
				return outs(out)
			}})
	}
	es = append(es, &Entry{Name: "mavp", TALib: "MAVP", Category: Overlap,
		Summary: "moving average whose period is read bar by bar from a second series (whole part, clamped to [min_period, max_period])",
		Inputs:  []string{"series", "periods"}, Outputs: one,
		Params: []Param{intP("min_period", "minperiod", 2, 2, "shortest period; smaller periods are raised to it"),
			intP("max_period", "maxperiod", 30, 2, "longest period; longer periods are lowered to it"), maP("matype", "matype", "kind of moving average")},
		WarmupRule: "lookback of the moving average at max_period",
		lookback:   func(p []float64) int { return maLookback(pi(p, 1), pm(p, 2)) },
		check: func(p []float64) error {
			if p[0] > p[1] {
				return fmt.Errorf("min_period = %v is above max_period = %v", p[0], p[1])
			}
			return nil
		},
		compute: mavp})
	return es
}

// mavp is TA-Lib's MAVP: every moving average starts where the one at
// max_period does (seeded from the bars just before, as TA-Lib's MA does
// for a later start), and bar i takes the average of its own period.
func mavp(in [][]float64, p []float64) [][]float64 {
	x, periods := in[0], in[1]
	lo, hi, t := p[0], p[1], pm(p, 2)
	at := maLookback(pi(p, 1), t)
	out := make([]float64, len(x))
	byPeriod := map[int][]float64{}
	for i := at; i < len(x); i++ {
		q := math.Trunc(periods[i])
		if q < lo || math.IsNaN(q) {
			q = lo
		} else if q > hi {
			q = hi
		}
		ma, ok := byPeriod[int(q)]
		if !ok {
			ma = maFrom(x, int(q), t, at)
			byPeriod[int(q)] = ma
		}
		out[i] = ma[i]
	}
	return outs(out)
}

// bigExp is where exp, cosh and sinh leave math's functions: on amd64
// math.Exp returns +Inf from 709.44 on although e^x is finite up to
// 709.78, and math.Cosh and math.Sinh compute e^|x| / 2 with it, so they
// overflow there too where the C library's are finite up to 710.47.
const bigExp = 709

// exp is e^x, finite wherever the C library's exp is: above bigExp it is
// the square of e^(x/2).
func exp(x float64) float64 {
	if x > bigExp {
		h := math.Exp(x * 0.5)
		return h * h
	}
	return math.Exp(x)
}

// cosh is the hyperbolic cosine, finite wherever the C library's is.
func cosh(x float64) float64 {
	if ax := math.Abs(x); ax > bigExp {
		h := math.Exp(ax * 0.5)
		return (h * 0.5) * h
	}
	return math.Cosh(x)
}

// sinh is the hyperbolic sine, finite wherever the C library's is.
func sinh(x float64) float64 {
	if ax := math.Abs(x); ax > bigExp {
		h := math.Exp(ax * 0.5)
		return math.Copysign((h*0.5)*h, x)
	}
	return math.Sinh(x)
}
