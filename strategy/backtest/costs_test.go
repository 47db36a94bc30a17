package backtest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"wicket/strategy"
)

// flatBars are n bars of step from start, every price p and every volume v.
func flatBars(series string, start time.Time, step time.Duration, n int, p, v float64) strategy.Bars {
	b := strategy.Bars{Series: series, Time: make([]int64, n), Open: make([]float64, n), High: make([]float64, n),
		Low: make([]float64, n), Close: make([]float64, n), Volume: make([]float64, n)}
	for i := range n {
		b.Time[i] = start.Add(time.Duration(i) * step).Unix()
		b.Open[i], b.High[i], b.Low[i], b.Close[i], b.Volume[i] = p, p, p, p, v
	}
	return b
}

// qtyAt is a stepper that trades q at bar 0's decision and nothing else.
func qtyAt(q float64) Stepper {
	return stepFunc(func(i int, _ strategy.Account) (strategy.Intent, error) {
		if i == 0 {
			return strategy.Intent{Kind: strategy.Qty, Value: q}, nil
		}
		return strategy.Intent{}, nil
	})
}

// reported is a result's metrics as its JSON writes them.
func reported(t *testing.T, m Metrics) map[string]any {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestFundingWeek: one BTC held through a week of +0.01 % every 8 hours
// at a fixed 50,000. The bars start an hour before the week so the
// decision at bar 0 fills at the week's first open (t0, itself a
// settlement); the settlements at t0 + 8h·k for k = 0..20 fall inside the
// bars (the one at t0 + 168h is past the last bar's span, the one at
// t0 − 8h before the first bar): 21 × 1 × 50,000 × 0.0001 = 105.00, paid
// by the long and received by the short.
func TestFundingWeek(t *testing.T) {
	bars := flatBars("BTC-USD@1h", t0.Add(-time.Hour), time.Hour, 169, 50000, 1000)
	var rates []FundingRate
	for k := -1; k <= 21; k++ {
		rates = append(rates, FundingRate{Time: t0.Add(time.Duration(k) * 8 * time.Hour).Unix(), Rate: 0.0001})
	}
	for _, c := range []struct {
		name  string
		qty   float64
		paid  string
		final string
	}{{"short receives", -1, "-105.00", "10105.00"}, {"long pays", 1, "105.00", "9895.00"}} {
		t.Run(c.name, func(t *testing.T) {
			cfg := cfgWith(10000, 0, 0)
			cfg.Costs = Costs{Funding: true, FundingRates: rates}
			r, err := Run(context.Background(), bars, cfg, Decisions{Stepper: qtyAt(c.qty)})
			if err != nil {
				t.Fatal(err)
			}
			checkMoney(t, "funding_paid", r.Metrics.FundingPaid, c.paid)
			checkMoney(t, "final_equity", r.Metrics.FinalEquity, c.final)
			if got := reported(t, r.Metrics)["funding_paid"]; got != c.paid {
				t.Errorf("reported funding_paid %v, want %s", got, c.paid)
			}
			if p := r.OpenPosition; p == nil || Money(p.PnL) != Money(-r.Metrics.FundingPaid) {
				t.Errorf("open position %+v: its pnl should be net of the funding", p)
			}
			ev, err := Evaluate(context.Background(), bars, cfg, Decisions{Stepper: qtyAt(c.qty)}, &Scratch{})
			if err != nil {
				t.Fatal(err)
			}
			if ev.Metrics.FundingPaid != r.Metrics.FundingPaid || ev.Metrics.FinalEquity != r.Metrics.FinalEquity {
				t.Errorf("Evaluate funding %v equity %v, Run %v %v", ev.Metrics.FundingPaid, ev.Metrics.FinalEquity, r.Metrics.FundingPaid, r.Metrics.FinalEquity)
			}
		})
	}
}

// TestBorrow: a short of 1 at 100 on daily bars at 36.5 % a year pays
// 0.1 a day; filled at bar 1's open and held at the closes of bars 1..9,
// it pays 9 days: 0.90. A long pays nothing.
func TestBorrow(t *testing.T) {
	bars := flatBars("X-USD@1d", t0, 24*time.Hour, 10, 100, 1000)
	cfg := cfgWith(10000, 0, 0)
	cfg.Costs = Costs{BorrowRate: 0.365}
	for _, c := range []struct {
		qty  float64
		paid string
	}{{-1, "0.90"}, {1, "0.00"}} {
		r, err := Run(context.Background(), bars, cfg, Decisions{Stepper: qtyAt(c.qty)})
		if err != nil {
			t.Fatal(err)
		}
		checkMoney(t, "borrow_paid", r.Metrics.BorrowPaid, c.paid)
		if got := reported(t, r.Metrics)["borrow_paid"]; got != c.paid {
			t.Errorf("reported borrow_paid %v, want %s", got, c.paid)
		}
	}
}

// TestLiquidation checks the documented liquidation price and bar: 10,000
// of capital, no fee, the whole equity in one position entered at bar 1's
// open of 100 (100 units).
//   - long, leverage 10, maintenance 0.5 % on the notional at the
//     liquidation price: 100 × 0.9 / 0.995 = 90.4522613…; bar 2's low of
//     91 misses it, bar 3's low of 90 reaches it: the trade exits there on
//     bar 3 and loses the margin, 100 × 100 / 10 = 1,000.
//   - short, leverage 5, maintenance 1 %: liquidation at
//     100 × 1.2 / 1.01 = 118.81…; bar 3 gaps up to open at 125, so it
//     fills at the open, and still loses only the margin, 2,000.
//   - short, leverage 10, maintenance 0.5 %: liquidation at
//     100 × 1.1 / 1.005 = 109.4527…, where the margin on the entry
//     notional would give 109.5: bar 3's high of 109.48 reaches the
//     first and not the second.
func TestLiquidation(t *testing.T) {
	for _, c := range []struct {
		name      string
		target    float64
		lev, mm   float64
		bar3      [4]float64
		exitPrice float64
		pnl       string
	}{
		{"long at the price", 1, 10, 0.005, [4]float64{95, 96, 90, 92}, 90 / 0.995, "-1000.00"},
		{"short through a gap", -1, 5, 0.01, [4]float64{125, 130, 118, 126}, 125, "-2000.00"},
		{"short at the current notional's margin", -1, 10, 0.005, [4]float64{105, 109.48, 104, 106}, 110 / 1.005, "-1000.00"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b3 := c.bar3
			bars := ohlc(100, 100, 100, 100, 100, 101, 99, 100, 100, 109, 91, 95, b3[0], b3[1], b3[2], b3[3], 100, 100, 100, 100)
			cfg := cfgWith(10000, 0, 0)
			cfg.Costs = Costs{Leverage: c.lev, MaintenanceMargin: c.mm}
			r, err := Run(context.Background(), bars, cfg, Decisions{Targets: []float64{c.target, nan(), nan(), nan(), nan()}})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.AllTrades) != 1 {
				t.Fatalf("%d trades, want the one liquidated: %+v", len(r.AllTrades), r.AllTrades)
			}
			tr := r.AllTrades[0]
			if tr.Exit != "liquidation" || tr.ExitBar != 3 {
				t.Errorf("exit %q at bar %d, want liquidation at bar 3", tr.Exit, tr.ExitBar)
			}
			checkFloat(t, "exit price", tr.ExitPrice, c.exitPrice)
			checkMoney(t, "pnl", tr.PnL, c.pnl)
			checkMoney(t, "final_equity", r.Metrics.FinalEquity, Money(10000+tr.PnL))
			if r.Metrics.Liquidations != 1 || reported(t, r.Metrics)["liquidations"] != 1.0 {
				t.Errorf("liquidations %d, want 1", r.Metrics.Liquidations)
			}
			if !hasWarning(r, "liquidated 1 times") {
				t.Errorf("warnings %q", r.Warnings)
			}
			// The same run with a price that stays inside: no liquidation,
			// and the count is still reported (as 0).
			inside := ohlc(100, 100, 100, 100, 100, 101, 99, 100, 100, 109, 91, 95, 100, 101, 99, 100, 100, 100, 100, 100)
			r, err = Run(context.Background(), inside, cfg, Decisions{Targets: []float64{c.target, nan(), nan(), nan(), nan()}})
			if err != nil {
				t.Fatal(err)
			}
			if r.Metrics.Liquidations != 0 || reported(t, r.Metrics)["liquidations"] != 0.0 {
				t.Errorf("liquidations %d inside the margin", r.Metrics.Liquidations)
			}
		})
	}
}

