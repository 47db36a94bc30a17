// Package historytest holds the benchmarks' synthetic series: bars whose
// shape is known, so a benchmark in any package (the engine, research,
// the MCP session) times the same work. It is for tests only and must
// never be imported by the binary.
package historytest

import (
	"math"
	"time"

	"wicket/strategy"
)

// SineVolume is every sine bar's volume: a liquid market, so the default
// volume cap (10 % of a bar's volume) never binds a 10,000 account's
// orders, as the numba reference models no cap. With a volume of 1 the
// cap filled 0.1 units a bar and carried the rest, so every bar took the
// engine's slow path and the backtest was not the reference's.
const SineVolume = 1_000_000

// Sine returns n hourly bars of a noisy sine from 1990-01-01 as series:
// a slow wave of ±20 around 100, a faster one of ±3 and a fast ripple of
// ±0.5, so SMA crossings come every few hundred bars at every length.
func Sine(series string, n int) strategy.Bars {
	bars := strategy.Bars{Series: series, Time: make([]int64, n), Open: make([]float64, n), High: make([]float64, n),
		Low: make([]float64, n), Close: make([]float64, n), Volume: make([]float64, n)}
	start := time.Date(1990, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	p := 100.0
	for i := range n {
		o := p
		p = 100 + 20*math.Sin(float64(i)/500) + 3*math.Sin(float64(i)/37) + 0.5*math.Sin(float64(i)*1.7)
		bars.Time[i] = start + int64(i)*3600
		bars.Open[i], bars.Close[i] = o, p
		bars.High[i], bars.Low[i], bars.Volume[i] = max(o, p)+0.1, min(o, p)-0.1, SineVolume
	}
	return bars
}
