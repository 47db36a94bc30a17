package backtest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/strategy"
)

func allowance(t *testing.T, args ...string) *Allowance {
	t.Helper()
	a, err := ParseAllowance(args)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// positions records the position each Step saw, so a test can tell the
// bars an order filled at (the position changed since the bar before).
type positions struct {
	seen   []float64
	decide func(i int) strategy.Intent
}

func (p *positions) Step(i int, a strategy.Account) (strategy.Intent, error) {
	p.seen = append(p.seen, a.Position)
	return p.decide(i), nil
}

// fills are the bars whose position differs from the bar before.
func (p *positions) fills() []int {
	var out []int
	prev := 0.0
	for i, q := range p.seen {
		if q != prev {
			out = append(out, i)
		}
		prev = q
	}
	return out
}

// TestAllowanceLossBurst: a long position through a burst of losses trips
// max_daily_loss at the bar whose close breaks it; the strategy's later
// exit is not placed, the position is kept, and the result names the
// breaker in its breaker field and a warning.
func TestAllowanceLossBurst(t *testing.T) {
	oc := []float64{}
	for i := 0; i < 20; i++ {
		px := 100.0
		switch {
		case i >= 5 && i < 8:
			px = 100 - 3*float64(i-4) // 97, 94, 91: a burst of losses
		case i >= 8:
			px = 91
		}
		oc = append(oc, px, px)
	}
	bars := mkBars("X@1h", time.Hour, oc...)
	p := &positions{decide: func(i int) strategy.Intent {
		switch i {
		case 1:
			return strategy.Intent{Kind: strategy.Target, Value: 1}
		case 12:
			return strategy.Intent{Kind: strategy.Target, Value: 0} // after the trip: never placed
		}
		return strategy.Intent{}
	}}
	cfg := cfgWith(10000, 0, 0)
	cfg.Allowance = allowance(t, "max_daily_loss=500")
	res, err := Run(context.Background(), bars, cfg, Decisions{Stepper: p})
	if err != nil {
		t.Fatal(err)
	}
	b := res.Breaker
	if b == nil || b.Name != AllowMaxDailyLoss || b.Bar != 6 || !b.Time.Equal(t0.Add(6*time.Hour)) {
		t.Fatalf("breaker %+v, want max_daily_loss at bar 6 (equity 9400 after 9700)", b)
	}
	if got := p.fills(); len(got) != 1 || got[0] != 2 {
		t.Errorf("position changed at bars %v, want only bar 2 (the entry filled at its open); the exit at bar 12 must not fill", got)
	}
	if res.OpenPosition == nil || res.OpenPosition.Quantity != 100 {
		t.Errorf("open position %+v, want the 100 units kept", res.OpenPosition)
	}
	if !hasWarning(res, "breaker max_daily_loss tripped at bar 6") {
		t.Errorf("warnings %q name no breaker", res.Warnings)
	}
	js, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(js), `"breaker":{"name":"max_daily_loss","bar":6`) || !strings.Contains(string(js), `"allowance":{"max_daily_loss":"500"}`) {
		t.Errorf("JSON lacks the breaker or the allowance: %s", js)
	}
}

// TestAllowanceOrdersPerDay: a strategy that trades every bar gets
// max_orders_per_day orders filled, and the next one pauses the run
// before it is placed, vectorised and event-driven alike.
func TestAllowanceOrdersPerDay(t *testing.T) {
	oc := []float64{}
	for range 30 {
		oc = append(oc, 100, 100)
	}
	bars := mkBars("X@1h", time.Hour, oc...)
	flip := func(i int) float64 { return float64((i + 1) % 2) } // 1, 0, 1, 0...
	p := &positions{decide: func(i int) strategy.Intent { return strategy.Intent{Kind: strategy.Target, Value: flip(i)} }}
	cfg := cfgWith(10000, 0, 0)
	cfg.Allowance = allowance(t, "max_orders_per_day=3")
	res, err := Run(context.Background(), bars, cfg, Decisions{Stepper: p})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.fills(); len(got) != 3 || got[0] != 1 || got[2] != 3 {
		t.Errorf("position changed at bars %v, want 1, 2, 3 (three orders filled at their opens)", got)
	}
	if b := res.Breaker; b == nil || b.Name != AllowMaxOrdersPerDay || b.Bar != 3 || !b.Time.Equal(unixTime(bars.Time[3])) {
		t.Fatalf("breaker %+v, want max_orders_per_day at bar 3 (the bar that decided the fourth order, as a deployment names it)", b)
	}
	if res.OpenPosition == nil {
		t.Error("the position the third order opened is not kept")
	}

	targets := make([]float64, bars.Len())
	for i := range targets {
		targets[i] = flip(i)
	}
	vec, err := Run(context.Background(), bars, cfg, Decisions{Targets: targets})
	if err != nil {
		t.Fatal(err)
	}
	if vec.Breaker == nil || *vec.Breaker != *res.Breaker || vec.Metrics.Trades != res.Metrics.Trades {
		t.Errorf("vectorised breaker %+v, trades %d; event-driven %+v, %d", vec.Breaker, vec.Metrics.Trades, res.Breaker, res.Metrics.Trades)
	}
}

