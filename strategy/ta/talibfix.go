package ta

import (
	"math"

	talib "github.com/markcheno/go-talib"
)

// This file holds the functions computed here rather than by go-talib:
// those whose go-talib version seeds differently from TA-Lib C (MACD and
// the MA-leg oscillators) and those go-talib lacks (ACCBANDS, AVGDEV, IMI).
// Each follows the TA-Lib C algorithm step by step, including the order of
// floating-point operations.

// perToK is TA-Lib's PER_TO_K.
func perToK(period int) float64 { return 2.0 / float64(period+1) }

// isZero is TA-Lib's TA_IS_ZERO.
func isZero(v float64) bool { return -0.00000001 < v && v < 0.00000001 }

// emaK is TA-Lib's INT_EMA started at its own lookback: the first value, at
// period-1, is the mean of the first period inputs. Earlier positions are 0.
func emaK(in []float64, period int, k float64) []float64 {
	out := make([]float64, len(in))
	sum := 0.0
	for i := 0; i < period; i++ {
		sum += in[i]
	}
	prev := sum / float64(period)
	out[period-1] = prev
	for i := period; i < len(in); i++ {
		prev = ((in[i] - prev) * k) + prev
		out[i] = prev
	}
	return out
}

// maFrom computes a moving average whose first value lands at position at,
// using only inputs from at-lookback on, as TA-Lib does when a composite
// indicator asks for an MA from a later start. The result is aligned to in;
// positions before at are 0.
func maFrom(in []float64, period int, t talib.MaType, at int) []float64 {
	lb := maLookback(period, t)
	seg := talib.Ma(in[at-lb:], period, t)
	out := make([]float64, len(in))
	copy(out[at:], seg[lb:])
	return out
}

func macdLookback(p []float64) int {
	fast, slow := pi(p, 0), pi(p, 1)
	if slow < fast {
		slow = fast
	}
	return slow - 1 + pi(p, 2) - 1
}

func macd(in [][]float64, p []float64) [][]float64 {
	fast, slow, sig := pi(p, 0), pi(p, 1), pi(p, 2)
	if slow < fast {
		fast, slow = slow, fast
	}
	return macdCore(in[0], fast, slow, sig, perToK(fast), perToK(slow))
}

func macdFix(in [][]float64, p []float64) [][]float64 {
	return macdCore(in[0], 12, 26, pi(p, 0), 0.15, 0.075)
}

// macdCore is TA-Lib's INT_MACD: both EMAs start at bar slow-1 (the fast
// one seeded with the mean of its last fast inputs), the signal EMA is
// seeded with the mean of the first signal MACD values.
func macdCore(in []float64, fast, slow, sig int, kFast, kSlow float64) [][]float64 {
	n := len(in)
	start := slow - 1
	off := start - (fast - 1)
	fastE := emaK(in[off:], fast, kFast)
	slowE := emaK(in, slow, kSlow)
	m := make([]float64, n)
	for i := start; i < n; i++ {
		m[i] = fastE[i-off] - slowE[i]
	}
	s := make([]float64, n)
	copy(s[start:], emaK(m[start:], sig, perToK(sig)))
	h := make([]float64, n)
	for i := start + sig - 1; i < n; i++ {
		h[i] = m[i] - s[i]
	}
	return outs(m, s, h)
}

func macdExtLookback(p []float64) int {
	fast, ft, slow, st := pi(p, 0), pm(p, 1), pi(p, 2), pm(p, 3)
	return max(maLookback(fast, ft), maLookback(slow, st)) + maLookback(pi(p, 4), pm(p, 5))
}

