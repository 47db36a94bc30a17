package script

import (
	"math"

	"wicket/strategy"
)

// SmokeBars is the short synthetic series validation runs a strategy over:
// n hourly bars of a deterministic random walk with trending and ranging
// stretches, so crossovers, breakouts and mean reversion all occur.
func SmokeBars(n int) strategy.Bars {
	b := strategy.Bars{
		Series: "SMOKE@1h",
		Time:   make([]int64, n), Open: make([]float64, n), High: make([]float64, n),
		Low: make([]float64, n), Close: make([]float64, n), Volume: make([]float64, n),
	}
	// A small xorshift generator: the series must be identical everywhere.
	state := uint64(0x9E3779B97F4A7C15)
	next := func() float64 {
		state ^= state << 13
		state ^= state >> 7
		state ^= state << 17
		return float64(state>>11) / float64(1<<53)
	}
	normal := func() float64 { // Box-Muller
		u1, u2 := next(), next()
		if u1 < 1e-12 {
			u1 = 1e-12
		}
		return math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
	}
	price := 100.0
	const start = 1704067200 // 2024-01-01T00:00:00Z
	for i := 0; i < n; i++ {
		drift := 0.0008 * math.Sin(float64(i)/90) // alternating up and down regimes
		open := price
		price *= math.Exp(drift + 0.006*normal())
		hi := math.Max(open, price) * (1 + 0.003*next())
		lo := math.Min(open, price) * (1 - 0.003*next())
		b.Time[i] = start + int64(i)*3600
		b.Open[i], b.High[i], b.Low[i], b.Close[i] = open, hi, lo, price
		b.Volume[i] = math.Round(1000 + 1000*next())
	}
	return b
}
