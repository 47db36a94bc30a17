package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"wicket/strategy"
	"wicket/strategy/backtest"
	"wicket/strategy/history"
	"wicket/strategy/robust"
	"wicket/strategy/script"
	"wicket/strategy/ta"
	"wicket/strategy/tearsheet"
	"wicket/strategy/worker"
)

// runBacktest is the backtest handler: inside the worker it loads the
// strategy with the request's overrides, reads the bars from the history
// store (read-only; from the worker's bar cache when the request names
// their digest), asks the strategy for its decisions in its own style
// (signals once, or on_bar per bar) and runs the engine over them.
func runBacktest(memo *ta.Memo, cache *barCache, cols *sharedColumns) worker.Handler {
	return worker.Typed(func(ctx context.Context, req backtest.Request) (backtest.Response, error) {
		return backtestIn(ctx, req, memo, cache, cols)
	})
}

// Backtest serves one backtest request in this process. It runs strategy
// code, so it belongs in a worker (the handler calls it) and in tests.
func Backtest(ctx context.Context, req backtest.Request, memo *ta.Memo) (backtest.Response, error) {
	return backtestWith(ctx, req, memo, nil)
}

// backtestWith is Backtest with the worker's bar cache (nil: none).
func backtestWith(ctx context.Context, req backtest.Request, memo *ta.Memo, cache *barCache) (backtest.Response, error) {
	return backtestIn(ctx, req, memo, cache, nil)
}

// backtestIn is backtestWith with the worker's shared columns (nil: none).
func backtestIn(ctx context.Context, req backtest.Request, memo *ta.Memo, cache *barCache, cols *sharedColumns) (backtest.Response, error) {
	cfg, err := req.Config(backtest.DefaultConfig())
	if err != nil {
		return backtest.Response{}, err
	}
	if req.HistoryPath == "" {
		return backtest.Response{}, &worker.Error{Kind: worker.KindRequest, Msg: "backtest request without a history store path"}
	}
	var (
		bars   strategy.Bars
		keys   *script.BarKeys
		mapped *mapping // the shared bars file bars are views of; nil: none
	)
	if cache != nil && req.Digest != "" {
		var e barEntry
		e, err = cache.load(req.HistoryPath, req.Series, cfg.From, cfg.To, req.Digest)
		bars, keys, mapped = e.bars, e.keys, e.m
		defer e.release()
	} else {
		bars, err = loadBars(req.HistoryPath, req.Series, cfg.From, cfg.To)
	}
	if err != nil {
		return backtest.Response{}, err
	}
	if err := fundingCosts(&cfg, fundingSource{path: req.HistoryPath, stores: cache}, req.Series, req.CostOptions, bars); err != nil {
		return backtest.Response{}, err
	}

	if req.LookaheadOnly {
		memo = ta.NewMemo(keepNothing)
		if cols != nil {
			memo.SetShared(cols) // the full run's columns, as the sweep's chunks left them
		}
	}
	sreq := worker.StrategyRequest{Name: req.Name, Source: req.Source, IndicatorsDir: req.IndicatorsDir, Overrides: req.Params}
	opts, closeFS, err := options(sreq, memo)
	if err != nil {
		return backtest.Response{}, err
	}
	defer closeFS()
	opts.BarKeys = keys
	opts.ProofSeed = req.ProofSeed
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
	if req.LookaheadOnly {
		// The verdict alone: the run only drives the decisions the proof
		// checks, so it keeps neither trades nor curve (Evaluate makes
		// the same decisions as Run). A signals(bars) strategy's decisions
		// are its signals, made before any engine pass: it needs none
		// (about 40 % of a million-bar proof's CPU once the prefix runs
		// share the full run's indicators and crosses).
		if s.Style() != script.StyleSignals {
			if _, err := backtest.Evaluate(ctx, bars, cfg, d, &backtest.Scratch{}); err != nil {
				return backtest.Response{}, err
			}
		}
		coolBars(mapped) // see proofBars
		check, err := s.CheckLookahead(ctx, bars, trace())
		if err != nil {
			return backtest.Response{}, err
		}
		verdict, err := json.Marshal(struct {
			LookaheadCheck string `json:"lookahead_check"`
		}{check})
		return backtest.Response{Result: verdict}, err
	}
	res, err := backtest.Run(ctx, bars, cfg, d)
	if err != nil {
		return backtest.Response{}, err
	}
	// The lookahead proof: every decision again over prefixes of the bars.
	if res.LookaheadCheck, err = s.CheckLookahead(ctx, bars, trace()); err != nil {
		return backtest.Response{}, err
	}
	if o := req.Robustness; o != nil {
		if res.Robustness, err = robustness(req, cfg, res, *o); err != nil {
			return backtest.Response{}, err
		}
	}
	resp, err := backtest.Report(res, req.Plot)
	if err != nil {
		return backtest.Response{}, err
	}
	if req.Report {
		if resp.HTML, err = tearsheet.Render(res, req.Name, sheetBenchmarks(req, cfg, res.Settings.Capital, bars)...); err != nil {
			return backtest.Response{}, err
		}
	}
	resp.Output = s.Output()
	return resp, nil
}

