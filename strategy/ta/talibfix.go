package ta

import (
	"math"

	talib "github.com/markcheno/go-talib"
)

// This file holds the functions computed here rather than by go-talib:
// those whose go-talib version differs from TA-Lib C (MACD and MACDEXT
// seeding; APO/PPO, STOCH and STOCHRSI, whose inner moving averages
// TA-Lib runs from their inputs' first values; BBANDS's deviation;
// LINEARREG_SLOPE/ANGLE, which go-talib updates incrementally and so
// drifts; the one-bar directional movement) and
// those go-talib lacks (ACCBANDS, AVGDEV, IMI).
// Each follows the TA-Lib C algorithm step by step, including the order of
// floating-point operations.

// perToK is TA-Lib's PER_TO_K.
func perToK(period int) float64 { return 2.0 / float64(period+1) }

// isZero is TA-Lib's TA_IS_ZERO (TA_EPSILON is 1e-14 in TA-Lib 0.6).
func isZero(v float64) bool { return -1e-14 < v && v < 1e-14 }

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
	seg := ma(in[at-lb:], period, t)
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
	copy(sg[at:], ma(m[at:], sig, sigT))
	h := make([]float64, n)
	for i := at + sigLB; i < n; i++ {
		h[i] = m[i] - sg[i]
	}
	return outs(m, sg, h)
}

func poLookback(p []float64) int {
	return maLookback(max(pi(p, 0), pi(p, 1)), pm(p, 2))
}

// maFull is TA-Lib's MA over the whole input: a one-bar average is the
// input itself, whatever the kind. Positions before its lookback are 0.
func maFull(x []float64, period int, t talib.MaType) []float64 {
	if period <= 1 {
		return append([]float64(nil), x...)
	}
	return ma(x, period, t)
}

