package research

import (
	"context"
	"encoding/json"

	"wicket/strategy/backtest"
)

// backtestPortfolio runs a backtest request without a series: the
// strategy must declare its universe (a portfolio strategy), which the
// worker resolves against the store. The ledger records the run under
// the universe's series, as the report names them.
func (l *Local) backtestPortfolio(ctx context.Context, req BacktestRequest) (BacktestResult, error) {
	label, source, err := l.resolve(req.StrategyRef)
	if err != nil {
		return BacktestResult{}, err
	}
	if err := l.needProject(); err != nil {
		return BacktestResult{}, err
	}
	if err := l.needPool(); err != nil {
		return BacktestResult{}, err
	}
	if req.Robustness != nil || req.Allowance != nil || req.Plot {
		return BacktestResult{}, errorf(KindInvalid, "robustness, plot and allowance are for a backtest over one series; a portfolio strategy's backtest (no series) reports its metrics, assets, trades and curve")
	}
	c := l.costs(req.Costs)
	breq := backtest.Request{
		Source: source, Name: label, Params: req.Params,
		From: req.From, To: req.To,
		Capital: c.Capital, FeeBps: c.FeeBps, SlippageBps: c.SlippageBps, CostOptions: c.CostOptions,
		Fill: req.Fill, Intrabar: req.Intrabar, TradesLimit: req.TradesLimit,
		// The tear sheet only when asked: its per-bar record costs the
		// worker memory a plain backtest does not need.
		Report:      req.Report,
		HistoryPath: l.cfg.Project.HistoryPath(), IndicatorsDir: l.indicatorsDir(),
	}
	if _, err := breq.Config(backtest.DefaultConfig()); err != nil {
		return BacktestResult{}, classify(err)
	}
	breq.ProofSeed = l.proofSeed()
	resp, err := l.cfg.Pool.Portfolio(ctx, breq)
	if err != nil {
		return BacktestResult{}, classify(err)
	}
	var head struct {
		Series string `json:"series"`
	}
	if err := json.Unmarshal(resp.Result, &head); err != nil {
		return BacktestResult{}, errorf(KindUnavailable, "the portfolio report is not JSON: %v", err)
	}
	res := BacktestResult{Result: resp.Result, Text: resp.Text, HTML: resp.HTML, Output: resp.Output}
	l.recordBacktest(ctx, LedgerName(req.StrategyRef, label, source), source, head.Series, &res)
	return res, nil
}
