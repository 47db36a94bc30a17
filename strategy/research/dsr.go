package research

import (
	"fmt"
	"math"
	"strconv"

	"wicket/strategy/backtest"

	"wicket/strategy/worker"
)

// eulerGamma is the Euler–Mascheroni constant γ of the expected maximum.
const eulerGamma = 0.5772156649

// normCDF is Φ, the standard normal distribution function.
func normCDF(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

// normQuantile is Φ⁻¹ for p in (0, 1).
func normQuantile(p float64) float64 { return math.Sqrt2 * math.Erfinv(2*p-1) }

// ExpectedMaxSharpe is SR0 of Bailey and López de Prado (2014): the
// largest per-period Sharpe ratio expected among trials Sharpe ratios
// with the given variance when every trial's true Sharpe ratio is zero,
//
//	SR0 = sqrt(V) * ((1-γ) Φ⁻¹(1-1/N) + γ Φ⁻¹(1-1/(N e))).
//
// With a single trial there is no selection and SR0 is 0.
func ExpectedMaxSharpe(trials int, variance float64) float64 {
	switch {
	case trials < 1 || variance < 0 || math.IsNaN(variance):
		return math.NaN()
	case trials == 1:
		return 0
	}
	n := float64(trials)
	return math.Sqrt(variance) * ((1-eulerGamma)*normQuantile(1-1/n) + eulerGamma*normQuantile(1-1/(n*math.E)))
}

// DeflatedSharpeRatio is the probability that a strategy's true Sharpe
// ratio exceeds zero, given that its per-period Sharpe ratio sr was the
// best of trials trials whose Sharpe ratios have variance variance, and
// that its t returns have skewness skew and non-excess kurtosis kurt
// (Bailey and López de Prado, "The Deflated Sharpe Ratio", Journal of
// Portfolio Management 40(5), 2014):
//
//	DSR = Φ((SR - SR0) sqrt(T-1) / sqrt(1 - γ3 SR + (γ4-1)/4 SR²)).
//
// It returns DSR and SR0; NaN when they are undefined (fewer than two
// returns, no trials, or a non-positive variance term).
func DeflatedSharpeRatio(sr float64, trials int, variance, skew, kurt float64, t int) (dsr, sr0 float64) {
	sr0 = ExpectedMaxSharpe(trials, variance)
	if t < 2 || math.IsNaN(sr) || math.IsNaN(sr0) || math.IsNaN(skew) || math.IsNaN(kurt) {
		return math.NaN(), sr0
	}
	den := 1 - skew*sr + (kurt-1)/4*sr*sr
	if !(den > 0) {
		return math.NaN(), sr0
	}
	return normCDF((sr - sr0) * math.Sqrt(float64(t-1)) / math.Sqrt(den)), sr0
}

// variance is the sample variance of srs (0 for fewer than two).
func variance(srs []float64) float64 {
	var mean, v float64
	m := len(srs)
	for _, s := range srs {
		mean += s
	}
	if m > 0 {
		mean /= float64(m)
	}
	for _, s := range srs {
		v += (s - mean) * (s - mean)
	}
	if m > 1 {
		v /= float64(m - 1)
	}
	return v
}

// deflated builds the report for a winner among n trials whose defined
// Sharpe ratios (the winner's included; a failed trial counts in n but
// has none) have variance v.
func deflated(win worker.ReturnStats, v float64, n int) *DeflatedSharpe {
	dsr, sr0 := DeflatedSharpeRatio(float64(win.SR), n, v, float64(win.Skew), float64(win.Kurt), win.T)
	d := &DeflatedSharpe{
		DSR: backtest.Ratio(dsr), Sharpe: sig(float64(win.SR)), ExpectedMaxSharpe: sig(sr0),
		Trials: n, TrialsVariance: sig(v), Skewness: sig(float64(win.Skew)), Kurtosis: sig(float64(win.Kurt)),
		Returns: win.T,
	}
	switch {
	case d.DSR == nil:
		d.Note = "undefined: the winner's returns have no variance or too few bars, or no trial had a defined Sharpe ratio"
	default:
		d.Note = fmt.Sprintf("probability that the winner's true Sharpe ratio is above zero after %d trials (Bailey and López de Prado, 2014); "+
			"luck alone would be expected to reach a per-period Sharpe ratio of %s; below 0.95 the winner may well be luck", n, fmtFloat(sr0))
	}
	return d
}

// sig rounds x to 6 significant digits for a report (per-period Sharpe
// ratios and their variance are small numbers); NaN and infinities are nil.
func sig(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 6, 64), 64)
	if r == 0 {
		r = 0
	}
	return &r
}

func fmtFloat(x float64) string {
	if p := sig(x); p != nil {
		return strconv.FormatFloat(*p, 'g', -1, 64)
	}
	return "undefined"
}
