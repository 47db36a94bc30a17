// Package strategy holds the vocabulary shared by the strategy runtime, the
// history store, the backtest engine and the research tools: bars as
// columnar slices, granularities and their annualisation, and the intents a
// strategy expresses (target exposure or signed quantity).
//
// Its subpackages do the work: the Starlark runtime and indicator catalog,
// the worker processes that alone execute strategy code, the history store,
// the backtest engine, sweeps, walk-forward and the data service. This
// package itself holds plain types only: it never executes strategy code,
// touches files or imports a subpackage.
package strategy

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Bars is a bar series in columnar form. All slices have the same length;
// Time is unix seconds (UTC), strictly increasing.
type Bars struct {
	Series string // SYMBOL@GRANULARITY, when known
	Time   []int64
	Open   []float64
	High   []float64
	Low    []float64
	Close  []float64
	Volume []float64
}

// Len is the number of bars.
func (b *Bars) Len() int { return len(b.Time) }

// Column is the float column name names (open, high, low, close, volume),
// the bars' own slice; ok is false for any other name.
func (b *Bars) Column(name string) (col []float64, ok bool) {
	switch name {
	case "open":
		return b.Open, true
	case "high":
		return b.High, true
	case "low":
		return b.Low, true
	case "close":
		return b.Close, true
	case "volume":
		return b.Volume, true
	}
	return nil, false
}

// Slice returns bars [from, to) sharing the backing arrays.
func (b *Bars) Slice(from, to int) Bars {
	return Bars{
		Series: b.Series,
		Time:   b.Time[from:to], Open: b.Open[from:to], High: b.High[from:to],
		Low: b.Low[from:to], Close: b.Close[from:to], Volume: b.Volume[from:to],
	}
}

// Granularity is a bar length: one of 1m 5m 15m 1h 4h 1d.
type Granularity string

// Granularities lists the valid values in increasing length.
var Granularities = []Granularity{"1m", "5m", "15m", "1h", "4h", "1d"}

// Duration is the length of one bar.
func (g Granularity) Duration() time.Duration {
	switch g {
	case "1m":
		return time.Minute
	case "5m":
		return 5 * time.Minute
	case "15m":
		return 15 * time.Minute
	case "1h":
		return time.Hour
	case "4h":
		return 4 * time.Hour
	case "1d":
		return 24 * time.Hour
	}
	return 0
}

// PeriodsPerYear is the number of bars in a year on a 24/7 calendar
// (1h → 8760, 1d → 365, 1m → 525600), used to annualise sharpe and sortino.
func (g Granularity) PeriodsPerYear() float64 {
	d := g.Duration()
	if d == 0 {
		return 0
	}
	return float64(365*24*time.Hour) / float64(d)
}

// Valid reports whether g is one of Granularities.
func (g Granularity) Valid() bool { return g.Duration() != 0 }

// ParseSeries splits a series name SYMBOL@GRANULARITY. It checks the shape
// only; callers validate the whole name with project.ValidName first.
func ParseSeries(name string) (symbol string, g Granularity, err error) {
	sym, gran, ok := strings.Cut(name, "@")
	if !ok || sym == "" {
		return "", "", fmt.Errorf("series %q: a series is named SYMBOL@GRANULARITY, e.g. BTC-USD@1h", name)
	}
	g = Granularity(gran)
	if !g.Valid() {
		return "", "", fmt.Errorf("series %q: granularity %q is not one of 1m, 5m, 15m, 1h, 4h, 1d", name, gran)
	}
	return sym, g, nil
}

// IntentKind says what an Intent asks for.
type IntentKind uint8

// Intent kinds. None keeps the current position.
const (
	None   IntentKind = iota
	Target            // Value is the target exposure as a fraction of equity; negative is short
	Qty               // Value is a signed quantity to trade (buy > 0, sell < 0)
)

// Intent is what a strategy decides at a bar's close. It fills at the next
// bar's open under the default fill model.
type Intent struct {
	Kind  IntentKind
	Value float64
	// Exits are the protective orders the position it opens (or keeps)
	// rests with; zero is none.
	Exits Exits
}

// Exits are the protective orders a strategy attaches to its position, as
// fractions of the position's average entry price: a stop-loss on the
// losing side (below a long's entry, above a short's), a take-profit on
// the winning side, and a trailing stop that follows the best price since
// the entry by that fraction of the best price. StopLimit, with a
// stop-loss, makes the stop-loss a stop-limit: once the stop trades it
// rests as a limit at StopLimit from the entry (at or beyond the stop),
// so a gap past the limit leaves the position open. A take-profit with a
// stop-loss or trailing stop is a bracket, an OCO: the first to fill
// cancels the others. 0 is none.
type Exits struct {
	StopLoss, TakeProfit, TrailingStop float64
	StopLimit                          float64
}

