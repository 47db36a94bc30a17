package history

import (
	"context"
	"errors"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"time"

	"wicket/strategy"
)

// DemoSymbol describes one demo market.
type DemoSymbol struct {
	Symbol string
	Last   float64 // close of the last bar; the walk is scaled to end here
	Vol    float64 // annualised volatility of the calm regime
	Volume float64 // typical volume per hour
	Growth float64 // long-run log growth per year the walk reverts towards
}

// DemoSymbols are the markets `wicket data seed-demo` writes: the symbols a
// new project's paper venue lists, so demo research and demo orders talk
// about the same market.
var DemoSymbols = []DemoSymbol{
	{Symbol: "BTC-USD", Last: 60000, Vol: 0.55, Volume: 400, Growth: 0.35},
	{Symbol: "ETH-USD", Last: 3000, Vol: 0.70, Volume: 5000, Growth: 0.30},
	{Symbol: "SOL-USD", Last: 150, Vol: 0.95, Volume: 60000, Growth: 0.40},
	{Symbol: "SPY", Last: 550, Vol: 0.16, Volume: 250000, Growth: 0.08},
}

// DemoEnd is the close of the last demo bar: fixed, so the demo history is
// the same on every machine and every day.
var DemoEnd = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// Demo history spans: hourly bars for the last two years, daily bars for
// the last ten, both cut from one 15-minute walk so they agree.
var (
	DemoHourlyStart = time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)
	DemoDailyStart  = time.Date(2015, 1, 1, 0, 0, 0, 0, time.UTC)
)

const (
	demoStep     = 15 * time.Minute
	stepsPerHour = int(time.Hour / demoStep)
	stepsPerYear = 365 * 24 * stepsPerHour
)

// demoGap is the size of an hourly opening gap in units of the hourly
// volatility.
const demoGap = 0.25

// reversion is the demo walk's pull towards its growth line, per year.
const reversion = math.Ln2

// regime is one state of the demo walk's Markov chain.
type regime struct {
	drift float64 // annual drift in units of the symbol's volatility
	vol   float64 // volatility multiplier
	stay  float64 // mean length in days
}

// regimes: calm uptrend, volatile downtrend, sideways chop.
var regimes = [...]regime{
	{drift: 1.1, vol: 0.8, stay: 60},
	{drift: -1.3, vol: 1.5, stay: 25},
	{drift: 0.05, vol: 1.0, stay: 40},
}

// DemoBars generates the demo history of one symbol: hourly bars from
// DemoHourlyStart and daily bars from DemoDailyStart, both up to DemoEnd.
// The walk is a regime-switching geometric random walk in 15-minute steps,
// reverting slowly towards a growth line,
// seeded from the symbol name, so the output is identical on every run.
// Every bar after the first opens with a small gap from the previous close.
// Prices are rounded to cents (to 1e-4 below 10).
func DemoBars(sym DemoSymbol) (hourly, daily strategy.Bars) {
	h := fnv.New64a()
	h.Write([]byte(sym.Symbol))
	rng := rand.New(rand.NewPCG(h.Sum64(), 0x77696b6574)) // PCG's output is specified, so it never changes

	steps := int(DemoEnd.Sub(DemoDailyStart) / demoStep)
	logp := make([]float64, steps+1)
	dt := 1 / float64(stepsPerYear)
	state := 2
	for k := 1; k <= steps; k++ {
		rg := regimes[state]
		if uniform(rng) < 1/(rg.stay*24*float64(stepsPerHour)) {
			state = (state + 1 + int(rng.Uint64()%2)) % len(regimes)
			rg = regimes[state]
		}
		sigma := sym.Vol * rg.vol
		// Log drift: the regime's trend, the long-run growth, and a pull
		// back to the growth line (half-life one year) that keeps ten years
		// of a volatile walk within a plausible band.
		trend := sym.Growth * float64(k) * dt
		mu := rg.drift*sym.Vol + sym.Growth + reversion*(trend-logp[k-1])
		logp[k] = logp[k-1] + mu*dt + sigma*math.Sqrt(dt)*normal(rng)
	}
	shift := math.Log(sym.Last) - logp[steps]
	price := func(k int) float64 { return math.Exp(logp[k] + shift) }

	// Hourly bars over the whole span; daily bars aggregate them.
	hours := steps / stepsPerHour
	all := strategy.Bars{
		Time: make([]int64, hours), Open: make([]float64, hours), High: make([]float64, hours),
		Low: make([]float64, hours), Close: make([]float64, hours), Volume: make([]float64, hours),
	}
	hourVol := sym.Vol / math.Sqrt(365*24)
	// Opening gaps: each hour opens a little away from the last close, as
	// real markets do between trades, so filling at the next open and
	// filling at this close give different results (and a fill-timing bug
	// shows). The gaps come from their own generator, so the walk and every
	// close stay as they were.
	gaps := rand.New(rand.NewPCG(h.Sum64(), 0x67617073)) // "gaps"
	for i := range hours {
		k0 := i * stepsPerHour
		o, c := price(k0), price(k0+stepsPerHour)
		if i > 0 {
			o *= math.Exp(demoGap * hourVol * normal(gaps))
		}
		hi, lo := max(o, c), min(o, c)
		for k := k0 + 1; k < k0+stepsPerHour; k++ {
			p := price(k)
			hi, lo = max(hi, p), min(lo, p)
		}
		move := math.Abs(math.Log(c/o)) / hourVol
		all.Time[i] = DemoDailyStart.Add(time.Duration(i) * time.Hour).Unix()
		all.Open[i], all.Close[i] = roundPrice(o), roundPrice(c)
		all.High[i], all.Low[i] = roundPrice(hi), roundPrice(lo)
		all.Volume[i] = math.Round(sym.Volume*math.Exp(0.4*normal(rng))*(0.6+0.4*move)*100) / 100
	}
	first := int(DemoHourlyStart.Sub(DemoDailyStart) / time.Hour)
	hourly = copyBars(all.Slice(first, hours))
	hourly.Series = sym.Symbol + "@1h"

	days := hours / 24
	daily = strategy.Bars{
		Series: sym.Symbol + "@1d",
		Time:   make([]int64, days), Open: make([]float64, days), High: make([]float64, days),
		Low: make([]float64, days), Close: make([]float64, days), Volume: make([]float64, days),
	}
	for d := range days {
		a, z := d*24, d*24+23
		daily.Time[d], daily.Open[d], daily.Close[d] = all.Time[a], all.Open[a], all.Close[z]
		daily.High[d], daily.Low[d] = all.High[a], all.Low[a]
		vol := 0.0
		for i := a; i <= z; i++ {
			daily.High[d] = max(daily.High[d], all.High[i])
			daily.Low[d] = min(daily.Low[d], all.Low[i])
			vol += all.Volume[i]
		}
		daily.Volume[d] = math.Round(vol*100) / 100
	}
	return hourly, daily
}

