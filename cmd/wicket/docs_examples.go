package main

import (
	"context"
	"fmt"
	"os"

	"github.com/shopspring/decimal"

	"wicket/strategy/templates"
)

// docs writes the MCP tool reference: it prepares a strategy and a resting
// order so that every tool has something real to show, then calls each
// tool once.
func (d *demo) docs(ctx context.Context, s *mcpSession, path string) error {
	src, err := templates.Source("sma_cross")
	if err != nil {
		return err
	}
	name := "demo_cross"
	file, err := d.proj.StrategyPath(name)
	if err != nil {
		return err
	}
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		return err
	}
	snap, err := s.call(ctx, "node_snapshot", map[string]any{"venue": "paper", "events": 0})
	if err != nil || snap.isError {
		return fmt.Errorf("read the node: %v %s", err, snap.text)
	}
	venue, _ := asList(snap.obj["venues"])[0].(map[string]any)
	marks, _ := venue["marks"].(map[string]any)
	mark, err := decimal.NewFromString(fmt.Sprint(marks["BTC-USD"]))
	if err != nil {
		return fmt.Errorf("no BTC-USD mark: %v", err)
	}
	limit := mark.Mul(decimal.RequireFromString("0.95")).Round(2)
	resting := map[string]any{"venue": "paper", "symbol": "BTC-USD", "side": "buy", "type": "limit",
		"quantity": "0.01", "price": limit.String(), "reason": "docs: a resting order to show cancel and modify"}
	prev, err := s.call(ctx, "submit_order", resting)
	if err != nil || prev.isError {
		return fmt.Errorf("preview the resting order: %v %s", err, prev.text)
	}
	coid, _ := prev.obj["client_order_id"].(string)
	done, err := s.call(ctx, "submit_order", with(resting, map[string]any{"confirm": true, "preview_token": prev.obj["preview_token"]}))
	if err != nil || done.obj["status"] != "accepted" {
		return fmt.Errorf("place the resting order: %v %s", err, done.text)
	}
	examples := map[string]map[string]any{
		"list_templates":    {},
		"list_indicators":   {"category": "volatility"},
		"validate_strategy": {"name": name},
		"discover_params":   {"name": name},
		"list_series":       {},
		"list_strategies":   {},
		"run_backtest":      {"name": name, "series": "BTC-USD@1d", "params": map[string]any{"fast": 10, "slow": 40}, "trades_limit": 2},
		"run_sweep":         {"name": name, "series": "BTC-USD@1d", "grid": map[string]any{"fast": []int{5, 10, 20}, "slow": map[string]any{"from": 40, "to": 60, "step": 20}}, "top": 2},
		"run_optimize":      {"name": name, "series": "BTC-USD@1d", "grid": map[string]any{"fast": map[string]any{"from": 5, "to": 30, "step": 5}, "slow": map[string]any{"from": 40, "to": 100, "step": 20}}, "trials": 6, "top": 2},
		"run_walk_forward":  {"name": name, "series": "BTC-USD@1d", "grid": map[string]any{"fast": []int{5, 10}, "slow": []int{40, 60}}, "windows": 3},
		"research_history":  {"strategy": name, "limit": 2},
		"node_snapshot":     {"venue": "paper", "events": 2},
		"submit_order":      {"venue": "paper", "symbol": "ETH-USD", "side": "buy", "type": "market", "quantity": "0.1", "reason": "docs example"},
		"cancel_order":      {"venue": "paper", "client_order_id": coid, "reason": "docs example"},
		"modify":            {"venue": "paper", "client_order_id": coid, "price": limit.Sub(decimal.NewFromInt(100)).String()},
		"flatten":           {"venue": "paper", "symbol": "BTC-USD"},
		"market_exit":       {"venue": "paper"},
		"mass_cancel":       {"venue": "paper", "symbol": "BTC-USD", "side": "buy"},
		"set_trading_state": {"state": "reduce_only", "reason": "docs example"},
	}
	// research_history lists before the run_* tools: give it a trial to show.
	if r, err := s.call(ctx, "run_backtest", examples["run_backtest"]); err != nil || r.isError {
		return fmt.Errorf("a backtest for research_history's example: %v %s", err, r.text)
	}
	if err := d.writeToolDocs(ctx, s, path, examples); err != nil {
		return err
	}
	fmt.Fprintf(d.out, "wrote %s\n", path)
	return nil
}
