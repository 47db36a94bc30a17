package ta

import (
	"math"

	"github.com/markcheno/go-talib"
)

// This file holds TA-Lib's Hilbert-transform dominant-cycle phase, behind
// HT_DCPHASE, HT_SINE and HT_TRENDMODE, computed here rather than by
// go-talib (whose HT_DCPHASE output is misaligned, and whose phase leaves
// TA-Lib's in flat stretches). In a flat stretch the phase is the angle of
// two sums of sines and cosines over a constant price: rounding noise, so
// the last bit of every sine decides it. The sines and cosines are
// therefore the C library's (htsincos_table.go), not Go's math.Sin/Cos,
// which differ from them in that bit at a few hundred of the angles.

// htA and htB are the Hilbert transform's coefficients.
const (
	htA = 0.0962
	htB = 0.5769
)

// hilbertLeg is one Hilbert transform (TA-Lib's DO_HILBERT_TRANSFORM) with
// its separate odd- and even-bar state.
type hilbertLeg struct {
	odd, even                   [3]float64
	prevOdd, prevEven           float64
	prevInputOdd, prevInputEven float64
	value                       float64
}

func (h *hilbertLeg) step(input float64, even bool, idx int, adj float64) float64 {
	t := htA * input
	if even {
		h.value = -h.even[idx]
		h.even[idx] = t
		h.value += t
		h.value -= h.prevEven
		h.prevEven = htB * h.prevInputEven
		h.value += h.prevEven
		h.prevInputEven = input
	} else {
		h.value = -h.odd[idx]
		h.odd[idx] = t
		h.value += t
		h.value -= h.prevOdd
		h.prevOdd = htB * h.prevInputOdd
		h.value += h.prevOdd
		h.prevInputOdd = input
	}
	h.value *= adj
	return h.value
}

// wma4 is the 4-bar weighted moving average TA-Lib smooths the price with
// before its Hilbert transforms, primed with x's first three bars and fed
// from the fourth on (TA-Lib's running sums, term for term, so the values
// are its bits).
type wma4 struct {
	x                  []float64
	trailing           int
	sub, sum, trailVal float64
}

func newWMA4(x []float64) *wma4 {
	w := &wma4{x: x, sub: x[0], sum: x[0]}
	w.sub += x[1]
	w.sum += x[1] * 2.0
	w.sub += x[2]
	w.sum += x[2] * 3.0
	return w
}

// next adds the next bar's value and returns the average ending there.
func (w *wma4) next(v float64) float64 {
	w.sub += v
	w.sub -= w.trailVal
	w.sum += v * 4.0
	w.trailVal = w.x[w.trailing]
	w.trailing++
	s := w.sum * 0.1
	w.sum -= w.sub
	return s
}

// homodyne is the homodyne discriminator MAMA and the dominant cycle share:
// four Hilbert legs (detrender, Q1, jI, jQ) over the smoothed price, the
// in-phase and quadrature components they give, and the period they
// measure, bounded and smoothed as TA-Lib does. rad2Deg is each caller's
// own constant: the two compute it differently, and the bits must follow.
type homodyne struct {
	detrender, q1, jI, jQ                            hilbertLeg
	hIdx                                             int
	period, prevI2, prevQ2, re, im                   float64
	i1OddPrev3, i1EvenPrev3, i1OddPrev2, i1EvenPrev2 float64
	rad2Deg                                          float64
}