// TestVolumeCap: a target of the whole 10,000 at 100 is 100 units; bars
// trade 200 and the cap is 25 %, 50 a bar. Carried, bar 1 fills 50 and
// bar 2 the other 50; dropped, the position stays at 50. One fill was
// capped either way, and the result warns.
func TestVolumeCap(t *testing.T) {
	bars := flatBars("X-USD@1h", t0, time.Hour, 6, 100, 200)
	for _, c := range []struct {
		mode VolumeCap
		pos  float64
		word string
	}{{VolumeCarry, 100, "carried"}, {VolumeDrop, 50, "dropped"}} {
		for _, fill := range []Fill{FillNextOpen, FillClose} {
			cfg := cfgWith(10000, 0, 0)
			cfg.Fill = fill
			cfg.Costs = Costs{MaxVolumePct: 25, VolumeCap: c.mode}
			r, err := Run(context.Background(), bars, cfg, Decisions{Targets: []float64{1, 1, 1, 1, 1, 1}})
			if err != nil {
				t.Fatal(err)
			}
			p := r.OpenPosition
			if p == nil || !near(p.Quantity, c.pos) {
				t.Errorf("%s %s: position %+v, want %v", c.mode, fill, p, c.pos)
			}
			if r.Metrics.VolumeCappedFills != 1 || reported(t, r.Metrics)["volume_capped_fills"] != 1.0 {
				t.Errorf("%s %s: volume_capped_fills %d, want 1", c.mode, fill, r.Metrics.VolumeCappedFills)
			}
			if !hasWarning(r, "volume cap: 1 fills were capped at 25% of their bar's volume and the rest "+c.word) {
				t.Errorf("%s %s: warnings %q", c.mode, fill, r.Warnings)
			}
		}
	}
	// A capped rest fills over as many bars as it takes: 100 units at 10
	// a bar fill by the tenth bar after the decision.
	slow := flatBars("X-USD@1h", t0, time.Hour, 12, 100, 40)
	cfg := cfgWith(10000, 0, 0)
	cfg.Costs = Costs{MaxVolumePct: 25}
	r, err := Run(context.Background(), slow, cfg, Decisions{Targets: []float64{1, nan(), nan(), nan(), nan(), nan(), nan(), nan(), nan(), nan(), nan(), nan()}})
	if err != nil {
		t.Fatal(err)
	}
	if p := r.OpenPosition; p == nil || !near(p.Quantity, 100) || r.Metrics.VolumeCappedFills != 9 {
		t.Errorf("position %+v after %d capped fills, want 100 after 9", p, r.Metrics.VolumeCappedFills)
	}
}

