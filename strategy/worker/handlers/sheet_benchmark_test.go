package handlers

import (
	"context"
	"strings"
	"testing"

	"wicket/strategy/backtest"
	"wicket/strategy/ta"
)

// TestBacktestSheetBenchmarks: a backtest's tear sheet draws its series
// bought and held beside the equity and, when the robustness figures
// name a benchmark series, that series held too.
func TestBacktestSheetBenchmarks(t *testing.T) {
	ctx := context.Background()
	req := templateRequest(t, "sma_cross", "BTC-USD@1d")
	req.From, req.Report = "2023-01-01", true
	resp, err := Backtest(ctx, req, ta.NewMemo(0))
	if err != nil {
		t.Fatal(err)
	}
	page := string(resp.HTML)
	if !strings.Contains(page, `data-bench="buy &amp; hold BTC-USD@1d"`) || strings.Contains(page, "held\"") {
		t.Errorf("the sheet does not draw BTC-USD@1d held, alone: %d bytes", len(page))
	}
	req.Robustness = &backtest.Robustness{Benchmark: "ETH-USD@1d", Paths: 100}
	if resp, err = Backtest(ctx, req, ta.NewMemo(0)); err != nil {
		t.Fatal(err)
	}
	page = string(resp.HTML)
	for _, want := range []string{`data-bench="buy &amp; hold BTC-USD@1d"`, `data-bench="benchmark ETH-USD@1d held"`, "benchmark ETH-USD@1d held: "} {
		if !strings.Contains(page, want) {
			t.Errorf("the sheet with a benchmark lacks %s", want)
		}
	}
}