// TestAllowanceDrawdown: equity more than max_drawdown_pct below its peak
// pauses the run at that bar's close, before that bar's decision.
func TestAllowanceDrawdown(t *testing.T) {
	closes := []float64{100, 100, 110, 120, 115, 107, 100, 90, 130, 140}
	oc := []float64{}
	for _, c := range closes {
		oc = append(oc, c, c)
	}
	bars := mkBars("X@1d", 24*time.Hour, oc...)
	targets := make([]float64, len(closes))
	for i := range targets {
		targets[i] = nan()
	}
	targets[0] = 1
	targets[6] = 0 // decided at the close that trips: not placed
	cfg := cfgWith(10000, 0, 0)
	cfg.Allowance = allowance(t, "max_drawdown_pct=10")
	res, err := Run(context.Background(), bars, cfg, Decisions{Targets: targets})
	if err != nil {
		t.Fatal(err)
	}
	// The peak is 12000 at bar 3; 10700 at bar 5 is 10.8% below it.
	if b := res.Breaker; b == nil || b.Name != AllowMaxDrawdownPct || b.Bar != 5 {
		t.Fatalf("breaker %+v, want max_drawdown_pct at bar 5", b)
	}
	checkMoney(t, "final equity", res.Metrics.FinalEquity, "14000.00")
}

// TestAllowanceSizing: an order's notional is clipped to
// max_order_notional and the position to max_position_notional; neither
// pauses the run.
func TestAllowanceSizing(t *testing.T) {
	oc := []float64{}
	for range 8 {
		oc = append(oc, 50, 50)
	}
	bars := mkBars("X@1h", time.Hour, oc...)
	buys := &positions{decide: func(i int) strategy.Intent { return strategy.Intent{Kind: strategy.Qty, Value: 30} }}
	cfg := cfgWith(10000, 0, 0)
	cfg.Allowance = allowance(t, "max_order_notional=1000,max_position_notional=2500")
	res, err := Run(context.Background(), bars, cfg, Decisions{Stepper: buys})
	if err != nil {
		t.Fatal(err)
	}
	// Each 30-unit buy (1,500) is clipped to 20 units (1,000); the third
	// stops at 50 units (2,500); later buys trade nothing.
	want := []float64{0, 20, 40, 50, 50, 50, 50, 50}
	for i, q := range buys.seen {
		if !near(q, want[i]) {
			t.Errorf("bar %d: position %v, want %v (all %v)", i, q, want[i], buys.seen)
			break
		}
	}
	if res.Breaker != nil {
		t.Errorf("sizing limits tripped %+v; they clip and never pause", res.Breaker)
	}
}

// TestAllowanceUnchanged: an allowance whose limits are never reached
// (nor the capital's bound: the targets hold half the equity) gives the
// run without one, figure for figure (the breakers' bar-by-bar path
// against the engine's fast loops).
func TestAllowanceUnchanged(t *testing.T) {
	bars := walk(3000, 7)
	targets := make([]float64, bars.Len())
	for i := range targets {
		targets[i] = nan()
		if i%37 == 0 {
			targets[i] = (float64(i%3) - 1) / 2
		}
	}
	cfg := cfgWith(10000, 10, 5)
	plain, err := Run(context.Background(), bars, cfg, Decisions{Targets: targets})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Allowance = allowance(t, "max_order_notional=1e12,max_position_notional=1e12,max_orders_per_day=1000,max_daily_loss=1e12,max_drawdown_pct=99.99")
	with, err := Run(context.Background(), bars, cfg, Decisions{Targets: targets})
	if err != nil {
		t.Fatal(err)
	}
	if with.Breaker != nil || with.Metrics != plain.Metrics || len(with.AllTrades) != len(plain.AllTrades) {
		t.Errorf("with a loose allowance: breaker %+v, metrics %+v; without: %+v", with.Breaker, with.Metrics, plain.Metrics)
	}
}