// Any reports whether e asks for any protective order.
func (e Exits) Any() bool {
	return e.StopLoss != 0 || e.TakeProfit != 0 || e.TrailingStop != 0 || e.StopLimit != 0
}

// Validate says which exit is out of range: each is 0 (none) or a
// fraction of the entry price above 0; a stop-loss and a trailing stop
// below 1 (a stop at or below zero could never trade).
func (e Exits) Validate() error {
	for _, x := range [...]struct {
		name string
		v    float64
		max  float64
	}{{"stop_loss", e.StopLoss, 1}, {"take_profit", e.TakeProfit, math.MaxFloat64}, {"trailing_stop", e.TrailingStop, 1}, {"stop_limit", e.StopLimit, 1}} {
		if !(x.v == 0 || (x.v > 0 && x.v < x.max)) {
			if x.name == "trailing_stop" {
				return fmt.Errorf("trailing_stop %v must be a fraction of the best price since entry above 0 and below 1 (0.03 is 3 %%), or 0 for none", x.v)
			}
			if x.max == 1 {
				return fmt.Errorf("%s %v must be a fraction of the entry price above 0 and below 1 (0.02 is 2 %%), or 0 for none", x.name, x.v)
			}
			return fmt.Errorf("%s %v must be a fraction of the entry price above 0 (0.04 is 4 %%), or 0 for none", x.name, x.v)
		}
	}
	switch {
	case e.StopLimit != 0 && e.StopLoss == 0:
		return fmt.Errorf("stop_limit %v needs stop_loss: it is the limit the stop-loss rests at once its stop trades", e.StopLimit)
	case e.StopLimit != 0 && e.StopLimit < e.StopLoss:
		return fmt.Errorf("stop_limit %v is inside stop_loss %v: the limit must be at or beyond the stop (stop_limit >= stop_loss), or it would fill at once", e.StopLimit, e.StopLoss)
	}
	return nil
}

// Account is what an event-driven strategy sees of its backtest account at
// a bar's close: the signed position quantity (short < 0), the cash, and the
// equity (cash plus position marked at that close).
type Account struct {
	Position float64
	Cash     float64
	Equity   float64
}

// Signals is the vectorised output of a signals(bars) entry point: per bar,
// whether to go long, go short, or exit, and the size (fraction of equity).
// Nil slices mean "never". Size holds one value per bar, or a single value
// that applies to every bar (a constant size costs no per-bar array); nil
// means 1.0 everywhere.
type Signals struct {
	Long  []bool
	Short []bool
	Exit  []bool
	Size  []float64
	// Exits rest with every position the signals open.
	Exits Exits
}

// Targets turns signals into one target exposure per bar, NaN meaning "no
// change", by TargetAt's rule.
func (s Signals) Targets(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = s.TargetAt(i)
	}
	return out
}

// From returns the signals of bars [from, n): every per-bar slice starts
// at from; a constant size stays as it is.
func (s Signals) From(from int) Signals {
	cut := func(v []bool) []bool {
		if v == nil {
			return nil
		}
		return v[min(from, len(v)):]
	}
	out := Signals{Long: cut(s.Long), Short: cut(s.Short), Exit: cut(s.Exit), Size: s.Size, Exits: s.Exits}
	if len(s.Size) > 1 {
		out.Size = s.Size[min(from, len(s.Size)):]
	}
	return out
}

// TargetAt is bar i's target exposure (NaN: no change): exit wins (0);
// long alone gives +size, short alone -size; long and short together, or
// no signal, give NaN. A missing or short column is false past its end; a
// constant size (one value) holds for every bar, a per-bar size is 1
// past its end, and no size is 1. The engine reads vectorised decisions
// through it, bar by bar.
func (s Signals) TargetAt(i int) float64 {
	at := func(v []bool) bool { return i < len(v) && v[i] }
	size := 1.0
	switch {
	case len(s.Size) == 1:
		size = s.Size[0]
	case len(s.Size) > 1 && i < len(s.Size):
		size = s.Size[i]
	}
	long, short := at(s.Long), at(s.Short)
	switch {
	case at(s.Exit):
		return 0
	case long && !short:
		return size
	case short && !long:
		return -size
	}
	return math.NaN()
}
