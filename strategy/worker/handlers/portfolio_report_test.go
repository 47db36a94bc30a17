package handlers

import (
	"context"
	"strings"
	"testing"
	"time"

	"wicket/strategy/backtest"
	"wicket/strategy/ta"
	"wicket/strategy/worker"
)

// TestPortfolioReport: a portfolio backtest asked for its report answers
// with the portfolio tear sheet, one not asked answers with none, and a
// sweep's run keeps no per-bar record even when its request carries
// report (its trials pay nothing for the sheet).
func TestPortfolioReport(t *testing.T) {
	ctx := context.Background()
	req := templateRequest(t, "momentum_rotation", "")
	req.From = "2023-01-01"
	resp, err := Portfolio(ctx, req, ta.NewMemo(0))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.HTML) != 0 {
		t.Errorf("a tear sheet of %d bytes not asked for", len(resp.HTML))
	}
	req.Report = true
	if resp, err = Portfolio(ctx, req, ta.NewMemo(0)); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"equity", "weights", "contribution", "turnover"} {
		if !strings.Contains(string(resp.HTML), `data-chart="`+name+`"`) {
			t.Errorf("the tear sheet has no %s chart", name)
		}
	}
	cfg, err := req.Config(backtest.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	res, s, err := portfolioRun(ctx, req, cfg, ta.NewMemo(0), map[string]universe{}, false, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if res.Holdings != nil {
		t.Error("a sweep's run kept the per-bar record")
	}
}

// BenchmarkPortfolioSweepChunk is a portfolio sweep's chunk as a worker
// runs it: momentum_rotation's 12 combinations over the demo universe,
// with report set on the request, which a sweep's trials must ignore
// (the per-bar record stays off, so this is the sweep's speed).
func BenchmarkPortfolioSweepChunk(b *testing.B) {
	req := templateRequest(b, "momentum_rotation", "")
	req.Report = true
	var combos []map[string]any
	for _, lookback := range []int{30, 60, 90, 120} {
		for _, k := range []int{1, 2, 3} {
			combos = append(combos, map[string]any{"lookback": lookback, "k": k})
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := PortfolioSweep(context.Background(), worker.PortfolioSweepChunk{Request: req, Combos: combos, Blocks: 4}, ta.NewMemo(0)); err != nil {
			b.Fatal(err)
		}
	}
}
