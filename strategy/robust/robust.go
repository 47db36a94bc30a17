// Package robust computes the figures that say how far a backtest's
// result can be trusted, beside the deflated Sharpe ratio and the
// probability of backtest overfitting: the probabilistic Sharpe ratio, the
// minimum backtest length for a number of trials, Monte Carlo resampling
// of a run's trades and returns, and alpha, beta and the information
// ratio against a benchmark.
//
// Every function is pure and deterministic (Monte Carlo draws from a
// seeded generator the caller names). It must never read bars, the ledger
// or the clock, nor report money: figures are ratios and fractions of the
// starting equity.
package robust

import (
	"errors"
	"math"
)

// eulerGamma is the Euler–Mascheroni constant.
const eulerGamma = 0.5772156649015329

func normCDF(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

func normQuantile(p float64) float64 { return math.Sqrt2 * math.Erfinv(2*p-1) }

// PSR is the probabilistic Sharpe ratio of Bailey and López de Prado ("The
// Sharpe Ratio Efficient Frontier", Journal of Risk 15(2), 2012): the
// probability that the true per-period Sharpe ratio exceeds benchmark,
// given an observed per-period sr over t returns with skewness skew and
// (non-excess) kurtosis kurt:
//
//	PSR = Φ((SR - SR*) sqrt(T-1) / sqrt(1 - γ3 SR + (γ4-1)/4 SR²)).
//
// NaN when undefined (fewer than two returns, a non-positive variance
// term, or a NaN input).
func PSR(sr, benchmark float64, t int, skew, kurt float64) float64 {
	if t < 2 || math.IsNaN(sr+benchmark+skew+kurt) {
		return math.NaN()
	}
	den := 1 - skew*sr + (kurt-1)/4*sr*sr
	if !(den > 0) {
		return math.NaN()
	}
	return normCDF((sr - benchmark) * math.Sqrt(float64(t-1)) / math.Sqrt(den))
}

// MinBTL is the minimum backtest length, in years, of Bailey, Borwein,
// López de Prado and Zhu ("Pseudo-Mathematics and Financial Charlatanism",
// Notices of the AMS 61(5), 2014): with trials independent configurations
// tried, a backtest shorter than this can show an annualised Sharpe ratio
// of sharpe by luck alone,
//
//	MinBTL ≈ (((1-γ) Φ⁻¹(1-1/N) + γ Φ⁻¹(1-1/(N e))) / E[max_N])².
//
// One trial needs no length (0); NaN for a non-positive sharpe.
func MinBTL(trials int, sharpe float64) float64 {
	switch {
	case trials < 1 || !(sharpe > 0):
		return math.NaN()
	case trials == 1:
		return 0
	}
	n := float64(trials)
	z := (1-eulerGamma)*normQuantile(1-1/n) + eulerGamma*normQuantile(1-1/(n*math.E))
	return (z / sharpe) * (z / sharpe)
}

// Relative is a strategy's returns against a benchmark's over the same
// periods, annualised by PeriodsPerYear.
type Relative struct {
	// Alpha is the annualised intercept of the strategy's returns
	// regressed on the benchmark's (per-period intercept × P).
	Alpha float64
	// Beta is cov(r, b) / var(b).
	Beta float64
	// Correlation is the Pearson correlation of r and b.
	Correlation float64
	// TrackingError is the annualised standard deviation of r - b.
	TrackingError float64
	// InformationRatio is mean(r - b) / std(r - b) × sqrt(P).
	InformationRatio float64
	// Periods is how many returns were compared.
	Periods int
}

// ErrTooShort says there are too few returns for a figure.
var ErrTooShort = errors.New("too few returns: need at least two aligned periods")

// Against compares returns r with benchmark returns b, period for period
// (the same length, aligned by the caller), annualised by periodsPerYear.
// A benchmark without variance has no beta (NaN), and a strategy that
// tracks it exactly no information ratio.
func Against(r, b []float64, periodsPerYear float64) (Relative, error) {
	n := len(r)
	if n != len(b) {
		return Relative{}, errors.New("the strategy's and the benchmark's returns have different lengths")
	}
	if n < 2 {
		return Relative{}, ErrTooShort
	}
	var mr, mb, ma float64
	for i := range r {
		mr += r[i]
		mb += b[i]
	}
	mr /= float64(n)
	mb /= float64(n)
	ma = mr - mb
	var crb, cbb, crr, caa float64
	for i := range r {
		dr, db := r[i]-mr, b[i]-mb
		da := (r[i] - b[i]) - ma
		crb += dr * db
		cbb += db * db
		crr += dr * dr
		caa += da * da
	}
	rel := Relative{Periods: n, Beta: math.NaN(), Alpha: math.NaN(), Correlation: math.NaN(), InformationRatio: math.NaN()}
	if cbb > 0 {
		rel.Beta = crb / cbb
		rel.Alpha = (mr - rel.Beta*mb) * periodsPerYear
		if crr > 0 {
			rel.Correlation = crb / math.Sqrt(cbb*crr)
		}
	}
	sa := math.Sqrt(caa / float64(n-1))
	rel.TrackingError = sa * math.Sqrt(periodsPerYear)
	if sa > 0 {
		rel.InformationRatio = ma / sa * math.Sqrt(periodsPerYear)
	}
	return rel, nil
}