// priceOsc is TA-Lib's INT_PO behind APO and PPO: both moving averages run
// over the whole input from its first bar (each seeded at its own
// lookback), and the oscillator starts where the slower one does.
func priceOsc(x []float64, p []float64, percent bool) []float64 {
	fast, slow, t := pi(p, 0), pi(p, 1), pm(p, 2)
	if slow < fast {
		fast, slow = slow, fast
	}
	at := poLookback(p)
	f := maFull(x, fast, t)
	s := maFull(x, slow, t)
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

// chainMA is TA-Lib's MA run over x from position from on (where x's own
// values begin), aligned to x; positions before from plus the MA's
// lookback are 0.
func chainMA(x []float64, from, period int, t talib.MaType) []float64 {
	out := make([]float64, len(x))
	if len(x)-from <= maLookback(period, t) {
		return out
	}
	copy(out[from:], maFull(x[from:], period, t))
	return out
}

// rawK is the fast stochastic %K of TA-Lib's STOCH and STOCHF: 100 * (close
// - lowest low) / (highest high - lowest low) over period bars, 0 when the
// range is 0, computed as TA-Lib does (the range divided by 100 first; the
// window's extremes rescanned only when one leaves the window).
func rawK(high, low, cl []float64, period int) []float64 {
	out := make([]float64, len(cl))
	lowestIdx, highestIdx := -1, -1
	lowest, highest, diff := 0.0, 0.0, 0.0
	for today := period - 1; today < len(cl); today++ {
		trailing := today - period + 1
		if lowestIdx < trailing {
			lowestIdx, lowest = trailing, low[trailing]
			for i := trailing + 1; i <= today; i++ {
				if low[i] < lowest {
					lowestIdx, lowest = i, low[i]
				}
			}
			diff = (highest - lowest) / 100.0
		} else if low[today] <= lowest {
			lowestIdx, lowest = today, low[today]
			diff = (highest - lowest) / 100.0
		}
		if highestIdx < trailing {
			highestIdx, highest = trailing, high[trailing]
			for i := trailing + 1; i <= today; i++ {
				if high[i] > highest {
					highestIdx, highest = i, high[i]
				}
			}
			diff = (highest - lowest) / 100.0
		} else if high[today] >= highest {
			highestIdx, highest = today, high[today]
			diff = (highest - lowest) / 100.0
		}
		if diff != 0 {
			out[today] = (cl[today] - lowest) / diff
		}
	}
	return out
}

// stoch is TA-Lib's STOCH: %K smoothed from its first value on, %D the
// moving average of that from the smoothed %K's first value on.
func stoch(in [][]float64, p []float64) [][]float64 {
	fk, sk, skT, sd, sdT := pi(p, 0), pi(p, 1), pm(p, 2), pi(p, 3), pm(p, 4)
	k := rawK(in[0], in[1], in[2], fk)
	slowK := chainMA(k, fk-1, sk, skT)
	slowD := chainMA(slowK, fk-1+maLookback(sk, skT), sd, sdT)
	return outs(slowK, slowD)
}

// stochF is TA-Lib's STOCHF: %D is the moving average of %K from its first
// value on.
func stochF(high, low, cl []float64, fk, fd int, fdT talib.MaType) [][]float64 {
	k := rawK(high, low, cl, fk)
	return outs(k, chainMA(k, fk-1, fd, fdT))
}

// stochRsi is TA-Lib's STOCHRSI: STOCHF over the RSI from its first value.
func stochRsi(in [][]float64, p []float64) [][]float64 {
	period := pi(p, 0)
	n := len(in[0])
	r := talib.Rsi(in[0], period)[period:]
	kd := stochF(r, r, r, pi(p, 1), pi(p, 2), pm(p, 3))
	k, d := make([]float64, n), make([]float64, n)
	copy(k[period:], kd[0])
	copy(d[period:], kd[1])
	return outs(k, d)
}

// bbands is TA-Lib's BBANDS: the middle band is the chosen MA; the
// deviation is taken around that MA for SMA (clamped at 0 when the
// variance is below 1e-14, TA_IS_ZERO_OR_NEG) and is TA-Lib's STDDEV otherwise.
func bbands(in [][]float64, p []float64) [][]float64 {
	x := in[0]
	period, up, dn, t := pi(p, 0), p[1], p[2], pm(p, 3)
	n := len(x)
	lb := maLookback(period, t)
	mid := maFull(x, period, t)
	sd := make([]float64, n)
	if t == talib.SMA {
		total2 := 0.0
		for i := lb + 1 - period; i < lb; i++ {
			total2 += x[i] * x[i]
		}
		for i := lb; i < n; i++ {
			total2 += x[i] * x[i]
			mean2 := total2 / float64(period)
			old := x[i+1-period]
			total2 -= old * old
			mean2 -= mid[i] * mid[i]
			if mean2 >= 1e-14 {
				sd[i] = math.Sqrt(mean2)
			}
		}
	} else {
		// MAMA's lookback (32) ignores the period: the deviation then
		// starts later than the middle band, at period-1.
		from := max(lb-(period-1), 0)
		copy(sd[from:], talib.StdDev(x[from:], period, 1.0))
		lb = max(lb, period-1)
	}
	upper, lower := make([]float64, n), make([]float64, n)
	for i := lb; i < n; i++ {
		upper[i] = mid[i] + sd[i]*up
		lower[i] = mid[i] - sd[i]*dn
	}
	return outs(upper, mid, lower)
}

// linReg is TA-Lib's linear regression family over the last period
// values: the line's value at the current bar (LINEARREG), its intercept
// (LINEARREG_INTERCEPT), its slope (LINEARREG_SLOPE, or as an angle in
// degrees: LINEARREG_ANGLE) and its value one bar ahead (TSF). The sums are
// taken afresh at every bar in TA-Lib's order, as TA-Lib does, so the
// result does not drift with the length of the series (running sums, as
// go-talib keeps them, leave TA-Lib by more than 1e-9 after some 30,000
// bars).
type linRegKind int

const (
	linRegValue linRegKind = iota
	linRegIntercept
	linRegSlopeKind
	linRegAngle
	linRegForecast
)

func linReg(kind linRegKind) func([]float64, []float64) []float64 {
	return func(x []float64, p []float64) []float64 {
		period := pi(p, 0)
		fp := float64(period)
		sumX := float64(period*(period-1)) * 0.5
		sumXSqr := float64(period * (period - 1) * (2*period - 1) / 6)
		divisor := sumX*sumX - fp*sumXSqr
		out := make([]float64, len(x))
		for today := period - 1; today < len(x); today++ {
			sumXY, sumY := 0.0, 0.0
			for i := period - 1; i >= 0; i-- {
				v := x[today-i]
				sumY += v
				sumXY += float64(i) * v
			}
			m := (fp*sumXY - sumX*sumY) / divisor
			switch kind {
			case linRegSlopeKind:
				out[today] = m
			case linRegAngle:
				out[today] = atan(m) * (180.0 / math.Pi)
			default:
				b := (sumY - m*sumX) / fp
				switch kind {
				case linRegIntercept:
					out[today] = b
				case linRegValue:
					out[today] = b + m*float64(period-1)
				case linRegForecast:
					out[today] = b + m*fp
				}
			}
		}
		return out
	}
}

// mfi is TA-Lib's MFI: the share of positive money flow (typical price
// times volume, signed by the typical price's change) in the last period
// bars' money flow, 0 when that flow is under 1.0 — the first value
// included (go-talib skips it there and shifts every later value one bar
// early, so each read the next bar).
func mfi(in [][]float64, p []float64) [][]float64 {
	high, low, cl, vol := in[0], in[1], in[2], in[3]
	period := pi(p, 0)
	out := make([]float64, len(cl))
	if len(cl) <= period {
		return outs(out)
	}
	pos, neg := make([]float64, period), make([]float64, period)
	posSum, negSum := 0.0, 0.0
	prev := (high[0] + low[0] + cl[0]) / 3.0
	for today := 1; today < len(cl); today++ {
		k := (today - 1) % period
		if today > period {
			posSum -= pos[k]
			negSum -= neg[k]
		}
		tp := (high[today] + low[today] + cl[today]) / 3.0
		diff := tp - prev
		prev = tp
		flow := tp * vol[today]
		pos[k], neg[k] = 0, 0
		switch {
		case diff < 0:
			neg[k] = flow
			negSum += flow
		case diff > 0:
			pos[k] = flow
			posSum += flow
		}
		if today < period {
			continue
		}
		if total := posSum + negSum; total < 1.0 {
			out[today] = 0
		} else {
			out[today] = 100.0 * (posSum / total)
		}
	}
	return outs(out)
}

// dmLookback is TA-Lib's lookback of PLUS_DM/MINUS_DM (di: PLUS_DI and
// MINUS_DI): one bar for a one-bar period.
func dmLookback(di bool) func([]float64) int {
	return func(p []float64) int {
		switch {
		case pi(p, 0) <= 1:
			return 1
		case di:
			return pi(p, 0)
		default:
			return pi(p, 0) - 1
		}
	}
}

// directional is PLUS_DM, MINUS_DM, PLUS_DI or MINUS_DI (plus: the plus
// side; di: the indicator rather than the movement). A one-bar period is
// TA-Lib's special case: the bar's own movement, and for DI that movement
// divided by the true range (a ratio, not a percentage, as in TA-Lib);
// longer periods are Wilder-smoothed by go-talib.
func directional(plus, di bool) func([][]float64, []float64) [][]float64 {
	return func(in [][]float64, p []float64) [][]float64 {
		high, low := in[0], in[1]
		period := pi(p, 0)
		if period > 1 {
			switch {
			case plus && di:
				return outs(talib.PlusDI(high, low, in[2], period))
			case di:
				return outs(talib.MinusDI(high, low, in[2], period))
			case plus:
				return outs(talib.PlusDM(high, low, period))
			default:
				return outs(talib.MinusDM(high, low, period))
			}
		}
		out := make([]float64, len(high))
		for i := 1; i < len(high); i++ {
			up, down := high[i]-high[i-1], low[i-1]-low[i]
			move := 0.0
			if plus && up > 0 && up > down {
				move = up
			} else if !plus && down > 0 && down > up {
				move = down
			}
			if di && move != 0 {
				tr := trueRange(high[i], low[i], in[2][i-1])
				if isZero(tr) {
					move = 0
				} else {
					move /= tr
				}
			}
			out[i] = move
		}
		return outs(out)
	}
}

// trueRange is TA-Lib's TRUE_RANGE of a bar given the previous close.
func trueRange(high, low, prevClose float64) float64 {
	tr := high - low
	if t := math.Abs(high - prevClose); t > tr {
		tr = t
	}
	if t := math.Abs(low - prevClose); t > tr {
		tr = t
	}
	return tr
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
