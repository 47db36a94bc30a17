package backtest

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Metrics are the spec's figures ("Metric definitions"). Ratios are plain
// fractions (0.12 is 12%); NaN marks a figure that is undefined for the run
// (a Sharpe ratio without variance, a profit factor without losers) and is
// reported as null. Money fields are in the capital's currency.
type Metrics struct {
	TotalReturn float64 // E_T/E_0 - 1
	CAGR        float64 // (E_T/E_0)^(1/Y) - 1, Y = calendar days / 365.25
	Sharpe      float64 // mean(r)/std(r, ddof=1) * sqrt(P)
	Sortino     float64 // mean(r)/sqrt(mean(min(0,r)^2)) * sqrt(P)
	MaxDrawdown float64 // max_t (1 - E_t / max_{s<=t} E_s), positive
	// MaxDrawdownBars and MaxDrawdownDuration measure the longest time
	// from a peak until equity regains it (or the end of data).
	MaxDrawdownBars     int
	MaxDrawdownDuration time.Duration
	Calmar              float64 // CAGR / MaxDrawdown
	WinRate             float64 // winners / closed trades, net of fees
	ProfitFactor        float64 // sum of winning pnl / |sum of losing pnl|
	Expectancy          float64 // mean net pnl per closed trade (money)
	Trades              int     // closed round trips
	Exposure            float64 // bars with a position / all bars
	FeesPaid            float64 // money
	SlippageCost        float64 // money: what slippage cost against the marks
	// The costs beyond fee and slippage (costs.go), reported only when
	// Charged names them.
	Charged           Charged
	FundingPaid       float64 // money: funding paid (negative: received)
	BorrowPaid        float64 // money: borrow paid on shorts
	Liquidations      int     // positions the margin model liquidated
	VolumeCappedFills int     // fills the volume cap cut short
	FinalEquity       float64 // money: E_T
	Bars              int
	Start, End        time.Time // open times of the first and last bar
	PeriodsPerYear    float64   // P: bars per year on a 24/7 calendar
	BuyAndHoldReturn  float64   // close_T / close_0 - 1
}

// Curve is an equity curve: the mark-to-market equity after fees at each
// bar's close, labelled with the bar's (open) time.
type Curve struct {
	Time   []int64
	Equity []float64
}

// Returns are the per-period returns r_t = E_t/E_{t-1} - 1 of a curve that
// started from capital: the first return is E_0/capital - 1, so a curve of
// n bars has n returns. After equity reaches zero the returns are 0.
func Returns(equity []float64, capital float64) []float64 {
	r := make([]float64, len(equity))
	prev := capital
	for i, e := range equity {
		if prev > 0 {
			r[i] = e/prev - 1
		}
		prev = e
	}
	return r
}

// EquityMetrics computes the metrics that depend on the curve alone (every
// trade and cost field is left zero): total return, CAGR, Sharpe, Sortino,
// drawdown and its duration, Calmar, bars and range. barLength is the bar
// duration, so a curve of n bars spans n bar lengths of calendar time.
// returns are the curve's Returns (computed when nil); capital must be
// positive. Walk-forward uses it on stitched out-of-sample curves; a run
// computes the same figures with the same accumulator as it goes.
func EquityMetrics(c Curve, returns []float64, capital, periodsPerYear float64, barLength time.Duration) Metrics {
	n := len(c.Equity)
	if n == 0 {
		return Metrics{PeriodsPerYear: periodsPerYear}
	}
	if len(returns) != n {
		returns = Returns(c.Equity, capital)
	}
	acc := newCurveAcc(capital, c.Time)
	for i, e := range c.Equity {
		r := returns[i]
		acc.sum += r
		d := min(r, 0) // branch-free: gains and losses alternate unpredictably
		acc.down += d * d
		r2 := r * r
		acc.s2 += r2
		acc.s3 += r2 * r
		acc.s4 += r2 * r2
		if e >= acc.peak {
			acc.newPeak(i, e)
		} else if e < acc.floor {
			acc.deepen(e)
		}
	}
	m, _, _ := acc.metrics(n, c.Equity[n-1], c.Time[0], c.Time[n-1], returns, periodsPerYear, barLength)
	return m
}