// step feeds one bar's smoothed price (even says the bar's parity) and
// updates the period; it returns the bar's quadrature component and the
// in-phase one it pairs with, from which MAMA measures its phase.
func (h *homodyne) step(sv float64, even bool) (qq, i1 float64) {
	adj := (0.075 * h.period) + 0.54
	var q2, i2 float64
	if even {
		i1 = h.i1EvenPrev3
		d := h.detrender.step(sv, true, h.hIdx, adj)
		qq = h.q1.step(d, true, h.hIdx, adj)
		ji := h.jI.step(i1, true, h.hIdx, adj)
		jq := h.jQ.step(qq, true, h.hIdx, adj)
		if h.hIdx++; h.hIdx == 3 {
			h.hIdx = 0
		}
		q2 = (0.2 * (qq + ji)) + (0.8 * h.prevQ2)
		i2 = (0.2 * (i1 - jq)) + (0.8 * h.prevI2)
		h.i1OddPrev3 = h.i1OddPrev2
		h.i1OddPrev2 = d
	} else {
		i1 = h.i1OddPrev3
		d := h.detrender.step(sv, false, h.hIdx, adj)
		qq = h.q1.step(d, false, h.hIdx, adj)
		ji := h.jI.step(i1, false, h.hIdx, adj)
		jq := h.jQ.step(qq, false, h.hIdx, adj)
		q2 = (0.2 * (qq + ji)) + (0.8 * h.prevQ2)
		i2 = (0.2 * (i1 - jq)) + (0.8 * h.prevI2)
		h.i1EvenPrev3 = h.i1EvenPrev2
		h.i1EvenPrev2 = d
	}
	h.re = (0.2 * ((i2 * h.prevI2) + (q2 * h.prevQ2))) + (0.8 * h.re)
	h.im = (0.2 * ((i2 * h.prevQ2) - (q2 * h.prevI2))) + (0.8 * h.im)
	h.prevQ2, h.prevI2 = q2, i2
	last := h.period
	if h.im != 0.0 && h.re != 0.0 {
		h.period = 360.0 / (atan(h.im/h.re) * h.rad2Deg)
	}
	if t := 1.5 * last; h.period > t {
		h.period = t
	}
	if t := 0.67 * last; h.period < t {
		h.period = t
	}
	if h.period < 6 {
		h.period = 6
	} else if h.period > 50 {
		h.period = 50
	}
	h.period = (0.2 * h.period) + (0.8 * last)
	return qq, i1
}

// htPhaseOut selects what htPhase reports per bar.
type htPhaseOut int

const (
	htOutPhase htPhaseOut = iota // HT_DCPHASE: the phase in degrees
	htOutSine                    // HT_SINE: sine and lead sine
	htOutTrend                   // HT_TRENDMODE: 1 trend, 0 cycle
)

// htPhase runs TA-Lib's dominant-cycle phase over x from its first bar
// (the warm-up is 63 bars) and returns the requested outputs.
func htPhase(x []float64, what htPhaseOut) [][]float64 {
	n := len(x)
	out1, out2 := make([]float64, n), make([]float64, n)
	if n < 64 {
		return outs(out1, out2)
	}
	const smoothSize = 50
	atan1 := math.Atan(1)
	rad2Deg := 45.0 / atan1
	deg2Rad := 1.0 / rad2Deg

	wma, today := newWMA4(x), 3
	for i := 0; i < 34; i++ {
		wma.next(x[today])
		today++
	}

	h := homodyne{rad2Deg: rad2Deg}
	smoothPeriod := 0.0
	var smooth [smoothSize]float64
	sIdx := 0
	dcPhase := 0.0
	// HT_TRENDMODE's state.
	iTrend1, iTrend2, iTrend3 := 0.0, 0.0, 0.0
	daysInTrend := 0
	prevDCPhase, sine, leadSine, prevSine, prevLeadSine := 0.0, 0.0, 0.0, 0.0, 0.0

	for ; today < n; today++ {
		sv := wma.next(x[today])
		smooth[sIdx] = sv
		h.step(sv, today%2 == 0)
		period := h.period
		smoothPeriod = (0.33 * period) + (0.67 * smoothPeriod)

		prevDCPhase = dcPhase
		cycle := int(smoothPeriod + 0.5)
		realPart, imagPart := 0.0, 0.0
		idx := sIdx
		for i := 0; i < cycle; i++ {
			s, c := htSinCos(i, cycle)
			v := smooth[idx]
			realPart += s * v
			imagPart += c * v
			if idx == 0 {
				idx = smoothSize - 1
			} else {
				idx--
			}
		}
		if a := math.Abs(imagPart); a > 0.0 {
			dcPhase = atan(realPart/imagPart) * rad2Deg
		} else if a <= 0.01 {
			if realPart < 0.0 {
				dcPhase -= 90.0
			} else if realPart > 0.0 {
				dcPhase += 90.0
			}
		}
		dcPhase += 90.0
		dcPhase += 360.0 / smoothPeriod
		if imagPart < 0.0 {
			dcPhase += 180.0
		}
		if dcPhase > 315.0 {
			dcPhase -= 360.0
		}

		switch what {
		case htOutPhase:
			out1[today] = dcPhase
		case htOutSine:
			out1[today] = math.Sin(dcPhase * deg2Rad)
			out2[today] = math.Sin((dcPhase + 45) * deg2Rad)
		case htOutTrend:
			prevSine, prevLeadSine = sine, leadSine
			sine = math.Sin(dcPhase * deg2Rad)
			leadSine = math.Sin((dcPhase + 45) * deg2Rad)
			avg := 0.0
			for i, j := 0, today; i < cycle; i, j = i+1, j-1 {
				avg += x[j]
			}
			if cycle > 0 {
				avg = avg / float64(cycle)
			}
			trendline := (4.0*avg + 3.0*iTrend1 + 2.0*iTrend2 + iTrend3) / 10.0
			iTrend3, iTrend2, iTrend1 = iTrend2, iTrend1, avg
			trend := 1.0
			if sine > leadSine && prevSine <= prevLeadSine || sine < leadSine && prevSine >= prevLeadSine {
				daysInTrend = 0
				trend = 0
			}
			daysInTrend++
			if float64(daysInTrend) < 0.5*smoothPeriod {
				trend = 0
			}
			if d := dcPhase - prevDCPhase; smoothPeriod != 0.0 && d > 0.67*360.0/smoothPeriod && d < 1.5*360.0/smoothPeriod {
				trend = 0
			}
			if p := smooth[sIdx]; trendline != 0.0 && math.Abs((p-trendline)/trendline) >= 0.015 {
				trend = 1
			}
			out1[today] = trend
		}
		if sIdx++; sIdx == smoothSize {
			sIdx = 0
		}
	}
	return outs(out1, out2)
}

