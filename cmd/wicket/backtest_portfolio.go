package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"wicket/strategy/backtest"
	"wicket/strategy/script"
	"wicket/strategy/worker"
)

// portfolioFlags are the backtest flags that only a single-series run
// takes: a portfolio strategy's run refuses them rather than ignore them.
var portfolioFlags = []string{"robustness", "benchmark", "mc-paths", "seed", "plot", "allowance"}

// backtestPortfolio backtests a strategy that declares its universe
// (`wicket backtest --local NAME` with no --series) in a local worker,
// and records the run in the research ledger under the universe's series.
func backtestPortfolio(ctx context.Context, o backtestOptions, stdout, stderr io.Writer) error {
	for _, f := range portfolioFlags {
		if o.set[f] {
			return usagef("--%s is for a single series: a backtest without --series runs a portfolio strategy (one that declares a universe); give --series to backtest over one", f)
		}
	}
	params, err := script.ParseAssignments(o.params)
	if err != nil {
		return usageError{fmt.Errorf("--param: %w", err)}
	}
	p, cfg, err := openProjectAt(o.project)
	if err != nil {
		return err
	}
	if err := checkOutFile(p, "report", o.report, o.force); err != nil { // outfile.go
		return err
	}
	name, source, err := backtestSourceTo(stderr, p, o.local)
	if err != nil {
		return err
	}
	costs := o.costs
	req := backtest.Request{
		Source: source, Name: name, Params: params,
		From: o.from, To: o.to,
		Capital:     cmp.Or(costs.Capital, cfg.Research.Capital.String()),
		FeeBps:      cmp.Or(costs.FeeBps, &cfg.Research.FeeBps),
		SlippageBps: cmp.Or(costs.SlippageBps, &cfg.Research.SlippageBps),
		Fill:        o.fill,
		Intrabar:    o.intrabar,
		TradesLimit: o.trades,
		Report:      o.report != "",
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
	resp, err := pool.Portfolio(ctx, req)
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
	recordBacktest(ctx, stderr, p, name, source, head.Series, resp.Result)
	if resp.Output != "" {
		fmt.Fprintf(stderr, "%s printed:\n%s", name, indent(resp.Output))
	}
	if file := o.report; file != "" {
		if err := writeOutFile(file, resp.HTML, o.force); err != nil {
			return fmt.Errorf("--report: %w", err)
		}
		fmt.Fprintf(stderr, "tear sheet written to %s (%d bytes)\n", file, len(resp.HTML))
	}
	if o.json {
		_, err := fmt.Fprintf(stdout, "%s\n", resp.Result)
		return err
	}
	_, err = fmt.Fprint(stdout, resp.Text)
	return err
}