// TestAllowanceParse: bad assignments are refused with the names to use.
func TestAllowanceParse(t *testing.T) {
	for _, c := range []struct{ arg, want string }{
		{"max_loss=5", "no allowance \"max_loss\""},
		{"max_daily_loss", "is not NAME=VALUE"},
		{"max_daily_loss=-1", "must be above 0"},
		{"max_drawdown_pct=100", "must be below 100"},
		{"max_orders_per_day=2.5", "whole number"},
		{"max_daily_loss=1,max_daily_loss=2", "given twice"},
		{"max_order_notional=lots", "not a decimal"},
	} {
		if _, err := ParseAllowance([]string{c.arg}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.arg, err, c.want)
		}
	}
	if a, err := ParseAllowance(nil); a != nil || err != nil {
		t.Errorf("no assignment: %+v, %v; want no allowance", a, err)
	}
	a := allowance(t, "max_daily_loss=250.5", "max_orders_per_day=4")
	if !a.MaxDailyLoss.Equal(decimal.RequireFromString("250.5")) || a.MaxOrdersPerDay != 4 {
		t.Errorf("parsed %+v", a)
	}
}

// BenchmarkAllowance: a vectorised SMA cross over benchBars bars under a
// loose allowance (every limit checked, none reached), against
// BenchmarkVectorized without one: the cost of the bar-by-bar path the
// breakers need.
func BenchmarkAllowance(b *testing.B) {
	bars := walk(benchBars, 1)
	cfg := DefaultConfig()
	a, err := ParseAllowance([]string{"max_order_notional=1e12,max_position_notional=1e12,max_orders_per_day=1000,max_daily_loss=1e12,max_drawdown_pct=99.99"})
	if err != nil {
		b.Fatal(err)
	}
	cfg.Allowance = a
	for b.Loop() {
		if _, err := Run(context.Background(), bars, cfg, Decisions{Targets: crossTargets(bars.Close, 10, 30)}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(benchBars*float64(b.N)/b.Elapsed().Seconds(), "bars/s")
}

// TestAllowanceTrackingGap: max_tracking_gap reads money or bps of the
// capital, round-trips as its string, refuses 0 and words, and the book
// resolves it against the capital and trips beyond it, either way.
func TestAllowanceTrackingGap(t *testing.T) {
	a, err := ParseAllowance([]string{"max_tracking_gap=150bps"})
	if err != nil || a.MaxTrackingGap == nil || a.MaxTrackingGap.String() != "150bps" {
		t.Fatalf("150bps: %+v %v", a, err)
	}
	lim := a.Caps(decimal.NewFromInt(20000)).Decimal()
	if !lim.HasGap || !lim.Gap.Equal(decimal.NewFromInt(300)) || lim.Drifted(decimal.NewFromInt(-300)) || !lim.Drifted(decimal.NewFromFloat(-300.01)) || !lim.Drifted(decimal.NewFromFloat(300.01)) {
		t.Fatalf("150bps of 20000: %+v", lim)
	}
	b, err := json.Marshal(a)
	if err != nil || !strings.Contains(string(b), `"max_tracking_gap":"150bps"`) {
		t.Fatalf("json %s %v", b, err)
	}
	var back Allowance
	if err := json.Unmarshal(b, &back); err != nil || back.MaxTrackingGap == nil || back.MaxTrackingGap.String() != "150bps" || !back.MaxTrackingGap.Bps {
		t.Fatalf("round trip %+v %v", back, err)
	}
	m, err := ParseAllowance([]string{"max_tracking_gap=250"})
	if err != nil || m.MaxTrackingGap.Bps || !m.Caps(decimal.NewFromInt(20000)).Decimal().Gap.Equal(decimal.NewFromInt(250)) {
		t.Fatalf("250: %+v %v", m, err)
	}
	for _, bad := range []string{"max_tracking_gap=0", "max_tracking_gap=-5bps", "max_tracking_gap=lots"} {
		if _, err := ParseAllowance([]string{bad}); err == nil || !strings.Contains(err.Error(), AllowMaxTrackingGap) {
			t.Errorf("%s: %v", bad, err)
		}
	}
	if lim := (&Allowance{}).Caps(decimal.NewFromInt(1)).Decimal(); lim.Drifted(decimal.NewFromInt(1e9)) {
		t.Error("no bound tripped")
	}
}