// htSinCos is the C library's sin and cos of (i * 8 * atan(1)) / n.
func htSinCos(i, n int) (float64, float64) {
	b := htSinCosBits[n][i]
	return math.Float64frombits(b[0]), math.Float64frombits(b[1])
}

// mama is TA-Lib's MAMA (MESA adaptive moving average) and its FAMA over x
// from its first bar (the warm-up is 32 bars), computed here so that its
// arc tangents are atan's: after a flat stretch the phase is the angle of
// rounding noise, and the last bit of every arc tangent decides it.
func mama(x []float64, fastLimit, slowLimit float64) (mamaOut, famaOut []float64) {
	n := len(x)
	mamaOut, famaOut = make([]float64, n), make([]float64, n)
	if n <= 32 {
		return mamaOut, famaOut
	}
	rad2Deg := 180.0 / (4.0 * math.Atan(1))

	wma, today := newWMA4(x), 3
	for i := 0; i < 9; i++ {
		wma.next(x[today])
		today++
	}

	h := homodyne{rad2Deg: rad2Deg}
	m, f := 0.0, 0.0
	prevPhase := 0.0
	for ; today < n; today++ {
		v := x[today]
		qq, i1 := h.step(wma.next(v), today%2 == 0)
		phase := 0.0
		if i1 != 0.0 {
			phase = atan(qq/i1) * rad2Deg
		}
		delta := prevPhase - phase
		prevPhase = phase
		if delta < 1.0 {
			delta = 1.0
		}
		alpha := fastLimit
		if delta > 1.0 {
			if alpha = fastLimit / delta; alpha < slowLimit {
				alpha = slowLimit
			}
		}
		m = (alpha * v) + ((1 - alpha) * m)
		alpha *= 0.5
		f = (alpha * m) + ((1 - alpha) * f)
		if today >= 32 {
			mamaOut[today], famaOut[today] = m, f
		}
	}
	return mamaOut, famaOut
}

// ma is go-talib's Ma with MAMA computed here (fast limit 0.5, slow limit
// 0.05, as TA-Lib's MA uses it).
func ma(x []float64, period int, t talib.MaType) []float64 {
	if t == talib.MAMA {
		m, _ := mama(x, 0.5, 0.05)
		return m
	}
	return talib.Ma(x, period, t)
}
