package backtest

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// TestMoneyIsDecimal: Money's strings are decimal's (the shortest form
// rounded half away from zero to cents) on halves, carries, signs, tiny
// and huge amounts and random ones at every magnitude.
func TestMoneyIsDecimal(t *testing.T) {
	cases := []float64{0, math.Copysign(0, -1), 0.005, -0.005, 0.004999, 0.015, 0.025, 1.005, 2.675, 0.995, -0.995, 9.995, 99.995,
		999999.995, 0.5, 0.05, 0.0049, 0.00499999, 1e-300, -1e-300, 5e-324, 123456789.125, 1e15, 1e20, 1e21, 1.5e22, 1e300,
		math.MaxFloat64, -math.MaxFloat64, 10000, 9999.999, -9999.999, 0.1 + 0.2, 1.0 / 3, -2.0 / 3, 0.045, 0.0451}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 200_000 {
		x := rng.NormFloat64() * math.Pow(10, float64(rng.IntN(30)-8))
		if rng.IntN(4) == 0 {
			x = math.Round(x*1000) / 1000 // thousandths: halves of a cent
		}
		cases = append(cases, x)
	}
	for _, x := range cases {
		want := decimal.NewFromFloat(x).StringFixed(moneyPlaces)
		if got := Money(x); got != want {
			t.Fatalf("Money(%v) = %q, decimal writes %q", x, got, want)
		}
	}
}

// TestMetricsJSONIsMarshal: Metrics' JSON, written directly, is byte for
// byte json.Marshal's of Reported, with the optional costs present and
// absent, null ratios, and a value json.Marshal refuses refused alike.
func TestMetricsJSONIsMarshal(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	edge := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 1e-7, 9.99e-7, 1e21, 2e25, -3.5e-9, 1.0 / 3, 123456.5}
	num := func() float64 {
		if rng.IntN(4) == 0 {
			return edge[rng.IntN(len(edge))]
		}
		return rng.NormFloat64() * math.Pow(10, float64(rng.IntN(12)-4))
	}
	money := func() float64 { // finite: Money refuses the rest
		if x := num(); !math.IsNaN(x) && !math.IsInf(x, 0) {
			return x
		}
		return 0
	}
	orNaN := func() float64 { // moneyOrNull's: NaN is null
		if rng.IntN(5) == 0 {
			return math.NaN()
		}
		return money()
	}
	for trial := range 5000 {
		m := Metrics{TotalReturn: num(), CAGR: num(), Sharpe: num(), Sortino: num(), MaxDrawdown: num(), MaxDrawdownBars: rng.IntN(1000),
			MaxDrawdownDuration: time.Duration(rng.Int64N(1e15)), Calmar: num(), WinRate: num(), ProfitFactor: num(), Expectancy: orNaN(),
			Trades: rng.IntN(500), Exposure: num(), FeesPaid: money(), SlippageCost: money(), FinalEquity: money(), Bars: rng.IntN(1e6),
			Start: time.Unix(rng.Int64N(2e9), 0), End: time.Unix(rng.Int64N(2e9), 0), PeriodsPerYear: 8760, BuyAndHoldReturn: num(),
			Charged: Charged(rng.IntN(16)), FundingPaid: orNaN(), BorrowPaid: orNaN(), Liquidations: rng.IntN(3), VolumeCappedFills: rng.IntN(3)}
		if trial%50 == 0 {
			m.PeriodsPerYear = num() // NaN or an infinity: both refuse
		}
		got, gerr := m.MarshalJSON()
		want, werr := json.Marshal(m.Reported())
		if (gerr == nil) != (werr == nil) || string(got) != string(want) {
			t.Fatalf("trial %d:\n got %s (%v)\nwant %s (%v)", trial, got, gerr, want, werr)
		}
	}
}

// BenchmarkMetricsJSON is a sweep trial's metrics written as JSON.
func BenchmarkMetricsJSON(b *testing.B) {
	m := Metrics{TotalReturn: 0.1234567, CAGR: 0.05, Sharpe: 1.2, Sortino: 1.7, MaxDrawdown: 0.21, MaxDrawdownBars: 300,
		MaxDrawdownDuration: 300 * time.Hour, Calmar: 0.3, WinRate: 0.45, ProfitFactor: 1.3, Expectancy: 12.345, Trades: 102,
		Exposure: 0.5, FeesPaid: 123.456, SlippageCost: 61.7, FinalEquity: 11234.5678, Bars: 17544, Start: t0, End: t0.Add(17543 * time.Hour),
		PeriodsPerYear: 8760, BuyAndHoldReturn: 0.4}
	for b.Loop() {
		if _, err := m.MarshalJSON(); err != nil {
			b.Fatal(err)
		}
	}
}