func copyBars(b strategy.Bars) strategy.Bars {
	return strategy.Bars{
		Series: b.Series,
		Time:   append([]int64(nil), b.Time...), Open: append([]float64(nil), b.Open...),
		High: append([]float64(nil), b.High...), Low: append([]float64(nil), b.Low...),
		Close: append([]float64(nil), b.Close...), Volume: append([]float64(nil), b.Volume...),
	}
}

// uniform returns a float in (0, 1) from the generator's raw bits.
func uniform(r *rand.Rand) float64 { return (float64(r.Uint64()>>11) + 0.5) * 0x1p-53 }

// normal is a standard normal draw (Box-Muller), written out so the demo
// data depends only on PCG's specified output, not on a library's sampler.
func normal(r *rand.Rand) float64 {
	return math.Sqrt(-2*math.Log(uniform(r))) * math.Cos(2*math.Pi*uniform(r))
}

func roundPrice(p float64) float64 {
	scale := 100.0
	if p < 10 {
		scale = 1e4
	}
	return max(math.Round(p*scale)/scale, 1/scale)
}

// SeedResult reports what SeedDemo did with one series.
type SeedResult struct {
	Series  string
	Bars    int
	Skipped bool   // the series holds imported data and was left alone
	Note    string // why it was skipped
}

// SeedDemo writes the demo series (every DemoSymbols entry at 1h and 1d).
// Re-running it rewrites the same bars, so it is idempotent. A series of
// that name that was imported (not seeded) is left untouched and reported
// as skipped.
func SeedDemo(ctx context.Context, s *Store) ([]SeedResult, error) {
	var out []SeedResult
	for _, sym := range DemoSymbols {
		hourly, daily := DemoBars(sym)
		for _, b := range []strategy.Bars{hourly, daily} {
			info, err := s.Info(b.Series)
			var he *Error
			switch {
			case err == nil && info.Source != SourceDemo:
				out = append(out, SeedResult{Series: b.Series, Bars: info.Bars, Skipped: true,
					Note: "holds imported data; left unchanged (`wicket data delete` it first to get the demo series)"})
				continue
			case err != nil && !(errors.As(err, &he) && he.Kind == KindNotFound):
				return out, err
			}
			if err := s.Write(ctx, b.Series, b, WriteOptions{Replace: true, Source: SourceDemo}); err != nil {
				return out, err
			}
			out = append(out, SeedResult{Series: b.Series, Bars: b.Len()})
		}
	}
	return out, nil
}
