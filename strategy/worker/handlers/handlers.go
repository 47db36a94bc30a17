package handlers

import (
	"context"
	"errors"
	"io/fs"
	"os"

	"wicket/strategy/script"
	"wicket/strategy/ta"
	"wicket/strategy/worker"
)

// New returns the request kinds a worker process serves: validate,
// params, summaries, backtest, sweep, start_point and decide. memo is the worker's indicator cache, shared
// by its handlers across requests (ta.NewMemo(worker.MemoBytes)), given a
// spill for the long columns it evicts (spill.go) and the columns a sweep's
// workers share (shared.go). Add other kinds to the
// returned table.
func New(memo *ta.Memo) worker.Handlers {
	// The bar cache lives as long as the worker, like memo; cols are the
	// columns shared with the sweep's other workers (shared.go), which
	// keeps links to the files it mapped beside the cache's bars files.
	cache, cols := &barCache{}, newSharedColumns(SpillMinBytes)
	cols.links = cache.linkDir
	return withSpill(table(memo, cache, cols), memo, cols, cache) // spill.go
}

// table is New's handlers over memo, the bar cache and the shared
// columns, before withSpill.
func table(memo *ta.Memo, cache *barCache, cols *sharedColumns) worker.Handlers {
	return worker.Handlers{
		worker.KindValidate: worker.Typed(func(ctx context.Context, req worker.StrategyRequest) (script.Report, error) {
			opts, closeFS, err := options(req, memo)
			if err != nil {
				return script.Report{}, err
			}
			defer closeFS()
			return script.Validate(ctx, script.Source{Name: req.Name, Text: req.Source}, opts), nil
		}),
		worker.KindBacktest:        runBacktest(memo, cache, cols),
		worker.KindPortfolio:       runPortfolio(memo),      // portfolio.go
		worker.KindPortfolioSweep:  runPortfolioSweep(memo), // portfolio_sweep.go
		worker.KindDecide:          runDecide(memo),
		worker.KindDecidePortfolio: runDecidePortfolio(memo), // decide_portfolio.go
		worker.KindSummaries: worker.Typed(func(ctx context.Context, req worker.SummariesRequest) (worker.SummariesResult, error) {
			out := worker.SummariesResult{Summaries: make([]worker.Summary, len(req.Files))}
			for i, f := range req.Files {
				sum, err := script.Summary(f.Name, f.Text)
				out.Summaries[i].Summary = sum
				if err != nil {
					out.Summaries[i].Problem = err.Error()
				}
			}
			return out, nil
		}),
		worker.KindSweep:      runSweep(memo, cache, cols),
		worker.KindStartPoint: runStartPoint(memo, cache),
		worker.KindParams: worker.Typed(func(ctx context.Context, req worker.StrategyRequest) (worker.ParamsResult, error) {
			var (
				seen   *worker.BarsSeen
				shared string
			)
			if req.Bars != nil {
				b, path, err := cache.preload(*req.Bars)
				if err != nil {
					return worker.ParamsResult{}, err
				}
				seen, shared = &b, path
			}
			opts, closeFS, err := options(req, memo)
			if err != nil {
				return worker.ParamsResult{}, err
			}
			defer closeFS()
			s, err := script.Load(ctx, script.Source{Name: req.Name, Text: req.Source}, opts)
			if err != nil {
				return worker.ParamsResult{}, err
			}
			return worker.ParamsResult{Style: s.Style(), Summary: s.Summary(), Knobs: s.Knobs(),
				Universe: s.Universe(), Rebalance: s.Rebalance(), Bars: seen, Shared: shared}, nil
		}),
	}
}

// options turns the request into script options inside a worker: the
// indicators directory opened as an os.Root. Call the returned func when
// done with the strategy.
func options(r worker.StrategyRequest, memo *ta.Memo) (script.Options, func(), error) {
	opts := script.Options{Overrides: r.Overrides, Limits: r.Limits, Memo: memo}
	if r.IndicatorsDir == "" {
		return opts, func() {}, nil
	}
	root, err := os.OpenRoot(r.IndicatorsDir)
	if errors.Is(err, fs.ErrNotExist) {
		return opts, func() {}, nil
	}
	if err != nil {
		return opts, nil, &worker.Error{Kind: worker.KindRequest, Msg: "open the indicators directory: " + err.Error()}
	}
	opts.Indicators = root.FS()
	return opts, func() { root.Close() }, nil
}
