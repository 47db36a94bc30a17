package main

import (
	"math"
	"strings"
	"time"

	"wicket/strategy"
)

// toDayEnd reads a --to flag as a backtest reads its to: a date means
// through that day (its last second), anything else the time given, so
// `data export --to D`, `data fetch --to D` and `backtest --to D` all
// include day D's bars.
func toDayEnd(name, v string) (time.Time, error) {
	t, err := timeFlag(name, v)
	if err != nil || v == "" {
		return t, err
	}
	if _, err := time.Parse(time.DateOnly, strings.TrimSpace(v)); err == nil {
		t = t.Add(24*time.Hour - time.Second)
	}
	return t, nil
}

// maxTickPlaces bounds the decimals a series' tick is read to.
const maxTickPlaces = 12

// tickPlaces is the decimals of a price: the fewest d (to maxTickPlaces)
// for which p is within a relative 1e-12 of a multiple of 10^-d, so a
// price that an adjustment left a float's rounding away from its tick
// (464.21099999999996) counts at its tick (3).
func tickPlaces(p float64) int {
	if p == 0 || math.IsNaN(p) || math.IsInf(p, 0) {
		return 0
	}
	for d := 0; d < maxTickPlaces; d++ {
		s := math.Pow10(d)
		if math.Abs(math.Round(p*s)/s-p) <= 1e-12*math.Abs(p) {
			return d
		}
	}
	return maxTickPlaces
}

// onTick is b with its prices rounded to the series' tick: the most
// decimals any of its prices has (tickPlaces). Prices already on it are
// unchanged; adjusted prices (Yahoo's, close times a factor) come out as
// the decimals they stand for instead of a float's rounding of them.
func onTick(b strategy.Bars) strategy.Bars {
	places := 0
	for _, col := range [][]float64{b.Open, b.High, b.Low, b.Close} {
		for _, p := range col {
			places = max(places, tickPlaces(p))
		}
	}
	s := math.Pow10(places)
	round := func(col []float64) []float64 {
		out := make([]float64, len(col))
		for i, p := range col {
			out[i] = p
			if !math.IsNaN(p) && !math.IsInf(p, 0) {
				out[i] = math.Round(p*s) / s
			}
		}
		return out
	}
	b.Open, b.High, b.Low, b.Close = round(b.Open), round(b.High), round(b.Low), round(b.Close)
	return b
}