// curveAcc accumulates an equity curve's metrics one bar at a time: the
// return sums and the drawdown and its duration. The starting capital is
// the first peak, at the first bar. Per bar (i, time t, equity e, return
// r) its user adds r to sum, min(r, 0)^2 to down, r^2 (r2 := r*r) to s2,
// r2*r to s3 and r2*r2 to s4, calls newPeak when e >= peak and deepen when
// e < floor: written out in the loops themselves (EquityMetrics and the
// engine's), so the running sums stay in registers, with the rare events
// here. A return of exactly 0 moves no sum, so a loop may leave out the
// bars it knows to have none.
type curveAcc struct {
	capital float64
	times   []int64 // the bars' times
	// The bars before even are step seconds apart (timeGrid), so a
	// drawdown among them lasts its bars times step, without reading
	// the times (0: always read them).
	step       int64
	even       int
	sum, down  float64 // of r and of min(r, 0)^2
	s2, s3, s4 float64 // of r^2, r^3 and r^4, for the moments
	peak       float64
	peakAt     int
	floor      float64 // equity below this deepens the max drawdown: peak * keep
	maxDD      float64
	keep       float64 // 1 - maxDD
	longest    int
	longestFor int64 // seconds
}

// newCurveAcc starts the accumulator of a curve over bars at times
// (read only when a drawdown ends, so a run's loop never reads them).
func newCurveAcc(capital float64, times []int64) curveAcc {
	return curveAcc{capital: capital, times: times, peak: capital, floor: capital, keep: 1}
}

// newPeak takes bar i whose equity e is at or above the peak,
// ending the drawdown in progress if there is one.
func (a *curveAcc) newPeak(i int, e float64) {
	if a.peakAt != i-1 {
		a.regained(i) // a no-op at bar 0, the capital's peak
	}
	a.peak, a.peakAt = e, i
	a.floor = e * a.keep
}

// deepen takes an equity e below the floor: a deeper drawdown.
func (a *curveAcc) deepen(e float64) {
	a.maxDD = 1 - e/a.peak
	a.keep = 1 - a.maxDD
	a.floor = e
}

// regained closes the drawdown that ends (or is cut by the data's end) at
// bar i.
func (a *curveAcc) regained(i int) {
	bars := i - a.peakAt
	secs := int64(bars) * a.step
	if i >= a.even {
		secs = a.times[i] - a.times[a.peakAt]
	}
	if secs > a.longestFor || (secs == a.longestFor && bars > a.longest) {
		a.longest, a.longestFor = bars, secs
	}
}

// Moments describe a run's per-bar returns: their count, mean, and the
// sums of their deviations from the mean squared, cubed and to the fourth
// power (not divided by the count).
type Moments struct {
	T                int
	Mean, M2, M3, M4 float64
}

// MomentsOf computes the moments of r, as a run finds those of its
// returns (curveAcc.moments): bit for bit the Moments of a run whose
// returns are r.
func MomentsOf(r []float64) Moments {
	var s1, s2, s3, s4 float64
	for _, x := range r {
		s1 += x
		x2 := x * x
		s2 += x2
		s3 += x2 * x
		s4 += x2 * x2
	}
	if mo, ok := powerMoments(len(r), s1, s2, s3, s4); ok {
		return mo
	}
	return centralMoments(r, s1)
}

// moments are the moments of the curve's n returns, from its power sums
// (powerMoments) or, where those would lose precision, from the returns
// (centralMoments); false when the returns are needed and not given
// (nil). Either way they are what MomentsOf reports for the returns.
func (a *curveAcc) moments(n int, returns []float64) (Moments, bool) {
	if mo, ok := powerMoments(n, a.sum, a.s2, a.s3, a.s4); ok {
		return mo, true
	}
	if len(returns) != n {
		return Moments{}, false
	}
	return centralMoments(returns, a.sum), true
}

