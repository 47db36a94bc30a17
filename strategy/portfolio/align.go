package portfolio

import (
	"fmt"
	"math"
	"slices"
	"wicket/strategy"
	"wicket/strategy/backtest"
	"wicket/strategy/scriptapi"
)

// Rebalance is a parsed rebalance schedule.
type Rebalance struct {
	Period string  // bar, daily, weekly, monthly or drift
	Drift  float64 // the threshold of drift, a fraction of equity
	Text   string  // as declared
}

// ParseRebalance reads a schedule as a strategy declares it.
func ParseRebalance(s string) (Rebalance, error) {
	p, d, err := scriptapi.ParseRebalance(s)
	if err != nil {
		return Rebalance{}, &backtest.Error{Kind: backtest.KindInvalid, Msg: err.Error()}
	}
	if s == "" {
		s = scriptapi.RebalanceBar
	}
	return Rebalance{Period: p, Drift: d, Text: s}, nil
}

// Align puts the assets' bars on one calendar, the union of their bar
// times: each returned asset has a value at every calendar time, NaN
// where it has no bar (never a value carried forward). The assets must
// share a granularity.
func Align(assets []strategy.Bars) ([]strategy.Bars, error) {
	if len(assets) == 0 {
		return nil, invalidf("a portfolio needs at least one asset")
	}
	var g strategy.Granularity
	var times []int64
	for _, a := range assets {
		_, ag, err := strategy.ParseSeries(a.Series)
		if err != nil {
			return nil, invalidf("%v", err)
		}
		if g != "" && ag != g {
			return nil, invalidf("%s is %s bars and %s is %s: a portfolio's assets share one granularity", assets[0].Series, g, a.Series, ag)
		}
		g = ag
		times = append(times, a.Time...)
	}
	slices.Sort(times)
	times = slices.Compact(times)
	out := make([]strategy.Bars, len(assets))
	for k, a := range assets {
		n := len(times)
		b := strategy.Bars{Series: a.Series, Time: times,
			Open: nanColumn(n), High: nanColumn(n), Low: nanColumn(n), Close: nanColumn(n), Volume: nanColumn(n)}
		j := 0
		for i, t := range a.Time {
			for times[j] < t {
				j++
			}
			b.Open[j], b.High[j], b.Low[j], b.Close[j], b.Volume[j] = a.Open[i], a.High[i], a.Low[i], a.Close[i], a.Volume[i]
		}
		out[k] = b
	}
	return out, nil
}

func nanColumn(n int) []float64 {
	c := make([]float64, n)
	nan := math.NaN()
	for i := range c {
		c[i] = nan
	}
	return c
}

func invalidf(format string, a ...any) error {
	return &backtest.Error{Kind: backtest.KindInvalid, Msg: fmt.Sprintf(format, a...)}
}

// has reports whether an aligned asset has a bar at i.
func has(b *strategy.Bars, i int) bool { return !math.IsNaN(b.Close[i]) && !math.IsNaN(b.Open[i]) }
