package handlers

import (
	"context"

	"wicket/strategy/backtest"
	"wicket/strategy/history"
	"wicket/strategy/script"
	"wicket/strategy/ta"
	"wicket/strategy/worker"
)

// runBacktest is the backtest handler: inside the worker it loads the
// strategy with the request's overrides, reads the bars from the history
// store (read-only), asks the strategy for its decisions in its own style
// (signals once, or on_bar per bar) and runs the engine over them.
func runBacktest(memo *ta.Memo) worker.Handler {
	return worker.Typed(func(ctx context.Context, req backtest.Request) (backtest.Response, error) {
		return Backtest(ctx, req, memo)
	})
}

// Backtest serves one backtest request in this process. It runs strategy
// code, so it belongs in a worker (the handler calls it) and in tests.
func Backtest(ctx context.Context, req backtest.Request, memo *ta.Memo) (backtest.Response, error) {
	cfg, err := req.Config(backtest.DefaultConfig())
	if err != nil {
		return backtest.Response{}, err
	}
	if req.HistoryPath == "" {
		return backtest.Response{}, &worker.Error{Kind: worker.KindRequest, Msg: "backtest request without a history store path"}
	}
	store, err := history.OpenReadOnly(req.HistoryPath)
	if err != nil {
		return backtest.Response{}, err
	}
	defer store.Close()
	bars, err := store.Load(req.Series, cfg.From, cfg.To)
	if err != nil {
		return backtest.Response{}, err
	}

	sreq := worker.StrategyRequest{Name: req.Name, Source: req.Source, IndicatorsDir: req.IndicatorsDir, Overrides: req.Params}
	opts, closeFS, err := options(sreq, memo)
	if err != nil {
		return backtest.Response{}, err
	}
	defer closeFS()
	s, err := script.Load(ctx, script.Source{Name: req.Name, Text: req.Source}, opts)
	if err != nil {
		return backtest.Response{}, err
	}
	cfg.Params = s.Values()

	d, warmup, done, trace, err := decideTraced(ctx, s, bars)
	if err != nil {
		return backtest.Response{}, err
	}
	defer done()
	cfg.Warmup = warmup
	res, err := backtest.Run(ctx, bars, cfg, d)
	if err != nil {
		return backtest.Response{}, err
	}
	// The lookahead proof: every decision again over prefixes of the bars.
	if res.LookaheadCheck, err = s.CheckLookahead(ctx, bars, trace()); err != nil {
		return backtest.Response{}, err
	}
	resp, err := backtest.Report(res, req.Plot)
	if err != nil {
		return backtest.Response{}, err
	}
	resp.Output = s.Output()
	return resp, nil
}
