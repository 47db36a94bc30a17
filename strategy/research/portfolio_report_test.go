package research

import (
	"bytes"
	"testing"
)

// TestPortfolioBacktestReport: a portfolio backtest carries its tear
// sheet when the request asks for one, and only then (the worker keeps
// the per-bar record the page is drawn from for it alone).
func TestPortfolioBacktestReport(t *testing.T) {
	l := newLocal(t, 1)
	ctx := ctxT(t)
	ref := templateRef(t, "momentum_rotation")
	req := BacktestRequest{StrategyRef: ref, Params: map[string]any{"lookback": 30, "k": 1}, From: "2023-01-01"}
	plain, err := l.Backtest(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(plain.HTML) != 0 {
		t.Errorf("a backtest that asked for no report carries a %d-byte page", len(plain.HTML))
	}
	req.Report = true
	sheet, err := l.Backtest(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(sheet.HTML, []byte("<!DOCTYPE html>")) || !bytes.Contains(sheet.HTML, []byte("wicket portfolio tear sheet")) ||
		!bytes.Contains(sheet.HTML, []byte(`data-chart="weights"`)) {
		t.Fatalf("the portfolio's tear sheet: %.300s", sheet.HTML)
	}
	if !bytes.Equal(plain.Result, sheet.Result) {
		t.Errorf("asking for the report changed the result:\n%s\n%s", plain.Result, sheet.Result)
	}
}
