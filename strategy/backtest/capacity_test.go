package backtest

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"wicket/strategy"
)

// meanReversion is the fixture: a price that swings between 90
// and 100 every bar, each bar opening at the last close, and a strategy
// that buys every 90 and sells every 100. Every bar trades 1 unit, so
// the first order (9,000 at 90: 100 units) is 100 times its bar's volume.
func meanReversion(n int, vol float64) (strategy.Bars, []float64) {
	b := strategy.Bars{Series: "X-USD@1h", Time: make([]int64, n), Open: make([]float64, n), High: make([]float64, n),
		Low: make([]float64, n), Close: make([]float64, n), Volume: make([]float64, n)}
	tg := make([]float64, n)
	prev := 100.0
	for i := range n {
		c := 90.0
		if i%2 == 1 {
			c = 100
		}
		b.Time[i] = t0.Add(time.Duration(i) * time.Hour).Unix()
		b.Open[i], b.Close[i], b.High[i], b.Low[i], b.Volume[i] = prev, c, max(prev, c), min(prev, c), vol
		tg[i] = 1
		if c == 100 {
			tg[i] = 0
		}
		prev = c
	}
	return b, tg
}

// requestCosts are the costs a request with options o runs under.
func requestCosts(t *testing.T, o CostOptions) Costs {
	t.Helper()
	c, err := o.Costs()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestDefaultCapHundredTimesVolume: the fixture that trades 100x each
// bar's volume compounds 11 % a round trip without a cap (the issue's
// +634,855 %); under the default cap (a request that names none) each
// order fills 10 % of its bar's volume, the rest carried until the next
// decision replaces it, so the result changes, warns, and its settings
// name the cap.
func TestDefaultCapHundredTimesVolume(t *testing.T) {
	bars, tg := meanReversion(200, 1)
	run := func(o CostOptions) *Result {
		cfg := cfgWith(9000, 0, 0)
		cfg.Costs = requestCosts(t, o)
		r, err := Run(context.Background(), bars, cfg, Decisions{Targets: tg})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	off, def := run(CostOptions{VolumeCap: "off"}), run(CostOptions{})
	if !(off.Metrics.FinalEquity > 1000*9000) {
		t.Fatalf("uncapped fixture ends at %v; it should compound past 1000x", off.Metrics.FinalEquity)
	}
	// Capped: each buy fills 0.1 unit at 90 (its rest carried, then
	// replaced by the next bar's decision to sell) and each sell the 0.1
	// at 100, a gain of 1 a round trip: 99 closed and the last bought at
	// bar 199's open, marked at its close of 100.
	if !near(def.Metrics.FinalEquity, 9000+100*0.1*10) || def.Metrics.Trades != 99 {
		t.Errorf("capped fixture ends at %v after %d trades, want %v after 99", def.Metrics.FinalEquity, def.Metrics.Trades, 9000+100*0.1*10)
	}
	if def.Metrics.VolumeCappedFills != 100 {
		t.Errorf("volume_capped_fills %d, want 100 (every buy; a sell of 0.1 fits)", def.Metrics.VolumeCappedFills)
	}
	if !hasWarning(def, "volume cap: 100 fills were capped at 10% of their bar's volume and the rest carried to the next bar (100 orders exceeded the cap; the largest order asked for 101x its bar's volume") {
		t.Errorf("capped warnings %q", def.Warnings)
	}
	if !hasWarning(off, "volume cap off: 199 orders took more than 10% of their bar's volume; the largest order asked for") {
		t.Errorf("uncapped warnings %q", off.Warnings)
	}
	for r, want := range map[*Result]string{def: `"max_volume_pct":10,"volume_cap":"carry"`, off: `"costs":{"volume_cap":"off"}`} {
		js, _ := json.Marshal(r.Settings)
		if !strings.Contains(string(js), want) {
			t.Errorf("settings %s, want %s", js, want)
		}
	}
}

// TestNoVolumeNotCapped: a series with no volume is not capped (it has
// no volume to take a share of): the same run as with the cap off, and
// a warning saying so.
func TestNoVolumeNotCapped(t *testing.T) {
	bars, tg := meanReversion(40, 0)
	cfg := cfgWith(9000, 0, 0)
	cfg.Costs = requestCosts(t, CostOptions{})
	def, err := Run(context.Background(), bars, cfg, Decisions{Targets: tg})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Costs = requestCosts(t, CostOptions{VolumeCap: "off"})
	off, err := Run(context.Background(), bars, cfg, Decisions{Targets: tg})
	if err != nil {
		t.Fatal(err)
	}
	if def.Metrics.FinalEquity != off.Metrics.FinalEquity || def.Metrics.VolumeCappedFills != 0 {
		t.Errorf("no volume: %v (%d capped), uncapped %v", def.Metrics.FinalEquity, def.Metrics.VolumeCappedFills, off.Metrics.FinalEquity)
	}
	if !hasWarning(def, "volume cap: the series has no volume (0 on every bar), so no fill was capped") {
		t.Errorf("warnings %q", def.Warnings)
	}
}

// TestCapKeepsFastLoopFigures: the cap alone no longer turns the
// in-position fast loop off; a run whose cap never binds reports what the
// run without a cap reports, bit for bit, through Evaluate and Run.
func TestCapKeepsFastLoopFigures(t *testing.T) {
	bars := walk(5000, 3)
	for i := range bars.Volume {
		bars.Volume[i] = 1e12
	}
	tg := crossTargets(bars.Close, 5, 20)
	cfg := DefaultConfig()
	plain, err := Run(context.Background(), bars, cfg, Decisions{Targets: tg})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Costs = requestCosts(t, CostOptions{})
	capped, err := Run(context.Background(), bars, cfg, Decisions{Targets: tg})
	if err != nil {
		t.Fatal(err)
	}
	var sc Scratch
	ev, err := Evaluate(context.Background(), bars, cfg, Decisions{Targets: tg}, &sc)
	if err != nil {
		t.Fatal(err)
	}
	if plain.Metrics.FinalEquity != capped.Metrics.FinalEquity || plain.Metrics.Sharpe != capped.Metrics.Sharpe || ev.Metrics.FinalEquity != capped.Metrics.FinalEquity {
		t.Errorf("final equity %v plain, %v capped, %v evaluated", plain.Metrics.FinalEquity, capped.Metrics.FinalEquity, ev.Metrics.FinalEquity)
	}
}

// TestTooGoodNote: the rule's three figures, and a backtest that earns
// the note.
func TestTooGoodNote(t *testing.T) {
	for _, c := range []struct {
		sharpe float64
		trades int
		dsr    float64
		note   bool
	}{
		{2.9, 5, 0.1, false},   // not high enough to doubt
		{3, 29, 0.99, true},    // too few trades
		{3, 30, 0.94, true},    // the DSR disagrees
		{5, 500, 0.999, false}, // every figure agrees
		{4, 100, math.NaN(), false},
		{4, 10, math.NaN(), true},
	} {
		if got := TooGoodNote(c.sharpe, c.trades, c.dsr); (got != "") != c.note {
			t.Errorf("TooGoodNote(%v, %d, %v) = %q", c.sharpe, c.trades, c.dsr, got)
		}
	}
	bars, tg := meanReversion(40, 1)
	cfg := cfgWith(9000, 0, 0)
	r, err := Run(context.Background(), bars, cfg, Decisions{Targets: tg})
	if err != nil {
		t.Fatal(err)
	}
	if !hasWarning(r, "too good to be true? an annualised Sharpe ratio of") {
		t.Errorf("sharpe %v from %d trades: warnings %q", r.Metrics.Sharpe, r.Metrics.Trades, r.Warnings)
	}
}
