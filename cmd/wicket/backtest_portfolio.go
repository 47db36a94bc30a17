package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"wicket/strategy/backtest"
	"wicket/strategy/script"
	"wicket/strategy/worker"
)

// portfolioFlags are the backtest flags that only a single-series run
// takes: a portfolio strategy's run refuses them rather than ignore them.
var portfolioFlags = []string{"robustness", "benchmark", "mc-paths", "seed", "plot", "report", "allowance"}

// backtestPortfolio backtests a strategy that declares its universe
// (`wicket backtest --local NAME` with no --series) in a local worker,
// and records the run in the research ledger under the universe's series.
func backtestPortfolio(c *cli.Context, local string) error {
	for _, f := range portfolioFlags {
		if c.IsSet(f) {
			return usagef("--%s is for a single series: a backtest without --series runs a portfolio strategy (one that declares a universe); give --series to backtest over one", f)
		}
	}
	params, err := script.ParseAssignments(c.StringSlice("param"))
	if err != nil {
		return usageError{fmt.Errorf("--param: %w", err)}
	}
	p, cfg, err := openProject(c)
	if err != nil {
		return err
	}
	name, source, err := backtestSource(c, p, local)
	if err != nil {
		return err
	}
	costs := costFlags(c)
	req := backtest.Request{
		Source: source, Name: name, Params: params,
		From: c.String("from"), To: c.String("to"),
		Capital:     cmp.Or(costs.Capital, cfg.Research.Capital.String()),
		FeeBps:      cmp.Or(costs.FeeBps, &cfg.Research.FeeBps),
		SlippageBps: cmp.Or(costs.SlippageBps, &cfg.Research.SlippageBps),
		Fill:        c.String("fill"),
		Intrabar:    c.String("intrabar"),
		TradesLimit: c.Int("trades"),
		CostOptions: costs.CostOptions,
		HistoryPath: p.HistoryPath(), IndicatorsDir: p.IndicatorsDir(),
	}
	if _, err := req.Config(backtest.DefaultConfig()); err != nil {
		return usageError{err}
	}
	pool, err := oneWorkerPool(cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	resp, err := pool.Portfolio(c.Context, req)
	if err != nil {
		var we *worker.Error
		if errors.As(err, &we) && we.Kind == worker.KindRequest {
			return usageError{err}
		}
		return backtestError(err)
	}
	var head struct {
		Series string `json:"series"`
	}
	if err := json.Unmarshal(resp.Result, &head); err != nil {
		return fmt.Errorf("backtest: the portfolio report is not JSON: %w", err)
	}
	recordBacktest(c, p, name, source, head.Series, resp.Result)
	if resp.Output != "" {
		fmt.Fprintf(c.App.ErrWriter, "%s printed:\n%s", name, indent(resp.Output))
	}
	if c.Bool("json") {
		_, err := fmt.Fprintf(c.App.Writer, "%s\n", resp.Result)
		return err
	}
	_, err = fmt.Fprint(c.App.Writer, resp.Text)
	return err
}
