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

	// The 4-bar WMA of the price, primed with the first three bars.
	trailing, today := 0, 0
	wmaSub, wmaSum := x[0], x[0]
	wmaSub += x[1]
	wmaSum += x[1] * 2.0
	wmaSub += x[2]
	wmaSum += x[2] * 3.0
	today = 3
	trailingValue := 0.0
	wma := func(v float64) float64 {
		wmaSub += v
		wmaSub -= trailingValue
		wmaSum += v * 4.0
		trailingValue = x[trailing]
		trailing++
		s := wmaSum * 0.1
		wmaSum -= wmaSub
		return s
	}
	for i := 0; i < 34; i++ {
		wma(x[today])
		today++
	}

	var detrender, q1, jI, jQ hilbertLeg
	hIdx := 0
	period, smoothPeriod := 0.0, 0.0
	prevI2, prevQ2, re, im := 0.0, 0.0, 0.0, 0.0
	i1OddPrev3, i1EvenPrev3, i1OddPrev2, i1EvenPrev2 := 0.0, 0.0, 0.0, 0.0
	var smooth [smoothSize]float64
	sIdx := 0
	dcPhase := 0.0
	// HT_TRENDMODE's state.
	iTrend1, iTrend2, iTrend3 := 0.0, 0.0, 0.0
	daysInTrend := 0
	prevDCPhase, sine, leadSine, prevSine, prevLeadSine := 0.0, 0.0, 0.0, 0.0, 0.0

	for ; today < n; today++ {
		adj := (0.075 * period) + 0.54
		sv := wma(x[today])
		smooth[sIdx] = sv
		var q2, i2 float64
		if today%2 == 0 {
			d := detrender.step(sv, true, hIdx, adj)
			qq := q1.step(d, true, hIdx, adj)
			ji := jI.step(i1EvenPrev3, true, hIdx, adj)
			jq := jQ.step(qq, true, hIdx, adj)
			if hIdx++; hIdx == 3 {
				hIdx = 0
			}
			q2 = (0.2 * (qq + ji)) + (0.8 * prevQ2)
			i2 = (0.2 * (i1EvenPrev3 - jq)) + (0.8 * prevI2)
			i1OddPrev3 = i1OddPrev2
			i1OddPrev2 = d
		} else {
			d := detrender.step(sv, false, hIdx, adj)
			qq := q1.step(d, false, hIdx, adj)
			ji := jI.step(i1OddPrev3, false, hIdx, adj)
			jq := jQ.step(qq, false, hIdx, adj)
			q2 = (0.2 * (qq + ji)) + (0.8 * prevQ2)
			i2 = (0.2 * (i1OddPrev3 - jq)) + (0.8 * prevI2)
			i1EvenPrev3 = i1EvenPrev2
			i1EvenPrev2 = d
		}
		re = (0.2 * ((i2 * prevI2) + (q2 * prevQ2))) + (0.8 * re)
		im = (0.2 * ((i2 * prevQ2) - (q2 * prevI2))) + (0.8 * im)
		prevQ2, prevI2 = q2, i2
		last := period
		if im != 0.0 && re != 0.0 {
			period = 360.0 / (atan(im/re) * rad2Deg)
		}
		if t := 1.5 * last; period > t {
			period = t
		}
		if t := 0.67 * last; period < t {
			period = t
		}
		if period < 6 {
			period = 6
		} else if period > 50 {
			period = 50
		}
		period = (0.2 * period) + (0.8 * last)
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

	// The 4-bar WMA of the price, primed with the first three bars.
	trailing, today := 0, 0
	wmaSub, wmaSum := x[0], x[0]
	wmaSub += x[1]
	wmaSum += x[1] * 2.0
	wmaSub += x[2]
	wmaSum += x[2] * 3.0
	today = 3
	trailingValue := 0.0
	wma := func(v float64) float64 {
		wmaSub += v
		wmaSub -= trailingValue
		wmaSum += v * 4.0
		trailingValue = x[trailing]
		trailing++
		s := wmaSum * 0.1
		wmaSum -= wmaSub
		return s
	}
	for i := 0; i < 9; i++ {
		wma(x[today])
		today++
	}

	var detrender, q1, jI, jQ hilbertLeg
	hIdx := 0
	period := 0.0
	prevI2, prevQ2, re, im := 0.0, 0.0, 0.0, 0.0
	m, f := 0.0, 0.0
	i1OddPrev3, i1EvenPrev3, i1OddPrev2, i1EvenPrev2 := 0.0, 0.0, 0.0, 0.0
	prevPhase := 0.0
	for ; today < n; today++ {
		adj := (0.075 * period) + 0.54
		v := x[today]
		sv := wma(v)
		var q2, i2, phase float64
		if today%2 == 0 {
			d := detrender.step(sv, true, hIdx, adj)
			qq := q1.step(d, true, hIdx, adj)
			ji := jI.step(i1EvenPrev3, true, hIdx, adj)
			jq := jQ.step(qq, true, hIdx, adj)
			if hIdx++; hIdx == 3 {
				hIdx = 0
			}
			q2 = (0.2 * (qq + ji)) + (0.8 * prevQ2)
			i2 = (0.2 * (i1EvenPrev3 - jq)) + (0.8 * prevI2)
			i1OddPrev3 = i1OddPrev2
			i1OddPrev2 = d
			if i1EvenPrev3 != 0.0 {
				phase = atan(qq/i1EvenPrev3) * rad2Deg
			}
		} else {
			d := detrender.step(sv, false, hIdx, adj)
			qq := q1.step(d, false, hIdx, adj)
			ji := jI.step(i1OddPrev3, false, hIdx, adj)
			jq := jQ.step(qq, false, hIdx, adj)
			q2 = (0.2 * (qq + ji)) + (0.8 * prevQ2)
			i2 = (0.2 * (i1OddPrev3 - jq)) + (0.8 * prevI2)
			i1EvenPrev3 = i1EvenPrev2
			i1EvenPrev2 = d
			if i1OddPrev3 != 0.0 {
				phase = atan(qq/i1OddPrev3) * rad2Deg
			}
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
		re = (0.2 * ((i2 * prevI2) + (q2 * prevQ2))) + (0.8 * re)
		im = (0.2 * ((i2 * prevQ2) - (q2 * prevI2))) + (0.8 * im)
		prevQ2, prevI2 = q2, i2
		last := period
		if im != 0.0 && re != 0.0 {
			period = 360.0 / (atan(im/re) * rad2Deg)
		}
		if t := 1.5 * last; period > t {
			period = t
		}
		if t := 0.67 * last; period < t {
			period = t
		}
		if period < 6 {
			period = 6
		} else if period > 50 {
			period = 50
		}
		period = (0.2 * period) + (0.8 * last)
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
