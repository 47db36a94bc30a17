package agent_test

import (
	"strings"
	"testing"
)

// TestPortfolioBacktest: run_backtest without a series runs a portfolio
// strategy over the universe it declares, and the research ledger
// records the run under the universe's series.
func TestPortfolioBacktest(t *testing.T) {
	proj := seededProject(t)
	runWicket(t, nil, "--project", proj, "strategy", "new", "rotation", "--from", "momentum_rotation")
	s := startMCP(t, nil, proj)
	bt := s.call(t, "run_backtest", `{"name":"rotation","params":{"lookback":30,"k":1},"from":"2023-01-01"}`)
	report := object(t, bt)
	metrics, _ := report["metrics"].(map[string]any)
	if metrics == nil || metrics["sharpe"] == nil || report["run_id"] == nil {
		t.Fatalf("portfolio report: %.800s", text(bt))
	}
	if _, isString := metrics["final_equity"].(string); !isString {
		t.Errorf("final_equity is not a decimal string: %v", metrics["final_equity"])
	}
	const universe = "BTC-USD@1d,ETH-USD@1d,SOL-USD@1d"
	if report["series"] != universe || report["rebalance"] != "monthly" {
		t.Errorf("series %v, rebalance %v", report["series"], report["rebalance"])
	}
	if c, _ := report["lookahead_check"].(string); !strings.HasPrefix(c, "passed (") {
		t.Errorf("lookahead_check: %v", report["lookahead_check"])
	}
	hist := text(s.call(t, "research_history", `{"series":"`+universe+`"}`))
	if !strings.Contains(hist, `"rotation"`) || !strings.Contains(hist, report["run_id"].(string)) {
		t.Errorf("research_history does not hold the portfolio run: %.600s", hist)
	}
	// A single-series strategy without a series says what to give.
	if r := s.call(t, "run_backtest", `{"name":"rotation","series":"BTC-USD@1d"}`); !r.IsError || !strings.Contains(text(r), "declares a universe") {
		t.Errorf("a portfolio strategy over one series: %.300s", text(r))
	}
	if r := s.call(t, "run_backtest", `{"source":"def signals(bars):\n    return {\"long\": bars.close > 0}\n"}`); !r.IsError || !strings.Contains(text(r), "declares no universe") {
		t.Errorf("no series, no universe: %.300s", text(r))
	}
}

// TestPortfolioSweep: run_sweep without a series sweeps a portfolio
// strategy's knobs, each combination one portfolio run over its
// universe, and records every combination under the universe's series.
func TestPortfolioSweep(t *testing.T) {
	proj := seededProject(t)
	runWicket(t, nil, "--project", proj, "strategy", "new", "rotation", "--from", "momentum_rotation")
	s := startMCP(t, nil, proj)
	sw := s.call(t, "run_sweep", `{"name":"rotation","grid":{"lookback":[30,60],"k":[1,2]},"from":"2023-01-01"}`)
	if sw.IsError {
		t.Fatalf("run_sweep: %.600s", text(sw))
	}
	res := object(t, sw)
	const universe = "BTC-USD@1d,ETH-USD@1d,SOL-USD@1d"
	if res["series"] != universe || res["combinations"] != float64(4) || res["evaluated"] != float64(4) {
		t.Fatalf("sweep: %.800s", text(sw))
	}
	if c, _ := res["lookahead_check"].(string); !strings.HasPrefix(c, "passed") {
		t.Errorf("lookahead_check: %v", res["lookahead_check"])
	}
	if d, _ := res["deflated_sharpe"].(map[string]any); d == nil || d["trials"] != float64(4) {
		t.Errorf("deflated_sharpe: %v", res["deflated_sharpe"])
	}
	hist := text(s.call(t, "research_history", `{"series":"`+universe+`","limit":50}`))
	if n := strings.Count(hist, `"kind":"sweep"`); n != 4 {
		t.Errorf("research_history holds %d sweep rows, want 4: %.600s", n, hist)
	}
}

// TestPortfolioWalkForward: run_walk_forward without a series walks a
// portfolio strategy forward over its universe's calendar.
func TestPortfolioWalkForward(t *testing.T) {
	proj := seededProject(t)
	runWicket(t, nil, "--project", proj, "strategy", "new", "rotation", "--from", "momentum_rotation")
	s := startMCP(t, nil, proj)
	wf := s.call(t, "run_walk_forward", `{"name":"rotation","grid":{"lookback":[10,20],"k":[1,2]},"from":"2022-01-01","windows":3}`)
	if wf.IsError {
		t.Fatalf("run_walk_forward: %.600s", text(wf))
	}
	res := object(t, wf)
	windows, _ := res["windows"].([]any)
	if res["series"] != "BTC-USD@1d,ETH-USD@1d,SOL-USD@1d" || len(windows) != 3 || res["out_of_sample"] == nil {
		t.Fatalf("walk-forward: %.800s", text(wf))
	}
	if c, _ := res["lookahead_check"].(string); !strings.HasPrefix(c, "passed") {
		t.Errorf("lookahead_check: %v", res["lookahead_check"])
	}
}