// powerMoments are the moments of n values from the sums of their first
// to fourth powers (s1 to s4), without a second pass over them:
// M2 = s2 - mean*s1, M3 = s3 - 3 mean s2 + 2 mean^2 s1, M4 = s4 - 4 mean s3
// + 6 mean^2 s2 - 3 mean^3 s1. The subtraction cancels digits as the mean
// grows against the spread; false when mean^2 exceeds the variance (more
// than half of s2 would cancel), when the squares are so small that the
// fourth powers lose digits below the normal floats (0 < s2 < 2^-400; all
// zero is exact), or when a figure is not finite, and the deviations must
// be summed (centralMoments). Below that bound the figures are within
// 1e-12 relative of centralMoments' on a few thousand values
// (TestPowerMomentsAgreeWithTwoPass; the third moment relative to the sum
// of |deviation|^3, since it may itself cancel to about 0), and on long
// runs closer to the exact figures than those are
// (TestPowerMomentsOverLongRuns).
func powerMoments(n int, s1, s2, s3, s4 float64) (Moments, bool) {
	mo := Moments{T: n}
	if n == 0 {
		return mo, true
	}
	mean := s1 / float64(n)
	c := mean * s1 // n mean^2, never negative
	m2 := s2 - c
	if !(c <= m2) || (s2 > 0 && s2 < 0x1p-400) {
		return mo, false
	}
	mo.Mean, mo.M2 = mean, m2
	mo.M3 = s3 - mean*(3*s2-2*c)
	mo.M4 = s4 - mean*(4*s3-mean*(6*s2-3*c))
	if math.IsInf(mo.M2+mo.M3+mo.M4, 0) || math.IsNaN(mo.M3+mo.M4) {
		return Moments{T: n}, false
	}
	return mo, true
}

// centralMoments are the moments of r (whose sum is sum) from the sums of
// the deviations from the mean, in a second pass.
func centralMoments(r []float64, sum float64) Moments {
	mo := Moments{T: len(r)}
	if len(r) == 0 {
		return mo
	}
	mo.Mean = sum / float64(len(r))
	mean := mo.Mean
	for _, x := range r {
		d := x - mean
		d2 := d * d
		mo.M2 += d2
		mo.M3 += d2 * d
		mo.M4 += d2 * d2
	}
	return mo
}

// BlockStat is one block of a run's per-bar returns: their count, sum
// and sum of squares (the probability of backtest overfitting compares
// combinations block by block).
type BlockStat struct {
	N     int     `json:"n"`
	Sum   float64 `json:"s"`
	SumSq float64 `json:"q"`
}

// BlockStats cuts returns into s equal blocks, leaving out the oldest
// len(returns) mod s; nil when there are fewer than 2 returns per block.
// Each block's sums run in bar order, as a run's do (blockSums).
func BlockStats(returns []float64, s int) []BlockStat {
	b := newBlockSums(len(returns), s)
	if b.out == nil {
		return nil
	}
	for k := range b.out {
		st := BlockStat{N: b.m}
		for _, x := range returns[b.off+k*b.m : b.off+(k+1)*b.m] {
			st.Sum += x
			st.SumSq += x * x
		}
		b.out[k] = st
	}
	return b.out
}

// blockSums cut a run's n returns into blocks as BlockStats does, while
// the run sums them: its loop keeps the block's sum of r and of r*r (from
// 0, in bar order) and, on reaching bar first() and each bar cut returns,
// calls cut with them and starts again from 0.
type blockSums struct {
	out    []BlockStat // nil: no blocks
	m, off int         // returns per block; the bars before the first block
}

func newBlockSums(n, s int) blockSums {
	if s < 2 || n < 2*s {
		return blockSums{}
	}
	m := n / s
	return blockSums{out: make([]BlockStat, s), m: m, off: n - m*s}
}

// first is the first bar where the loop calls cut (beyond every bar when
// there are no blocks).
func (b *blockSums) first() int {
	if b.out == nil {
		return math.MaxInt
	}
	return b.off
}

// cut takes the sums of the bars before bar i since the last cut (a block
// when i is past the first block's start) and returns the next bar to cut
// at.
func (b *blockSums) cut(i int, sum, sq float64) int {
	if i > b.off {
		b.out[(i-b.off)/b.m-1] = BlockStat{N: b.m, Sum: sum, SumSq: sq}
	}
	return i + b.m
}

