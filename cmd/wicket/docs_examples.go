package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/shopspring/decimal"

	"wicket/strategy"
	"wicket/strategy/history"
	"wicket/strategy/templates"
)

// docsStrategy is the demo strategy the examples research and deploy.
const docsStrategy = "demo_cross"

// writeDocsStrategy puts the demo strategy into the project. It runs
// before the node starts: a node runs deployments only when the project
// has strategies.
func (d *demo) writeDocsStrategy() error {
	src, err := templates.Source("sma_cross")
	if err != nil {
		return err
	}
	file, err := d.proj.StrategyPath(docsStrategy)
	if err != nil {
		return err
	}
	return os.WriteFile(file, []byte(src), 0o644)
}

// docsTapeSeries is the series the docs deployment runs on, and
// docsTapeBars how many bars writeDocsTape gives it.
const (
	docsTapeSeries = "BTC-USD@1m"
	docsTapeBars   = 2000
)

// writeDocsTape gives the docs deployment a warm-up that reaches the
// node's clock (a deployment refuses a series without one, and the demo
// data ends in 2024): BTC-USD's last demo hours, re-timed to one bar a
// minute ending at the last whole minute.
func (d *demo) writeDocsTape(ctx context.Context) error {
	i := slices.IndexFunc(history.DemoSymbols, func(s history.DemoSymbol) bool { return s.Symbol == "BTC-USD" })
	if i < 0 {
		return fmt.Errorf("the demo data has no BTC-USD")
	}
	hourly, _ := history.DemoBars(history.DemoSymbols[i])
	n := min(docsTapeBars, hourly.Len())
	from := hourly.Len() - n
	tape := strategy.Bars{Series: docsTapeSeries,
		Open: hourly.Open[from:], High: hourly.High[from:], Low: hourly.Low[from:], Close: hourly.Close[from:], Volume: hourly.Volume[from:]}
	last := time.Now().UTC().Truncate(time.Minute).Add(-time.Minute)
	for k := range n {
		tape.Time = append(tape.Time, last.Add(time.Duration(k-n+1)*time.Minute).Unix())
	}
	store, err := history.Open(d.proj.HistoryPath())
	if err != nil {
		return err
	}
	defer store.Close()
	return store.Write(ctx, docsTapeSeries, tape, history.WriteOptions{Replace: true, Source: history.SourceDemo})
}

// docsPlan is the research plan research_plan and research_verdict show.
var docsPlan = map[string]any{"plan": "docs-trend", "name": docsStrategy, "series": "BTC-USD@1d", "hypothesis": "crossings follow the trend",
	"criteria": "oos_sharpe>=1, dsr>=0.95, max_drawdown<=0.25, trades>=5", "max_trials": 20, "holdout": "2024-07-01:"}

// docsDeploy is the deployment the deployment tools' examples show.
var docsDeploy = map[string]any{"name": docsStrategy, "series": docsTapeSeries, "venue": "paper", "capital": "1000",
	"params":    map[string]any{"fast": 5, "slow": 20},
	"allowance": map[string]any{"max_order_notional": "250", "max_orders_per_day": 10, "max_daily_loss": "50"}}

// docExamples are the arguments each tool is called with in the
// reference; coid is a resting order's, limit its price, dep a running
// deployment's id.
func docExamples(coid string, limit decimal.Decimal, dep string) map[string]map[string]any {
	name := docsStrategy
	return map[string]map[string]any{
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
		"research_plan":     {"plan": docsPlan["plan"]},
		"research_verdict":  {"plan": docsPlan["plan"]},
		"node_snapshot":     {"venue": "paper", "events": 2},
		"risk_status":       {},
		"submit_order":      {"venue": "paper", "symbol": "ETH-USD", "side": "buy", "type": "market", "quantity": "0.1", "reason": "docs example"},
		"cancel_order":      {"venue": "paper", "client_order_id": coid, "reason": "docs example"},
		"modify":            {"venue": "paper", "client_order_id": coid, "price": limit.Sub(decimal.NewFromInt(100)).String()},
		"flatten":           {"venue": "paper", "symbol": "BTC-USD"},
		"market_exit":       {"venue": "paper"},
		"mass_cancel":       {"venue": "paper", "symbol": "BTC-USD", "side": "buy"},
		"set_trading_state": {"state": "reduce_only", "reason": "docs example"},
		"deploy_strategy":   docsDeploy,
		"stop_deployment":   {"id": dep},
		"deployment_report": {"id": dep},
	}
}

// docs writes the MCP tool reference: it prepares a strategy, a resting
// order and a running paper deployment so that every tool has something
// real to show, then calls each tool once.
func (d *demo) docs(ctx context.Context, s *mcpSession, path string) error {
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
	dep, err := d.docsDeployment(ctx, s)
	if err != nil {
		return err
	}
	examples := docExamples(coid, limit, dep)
	// research_history lists before the run_* tools: give it a trial to show.
	if r, err := s.call(ctx, "run_backtest", examples["run_backtest"]); err != nil || r.isError {
		return fmt.Errorf("a backtest for research_history's example: %v %s", err, r.text)
	}
	// research_plan shows a sealed plan with a sweep under it, which
	// research_verdict judges (before the run_* examples, which the open
	// plan would otherwise count).
	for _, step := range []struct {
		tool string
		args map[string]any
	}{{"research_plan", docsPlan}, {"run_sweep", with(examples["run_sweep"], map[string]any{"plan": docsPlan["plan"]})}} {
		if r, err := s.call(ctx, step.tool, step.args); err != nil || r.isError {
			return fmt.Errorf("%s for research_plan's example: %v %s", step.tool, err, r.text)
		}
	}
	if err := d.writeToolDocs(ctx, s, path, examples); err != nil {
		return err
	}
	fmt.Fprintf(d.out, "wrote %s\n", path)
	return nil
}

// docsDeployment deploys the demo strategy on the paper venue (preview,
// then confirm) and returns the deployment's id.
func (d *demo) docsDeployment(ctx context.Context, s *mcpSession) (string, error) {
	prev, err := s.call(ctx, "deploy_strategy", docsDeploy)
	if err != nil || prev.isError {
		return "", fmt.Errorf("preview the docs deployment: %v %s", err, prev.text)
	}
	done, err := s.call(ctx, "deploy_strategy", with(docsDeploy, map[string]any{"confirm": true, "preview_token": prev.obj["preview_token"]}))
	if err != nil || done.isError || done.obj["status"] != "accepted" {
		return "", fmt.Errorf("deploy the docs deployment: %v %s", err, done.text)
	}
	dep, _ := done.obj["deployment"].(map[string]any)
	id, _ := dep["id"].(string)
	if id == "" {
		return "", fmt.Errorf("the docs deployment has no id: %s", done.text)
	}
	return id, nil
}
