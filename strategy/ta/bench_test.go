package ta

import "testing"

// BenchmarkIndicators measures indicator throughput over 1,000,000 bars
// (bars/s per function, cache off).
func BenchmarkIndicators(b *testing.B) {
	const n = 1_000_000
	bars := randomWalk(n, 7)
	for _, name := range []string{"sma", "ema", "rsi", "macd", "bbands", "atr", "adx", "stoch", "stochrsi", "apo", "linearreg_slope", "ht_sine", "mavp", "cdl_engulfing", "cdl_morningstar", "cdl_hikkake", "cross_above"} {
		e, _ := Builtin().Lookup(name)
		in := inputsFor(e, bars)
		if name == "cross_above" {
			in = [][]float64{bars["close"], bars["open"]}
		}
		p := e.Defaults()
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(n * 8 * len(in)))
			for i := 0; i < b.N; i++ {
				if _, err := Compute(e, in, p); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "bars/s")
		})
	}
}

// BenchmarkMemoHit is the cost of a cached indicator call: a provenance
// key and a map lookup, independent of the series length.
func BenchmarkMemoHit(b *testing.B) {
	m := NewMemo(0)
	x := randomWalk(100_000, 8)["close"]
	kx := m.ValuesKey(x)
	e, _ := Builtin().Lookup("sma")
	p := []float64{20}
	m.Compute(e, [][]float64{x}, []Key{kx}, p)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		m.Compute(e, [][]float64{x}, []Key{kx}, p)
	}
}
