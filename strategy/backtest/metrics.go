package backtest

import (
	"math"
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
	FinalEquity         float64 // money: E_T
	Bars                int
	Start, End          time.Time // open times of the first and last bar
	PeriodsPerYear      float64   // P: bars per year on a 24/7 calendar
	BuyAndHoldReturn    float64   // close_T / close_0 - 1
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
// positive. Walk-forward uses it on stitched out-of-sample curves.
func EquityMetrics(c Curve, returns []float64, capital, periodsPerYear float64, barLength time.Duration) Metrics {
	n := len(c.Equity)
	m := Metrics{Bars: n, PeriodsPerYear: periodsPerYear}
	if n == 0 {
		return m
	}
	if len(returns) != n {
		returns = Returns(c.Equity, capital)
	}
	m.Start, m.End = unixTime(c.Time[0]), unixTime(c.Time[n-1])
	final := c.Equity[n-1]
	m.FinalEquity = final
	m.TotalReturn = final/capital - 1
	days := (float64(c.Time[n-1]-c.Time[0]) + barLength.Seconds()) / 86400
	years := days / 365.25
	switch {
	case final <= 0:
		m.CAGR = -1
	case years > 0:
		m.CAGR = math.Pow(final/capital, 1/years) - 1
	default:
		m.CAGR = math.NaN()
	}

	// One pass for the return sums and the drawdown, a second for the
	// deviations. The starting capital is the first peak, at the first bar.
	var sum, down float64
	peak, peakAt := capital, 0
	peakTime := c.Time[0]
	longest, longestFor := 0, time.Duration(0)
	under := false
	floor := peak // equity below this deepens the max drawdown: peak * (1 - MaxDrawdown)
	for i, e := range c.Equity {
		r := returns[i]
		sum += r
		d := min(r, 0) // branch-free: gains and losses alternate unpredictably
		down += d * d
		if e >= peak {
			if under {
				bars, dur := i-peakAt, time.Duration(c.Time[i]-peakTime)*time.Second
				if dur > longestFor || (dur == longestFor && bars > longest) {
					longest, longestFor = bars, dur
				}
				under = false
			}
			peak, peakAt, peakTime = e, i, c.Time[i]
			floor = peak * (1 - m.MaxDrawdown)
			continue
		}
		under = true
		if e < floor {
			m.MaxDrawdown = 1 - e/peak
			floor = e
		}
	}
	if under {
		bars, dur := n-1-peakAt, time.Duration(c.Time[n-1]-peakTime)*time.Second
		if dur > longestFor || (dur == longestFor && bars > longest) {
			longest, longestFor = bars, dur
		}
	}
	m.MaxDrawdownBars, m.MaxDrawdownDuration = longest, longestFor

	mean := sum / float64(n)
	var ss float64
	for _, r := range returns {
		ss += (r - mean) * (r - mean)
	}
	m.Sharpe, m.Sortino = math.NaN(), math.NaN()
	if n > 1 {
		if sd := math.Sqrt(ss / float64(n-1)); sd > 0 {
			m.Sharpe = mean / sd * math.Sqrt(periodsPerYear)
		}
	}
	if dd := math.Sqrt(down / float64(n)); dd > 0 {
		m.Sortino = mean / dd * math.Sqrt(periodsPerYear)
	}
	m.Calmar = math.NaN()
	if m.MaxDrawdown > 0 {
		m.Calmar = m.CAGR / m.MaxDrawdown
	}
	return m
}

// tradeMetrics fills the trade fields of m from closed round trips.
func tradeMetrics(m *Metrics, trades []Trade) {
	m.Trades = len(trades)
	m.WinRate, m.ProfitFactor, m.Expectancy = math.NaN(), math.NaN(), math.NaN()
	if len(trades) == 0 {
		return
	}
	var wins, gain, loss, total float64
	for _, t := range trades {
		total += t.PnL
		switch {
		case t.PnL > 0:
			wins++
			gain += t.PnL
		case t.PnL < 0:
			loss += t.PnL
		}
	}
	m.WinRate = wins / float64(len(trades))
	m.Expectancy = total / float64(len(trades))
	if loss < 0 {
		m.ProfitFactor = gain / -loss
	}
}