// TestNoCostsReportsAsBefore: a run without the costs reports none of
// their metrics (every existing golden stays as it was).
func TestNoCostsReportsAsBefore(t *testing.T) {
	bars := flatBars("X-USD@1h", t0, time.Hour, 5, 100, 200)
	r, err := Run(context.Background(), bars, cfgWith(10000, 10, 5), Decisions{Targets: []float64{1, nan(), nan(), 0, nan()}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(r)
	for _, k := range []string{"funding_paid", "borrow_paid", "liquidations", "volume_capped_fills", `"costs"`} {
		if strings.Contains(string(b), k) {
			t.Errorf("a run without costs reports %s: %s", k, b)
		}
	}
}

// TestCostOptions: the request form checks its values and says what to do.
func TestCostOptions(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	c, err := CostOptions{Leverage: f(10)}.Costs()
	if err != nil || c.MaintenanceMargin != DefaultMaintenanceMargin {
		t.Errorf("leverage alone: %+v %v, want the default maintenance margin", c, err)
	}
	// The participation cap is on unless turned off in so many words.
	for _, d := range []struct {
		o    CostOptions
		pct  float64
		mode VolumeCap
	}{
		{CostOptions{}, DefaultMaxVolumePct, VolumeCarry},
		{CostOptions{VolumeCap: "drop"}, DefaultMaxVolumePct, VolumeDrop},
		{CostOptions{MaxVolumePct: f(5)}, 5, VolumeCarry},
		{CostOptions{VolumeCap: "off"}, 0, VolumeOff},
	} {
		c, err := d.o.Costs()
		if err != nil || c.MaxVolumePct != d.pct || c.VolumeCap != d.mode {
			t.Errorf("%+v: %+v %v, want max_volume_pct %v, volume_cap %v", d.o, c, err, d.pct, d.mode)
		}
	}
	if (CostOptions{}).Asked() || (CostOptions{VolumeCap: "off"}).Asked() {
		t.Error("the default cap, or turning it off, counts as an asked-for cost")
	}
	for _, bad := range []struct {
		o    CostOptions
		want string
	}{
		{CostOptions{Leverage: f(0.5)}, "leverage 0.5 must be from 1"},
		{CostOptions{Leverage: f(10), MaintenanceMargin: f(0.2)}, "below 1/leverage"},
		{CostOptions{MaintenanceMargin: f(0.01)}, "needs leverage"},
		{CostOptions{BorrowRate: f(-1)}, "borrow_rate -1"},
		{CostOptions{MaxVolumePct: f(0)}, "max_volume_pct 0"},
		{CostOptions{MaxVolumePct: f(150)}, "max_volume_pct 150"},
		{CostOptions{VolumeCap: "off", MaxVolumePct: f(5)}, "contradict"},
		{CostOptions{MaxVolumePct: f(5), VolumeCap: "keep"}, `volume_cap "keep"`},
	} {
		if _, err := bad.o.Costs(); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%+v: %v, want %q", bad.o, err, bad.want)
		}
	}
}

// BenchmarkEvaluateCosts is BenchmarkEvaluate with every cost on:
// funding every 8 hours, borrow, 3x isolated margin and a volume cap
// (the in-position fast loop is off), bars per second.
func BenchmarkEvaluateCosts(b *testing.B) {
	bars := walk(benchBars, 1)
	cfg := DefaultConfig()
	for i := range bars.Volume {
		bars.Volume[i] = 1e9 // the cap is checked on every fill and never binds
	}
	for t := bars.Time[0]; t <= bars.Time[bars.Len()-1]; t += 8 * 3600 {
		cfg.Costs.FundingRates = append(cfg.Costs.FundingRates, FundingRate{Time: t, Rate: 0.0001})
	}
	cfg.Costs.Funding, cfg.Costs.BorrowRate, cfg.Costs.Leverage, cfg.Costs.MaintenanceMargin, cfg.Costs.MaxVolumePct = true, 0.05, 3, 0.005, 10
	tg := crossTargets(bars.Close, 10, 30)
	var sc Scratch
	for b.Loop() {
		if _, err := Evaluate(context.Background(), bars, cfg, Decisions{Targets: tg}, &sc); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(benchBars*float64(b.N)/b.Elapsed().Seconds(), "bars/s")
}