// proofBars: the engine's pass read the bars' columns it trades on (the
// times, opens and closes: 23 MiB resident at a million bars), and the
// prefix runs read only what the strategy reads (the closes of an SMA
// cross), so before the proof the shared bars' pages go from the worker
// (coolBars) and what the prefix runs read is mapped in again from the
// page cache: a proving worker's peak is 15 MiB lower, and the next
// sweep's first chunk on it maps in again what it reads (a few
// milliseconds).

// keepNothing is the budget of the memo a proof alone (LookaheadOnly: a
// sweep's winner's) runs with: it keeps no column. The proof computes
// every indicator again over some 36 prefixes of the bars, each once, so
// the worker's memo would only hold columns no later request asks for
// (16 MiB of them at a million bars, live beside the prefix runs' own)
// and push out the sweep's, which the session's next sweep asks for
// again. The full run's columns are the ones the sweep's chunks mapped
// (sharedColumns, read only during a proof), or computed again when the
// bars were not shared (about 5 ms at a million bars, against 200 ms for
// the proof).
const keepNothing = 1

// sheetBenchmarks are the tear sheet's benchmark lines: the run's series
// bought and held and, when the robustness figures name a benchmark
// series, that series held over the run's bars.
func sheetBenchmarks(req backtest.Request, cfg backtest.Config, capital float64, bars strategy.Bars) []tearsheet.Benchmark {
	out := []tearsheet.Benchmark{tearsheet.Hold("buy & hold "+req.Series, bars.Time, bars.Time, bars.Close, capital)}
	if o := req.Robustness; o != nil && o.Benchmark != "" {
		// robustness has read it already: a failure here was reported there.
		if b, err := loadBars(req.HistoryPath, o.Benchmark, cfg.From, cfg.To); err == nil && b.Len() > 0 {
			out = append(out, tearsheet.Hold("benchmark "+o.Benchmark+" held", bars.Time, b.Time, b.Close, capital))
		}
	}
	return out
}

// robustness assesses a finished run, reading its benchmark's bars (of
// the same granularity, over the same range) when it names one.
func robustness(req backtest.Request, cfg backtest.Config, res *backtest.Result, o backtest.Robustness) (*robust.Report, error) {
	var bench *strategy.Bars
	if o.Benchmark != "" {
		_, g, err := history.CheckSeries(o.Benchmark)
		if err != nil {
			return nil, &worker.Error{Kind: worker.KindRequest, Msg: fmt.Sprintf("robustness benchmark: %v", err)}
		}
		if _, own, _ := history.CheckSeries(req.Series); g != own {
			return nil, &worker.Error{Kind: worker.KindRequest, Msg: fmt.Sprintf("robustness benchmark %s is %s bars and the run's are %s; pick a benchmark of the same granularity", o.Benchmark, g, own)}
		}
		b, err := loadBars(req.HistoryPath, o.Benchmark, cfg.From, cfg.To)
		if err != nil {
			return nil, err
		}
		bench = &b
	}
	return backtest.Assess(res, o, bench)
}

// loadBars reads the bars of series in [from, to] from the store at path.
func loadBars(path, series string, from, to time.Time) (strategy.Bars, error) {
	store, err := history.OpenReadOnly(path)
	if err != nil {
		return strategy.Bars{}, err
	}
	defer store.Close()
	return store.Load(series, from, to)
}