// macdExt is TA-Lib's MACDEXT: both MAs start at the larger MA lookback,
// the signal MA runs over the MACD line from there.
func macdExt(in [][]float64, p []float64) [][]float64 {
	x := in[0]
	fast, ft, slow, st, sig, sigT := pi(p, 0), pm(p, 1), pi(p, 2), pm(p, 3), pi(p, 4), pm(p, 5)
	if slow < fast {
		fast, slow = slow, fast
		ft, st = st, ft
	}
	n := len(x)
	at := max(maLookback(fast, ft), maLookback(slow, st))
	f := maFrom(x, fast, ft, at)
	s := maFrom(x, slow, st, at)
	m := make([]float64, n)
	for i := at; i < n; i++ {
		m[i] = f[i] - s[i]
	}
	sigLB := maLookback(sig, sigT)
	sg := make([]float64, n)
	copy(sg[at:], talib.Ma(m[at:], sig, sigT))
	h := make([]float64, n)
	for i := at + sigLB; i < n; i++ {
		h[i] = m[i] - sg[i]
	}
	return outs(m, sg, h)
}

func poLookback(p []float64) int {
	return maLookback(max(pi(p, 0), pi(p, 1)), pm(p, 2))
}

// priceOsc is TA-Lib's INT_PO behind APO and PPO.
func priceOsc(x []float64, p []float64, percent bool) []float64 {
	fast, slow, t := pi(p, 0), pi(p, 1), pm(p, 2)
	if slow < fast {
		fast, slow = slow, fast
	}
	at := poLookback(p)
	f := maFrom(x, fast, t, at)
	s := maFrom(x, slow, t, at)
	out := make([]float64, len(x))
	for i := at; i < len(x); i++ {
		switch {
		case !percent:
			out[i] = f[i] - s[i]
		case !isZero(s[i]):
			out[i] = ((f[i] - s[i]) / s[i]) * 100.0
		default:
			out[i] = 0
		}
	}
	return out
}

// accBands is TA-Lib's ACCBANDS.
func accBands(in [][]float64, p []float64) [][]float64 {
	high, low, cl := in[0], in[1], in[2]
	period := pi(p, 0)
	up := make([]float64, len(high))
	dn := make([]float64, len(high))
	for i := range high {
		t := high[i] + low[i]
		if !isZero(t) {
			t = 4 * (high[i] - low[i]) / t
			up[i] = high[i] * (1 + t)
			dn[i] = low[i] * (1 - t)
		} else {
			up[i], dn[i] = high[i], low[i]
		}
	}
	return outs(talib.Sma(up, period), talib.Sma(cl, period), talib.Sma(dn, period))
}

// avgDev is TA-Lib's AVGDEV.
func avgDev(x []float64, p []float64) []float64 {
	period := pi(p, 0)
	out := make([]float64, len(x))
	for today := period - 1; today < len(x); today++ {
		sum := 0.0
		for i := 0; i < period; i++ {
			sum += x[today-i]
		}
		dev := 0.0
		for i := 0; i < period; i++ {
			dev += math.Abs(x[today-i] - sum/float64(period))
		}
		out[today] = dev / float64(period)
	}
	return out
}

// imi is TA-Lib's IMI.
func imi(in [][]float64, p []float64) [][]float64 {
	open, cl := in[0], in[1]
	lb := pi(p, 0) - 1
	out := make([]float64, len(open))
	for today := lb; today < len(open); today++ {
		up, down := 0.0, 0.0
		for i := today - lb; i <= today; i++ {
			if cl[i] > open[i] {
				up += cl[i] - open[i]
			} else {
				down += open[i] - cl[i]
			}
		}
		out[today] = 100.0 * (up / (up + down))
	}
	return outs(out)
}

// htDcPhase corrects go-talib's HtDcPhase, which writes bar i's value at
// position i-63 (its output index starts at 0 instead of at the bar).
// HT_DCPHASE is causal, so padding the input with 63 bars at the end
// leaves every real bar's value intact and moves them all into range.
func htDcPhase(x []float64) []float64 {
	const lb = 63
	padded := make([]float64, len(x)+lb)
	copy(padded, x)
	for i := len(x); i < len(padded); i++ {
		padded[i] = x[len(x)-1]
	}
	v := talib.HtDcPhase(padded)
	out := make([]float64, len(x))
	copy(out[lb:], v[:len(x)-lb])
	return out
}
