package agent_test

import (
	"strings"
	"testing"
)

// TestBacktestAllowance: run_backtest's allowance argument runs the
// backtest under a deployment's limits; a tripped breaker is named in the
// answer, and a bad limit is refused naming the limits there are.
func TestBacktestAllowance(t *testing.T) {
	proj := seededProject(t)
	s := startMCP(t, nil, proj)
	rep := object(t, s.call(t, "run_backtest", `{"name":"sma_cross","series":"BTC-USD@1h","from":"2024-01-01","to":"2024-06-30","allowance":{"max_drawdown_pct":"1","max_order_notional":5000}}`))
	b, _ := rep["breaker"].(map[string]any)
	if b == nil || b["name"] != "max_drawdown_pct" {
		t.Fatalf("breaker %v, want max_drawdown_pct (report keys %v)", rep["breaker"], keys(rep))
	}
	settings, _ := rep["settings"].(map[string]any)
	if a, _ := settings["allowance"].(map[string]any); a["max_order_notional"] != "5000" || a["max_drawdown_pct"] != "1" {
		t.Errorf("settings.allowance %v, want the limits as decimal strings", settings["allowance"])
	}
	plain := object(t, s.call(t, "run_backtest", `{"name":"sma_cross","series":"BTC-USD@1h","from":"2024-01-01","to":"2024-06-30"}`))
	if _, ok := plain["breaker"]; ok {
		t.Errorf("a run without an allowance has a breaker: %v", plain["breaker"])
	}
	bad := s.call(t, "run_backtest", `{"name":"sma_cross","series":"BTC-USD@1h","allowance":{"max_loss":"5"}}`)
	if !bad.IsError || !strings.Contains(text(bad), `no allowance \"max_loss\"; names: max_order_notional`) && !strings.Contains(text(bad), `no allowance "max_loss"; names: max_order_notional`) {
		t.Errorf("a bad limit: %.300s", text(bad))
	}
}