// metrics finishes the curve's figures over its n bars, from t0 to tN,
// ending at equity final, with returns the curve's returns (nil when not
// kept) for the moments; false when the moments need the returns
// (curveAcc.moments), and then Sharpe is NaN.
func (a *curveAcc) metrics(n int, final float64, t0, tN int64, returns []float64, periodsPerYear float64, barLength time.Duration) (Metrics, Moments, bool) {
	m := Metrics{Bars: n, PeriodsPerYear: periodsPerYear}
	if n == 0 {
		return m, Moments{}, true
	}
	capital := a.capital
	m.Start, m.End = unixTime(t0), unixTime(tN)
	m.FinalEquity = final
	m.TotalReturn = final/capital - 1
	days := (float64(tN-t0) + barLength.Seconds()) / 86400
	years := days / 365.25
	switch {
	case final <= 0:
		m.CAGR = -1
	case years > 0:
		m.CAGR = math.Pow(final/capital, 1/years) - 1
	default:
		m.CAGR = math.NaN()
	}
	m.MaxDrawdown = a.maxDD
	if a.peakAt != n-1 {
		a.regained(n - 1)
	}
	m.MaxDrawdownBars, m.MaxDrawdownDuration = a.longest, time.Duration(a.longestFor)*time.Second

	mo, ok := a.moments(n, returns)
	m.Sharpe, m.Sortino = math.NaN(), math.NaN()
	if n > 1 && ok {
		if sd := math.Sqrt(mo.M2 / float64(n-1)); sd > 0 {
			m.Sharpe = mo.Mean / sd * math.Sqrt(periodsPerYear)
		}
	}
	if dd := math.Sqrt(a.down / float64(n)); dd > 0 {
		m.Sortino = mo.Mean / dd * math.Sqrt(periodsPerYear)
	}
	m.Calmar = math.NaN()
	if m.MaxDrawdown > 0 {
		m.Calmar = m.CAGR / m.MaxDrawdown
	}
	return m, mo, ok
}

// AnnualisedBound bounds the annualised figures (CAGR, Calmar, Sharpe,
// Sortino) in either direction: a short run compounds into absurd numbers
// (+2.3 % over 17 one-minute bars is a CAGR near 1e303, and its rounding
// for the report overflowed to +Inf), which rank nothing and read as
// noise. The metrics keep the figures as computed; a report (Reported,
// WriteText) gives a figure past the bound at the bound, and the result
// warns (BoundNote).
const AnnualisedBound = 1e6

// Bounded is x as a report gives an annualised figure: within
// ±AnnualisedBound (NaN stays NaN).
func Bounded(x float64) float64 {
	if math.IsNaN(x) || math.Abs(x) <= AnnualisedBound {
		return x
	}
	return math.Copysign(AnnualisedBound, x)
}

// annualised are the annualised figures of m, by name.
func (m Metrics) annualised() [4]struct {
	name string
	x    float64
} {
	return [4]struct {
		name string
		x    float64
	}{{"cagr", m.CAGR}, {"calmar", m.Calmar}, {"sharpe", m.Sharpe}, {"sortino", m.Sortino}}
}

// BoundNote is the warning of a result whose annualised figures were
// bounded, or "".
func (m Metrics) BoundNote() string {
	var names []string
	for _, f := range m.annualised() {
		if Bounded(f.x) != f.x {
			names = append(names, f.name)
		}
	}
	if len(names) == 0 {
		return ""
	}
	span := m.End.Sub(m.Start)
	return fmt.Sprintf("annualised figures bounded: %s annualise %s of bars past ±%.0f and are reported at the bound; they rank nothing over so short a span (use total_return)",
		strings.Join(names, ", "), span.Round(time.Second), float64(AnnualisedBound))
}

// tradeAcc tallies closed round trips in the order they close.
type tradeAcc struct {
	n                       int
	wins, gain, loss, total float64
}

func (a *tradeAcc) add(pnl float64) {
	a.n++
	a.total += pnl
	switch {
	case pnl > 0:
		a.wins++
		a.gain += pnl
	case pnl < 0:
		a.loss += pnl
	}
}

// fill sets the trade fields of m.
func (a *tradeAcc) fill(m *Metrics) {
	m.Trades = a.n
	m.WinRate, m.ProfitFactor, m.Expectancy = math.NaN(), math.NaN(), math.NaN()
	if a.n == 0 {
		return
	}
	m.WinRate = a.wins / float64(a.n)
	m.Expectancy = a.total / float64(a.n)
	if a.loss < 0 {
		m.ProfitFactor = a.gain / -a.loss
	}
}
