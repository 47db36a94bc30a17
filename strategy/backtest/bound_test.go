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

// minuteRise is n one-minute bars rising about 2.3 % in all, with a dip so
// the run has a drawdown.
func minuteRise(n int) strategy.Bars {
	b := strategy.Bars{Series: "M@1m", Time: make([]int64, n), Open: make([]float64, n), High: make([]float64, n),
		Low: make([]float64, n), Close: make([]float64, n), Volume: make([]float64, n)}
	p := 100.0
	for i := range n {
		o := p
		p *= 1.0014
		if i == n/2 {
			p *= 0.995
		}
		b.Time[i] = t0.Add(time.Duration(i) * time.Minute).Unix()
		b.Open[i], b.Close[i] = o, p
		b.High[i], b.Low[i] = max(o, p), min(o, p)
		b.Volume[i] = 100
	}
	return b
}

// TestAnnualisedFiguresBounded (issue 44 item 11): a +2.3 % run over 17
// one-minute bars annualises to a CAGR and Calmar near 1e303; the report
// bounds them, says so, and still encodes (JSON and text).
func TestAnnualisedFiguresBounded(t *testing.T) {
	bars := minuteRise(17)
	targets := make([]float64, bars.Len())
	for i := range targets {
		targets[i] = 1
	}
	cfg := DefaultConfig()
	cfg.FeeBps, cfg.SlippageBps = 0, 0
	r, err := Run(context.Background(), bars, cfg, Decisions{Targets: targets})
	if err != nil {
		t.Fatal(err)
	}
	m := r.Metrics
	if m.TotalReturn < 0.015 || m.TotalReturn > 0.03 || m.CAGR < 1e200 {
		t.Fatalf("total return %v, cagr %v: want about 2.3 %% and an absurd cagr", m.TotalReturn, m.CAGR)
	}
	resp, err := Report(r, false)
	if err != nil {
		t.Fatalf("the report failed on a figure: %v", err)
	}
	var doc struct {
		Metrics  map[string]any `json:"metrics"`
		Warnings []string       `json:"warnings"`
	}
	if err := json.Unmarshal(resp.Result, &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"cagr", "calmar"} {
		if c, _ := doc.Metrics[k].(float64); c != AnnualisedBound {
			t.Errorf("%s %v, want the bound %g", k, doc.Metrics[k], AnnualisedBound)
		}
	}
	if !strings.Contains(strings.Join(doc.Warnings, "\n"), "annualised figures bounded") {
		t.Errorf("no warning names the bound: %q", doc.Warnings)
	}
	if strings.Contains(resp.Text, "e+") || !strings.Contains(resp.Text, "annualised figures bounded") {
		t.Errorf("text:\n%s", resp.Text)
	}
}

// TestRatioNeverInfinite: rounding a huge finite figure for a report never
// makes an infinity (x*1e6 overflowed before).
func TestRatioNeverInfinite(t *testing.T) {
	for _, x := range []float64{1e303, -1e303, math.MaxFloat64, 1e20} {
		r := Ratio(x)
		if r == nil || math.IsInf(*r, 0) || *r != x {
			t.Errorf("Ratio(%g) = %v, want %g", x, r, x)
		}
		if _, err := json.Marshal(r); err != nil {
			t.Errorf("Ratio(%g): %v", x, err)
		}
	}
}

// TestTextShowsEveryCost (issue 44 item 19): the text summary shows every
// cost the run charged — funding, borrow, liquidations and capped fills
// beside fees and slippage — and only those.
func TestTextShowsEveryCost(t *testing.T) {
	bars := walk(500, 3)
	targets := crossTargets(bars.Close, 10, 30)
	plain, err := Run(context.Background(), bars, DefaultConfig(), Decisions{Targets: targets})
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	var rates []FundingRate
	for i := 0; i < bars.Len(); i += 8 {
		rates = append(rates, FundingRate{Time: bars.Time[i], Rate: 0.0001})
	}
	cfg.Costs = Costs{Funding: true, FundingRates: rates, BorrowRate: 0.05, Leverage: 2, MaintenanceMargin: 0.005, MaxVolumePct: 50}
	charged, err := Run(context.Background(), bars, cfg, Decisions{Targets: targets})
	if err != nil {
		t.Fatal(err)
	}
	text := func(r *Result) string {
		var b strings.Builder
		if err := r.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	all := []string{"fees paid", "slippage cost", "funding paid", "borrow paid", "liquidations", "volume-capped fills"}
	got := text(charged)
	for _, name := range all {
		if !strings.Contains(got, name) {
			t.Errorf("the summary of a run that charged every cost lacks %q:\n%s", name, got)
		}
	}
	if m := charged.Metrics; !strings.Contains(got, "funding paid") || !strings.Contains(got, Money(m.FundingPaid)) {
		t.Errorf("funding paid %s not shown:\n%s", Money(m.FundingPaid), got)
	}
	got = text(plain)
	for _, name := range all[2:] {
		if strings.Contains(got, name) {
			t.Errorf("the summary of a run without %s shows it:\n%s", name, got)
		}
	}
}
