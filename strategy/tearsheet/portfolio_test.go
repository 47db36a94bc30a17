package tearsheet

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"wicket/strategy"
	"wicket/strategy/backtest"
	"wicket/strategy/portfolio"
)

// portfolioFixture is two years of three daily random walks traded long
// and short on swinging weights, rebalanced weekly, its per-bar record
// kept.
func portfolioFixture(t testing.TB) *portfolio.Result {
	t.Helper()
	var assets []strategy.Bars
	for k := range 3 {
		b := bars(2*365, "1d", uint64(11+k))
		b.Series = fmt.Sprintf("%c-USD@1d", 'A'+k)
		assets = append(assets, b)
	}
	n := assets[0].Len()
	w := make([][]float64, len(assets))
	for a := range w {
		w[a] = make([]float64, n)
		for i := range n {
			w[a][i] = 0.3 * math.Sin(float64(i)/(15+5*float64(a))+float64(a))
		}
	}
	cfg := backtest.DefaultConfig()
	cfg.FeeBps, cfg.SlippageBps = 10, 5
	cfg.Costs.VolumeCap = backtest.VolumeOff
	reb, err := portfolio.ParseRebalance("weekly")
	if err != nil {
		t.Fatal(err)
	}
	r, err := portfolio.RunFrom(context.Background(), assets, w, reb, cfg, portfolio.Options{RecordHoldings: true})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

var portfolioCharts = []string{"equity", "drawdown", "weights", "contribution", "turnover"}

// TestRenderPortfolio: a portfolio's page draws every chart with data
// in it (the curve's points, an area per asset, two bars per asset, the
// turnover's points), names the assets, and refuses a run that kept no
// per-bar record.
func TestRenderPortfolio(t *testing.T) {
	r := portfolioFixture(t)
	html, err := RenderPortfolio(r, "swing.star")
	if err != nil {
		t.Fatal(err)
	}
	page := string(html)
	got := charts(page)
	for _, name := range portfolioCharts {
		if c := got[name]; c[0] == 0 || c[1] == 0 && name != "contribution" {
			t.Errorf("chart %s: missing or without data (%v)", name, c)
		}
	}
	if c := got["weights"][0]; c != 3 {
		t.Errorf("weights: %d areas, want one per asset", c)
	}
	if c := got["contribution"][0]; c != 6 {
		t.Errorf("contribution: %d bars, want two per asset", c)
	}
	if p := got["equity"][1]; p != len(r.Curve.Equity) {
		t.Errorf("equity: %d points for %d bars", p, len(r.Curve.Equity))
	}
	for _, want := range []string{"swing.star on A-USD@1d,B-USD@1d,C-USD@1d", "wicket portfolio tear sheet", "turnover per year", "C-USD@1d after every cost", "per asset: before fees"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	r.Holdings = nil
	if _, err := RenderPortfolio(r, ""); err == nil || !strings.Contains(err.Error(), "RecordHoldings") {
		t.Errorf("a run without its record: %v", err)
	}
}

// TestBrowserRendersPortfolioSheet: the portfolio tear sheet renders in
// headless Chromium with every chart holding data.
func TestBrowserRendersPortfolioSheet(t *testing.T) {
	exe := browser(t)
	html, err := RenderPortfolio(portfolioFixture(t), "swing.star")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := inBrowser(t, exe, html)
	if names := drewData(t, got, "equity", "drawdown", "turnover"); !slices.Equal(names, portfolioCharts) {
		t.Errorf("charts %v, want %v", names, portfolioCharts)
	}
	if eq := got[0]; len(eq.Bench) != 1 || eq.Bench[0] <= 0 {
		t.Errorf("the equal-parts holding is not drawn: %+v", eq)
	}
}

// BenchmarkPortfolioSheet is what a portfolio backtest pays for its tear
// sheet: the fixture's run without its per-bar record, with it, and with
// it and the page rendered.
func BenchmarkPortfolioSheet(b *testing.B) {
	var assets []strategy.Bars
	for k := range 3 {
		a := bars(10*365, "1d", uint64(11+k))
		a.Series = fmt.Sprintf("%c-USD@1d", 'A'+k)
		assets = append(assets, a)
	}
	n := assets[0].Len()
	w := make([][]float64, len(assets))
	for a := range w {
		w[a] = make([]float64, n)
		for i := range n {
			w[a][i] = 0.3 * math.Sin(float64(i)/(15+5*float64(a))+float64(a))
		}
	}
	cfg := backtest.DefaultConfig()
	reb, err := portfolio.ParseRebalance("weekly")
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name           string
		record, render bool
	}{{"plain", false, false}, {"record", true, false}, {"record+render", true, true}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r, err := portfolio.RunFrom(context.Background(), assets, w, reb, cfg, portfolio.Options{RecordHoldings: c.record})
				if err != nil {
					b.Fatal(err)
				}
				if c.render {
					if _, err := RenderPortfolio(r, "swing.star"); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
