package research

import (
	"context"
	"fmt"
	"strings"

	"wicket/strategy"
	"wicket/strategy/backtest"
	"wicket/strategy/worker"
)

// walkForwardPortfolio walks a portfolio strategy (one that declares its
// universe; the request names no series) forward: the calendar of its
// universe is laid out in windows by the single-series rules
// (windowsOf), each window's in-sample bars are swept as a portfolio
// sweep (its chunks in the worker pool), and the winner is run over the
// window's in-sample and out-of-sample bars trading from the
// out-of-sample start (worker.PortfolioSweepChunk.TradeFrom: the
// strategy warms up on the bars before it). The out-of-sample returns
// are stitched into one curve as for one series; each window reports its
// winner's deflated Sharpe ratio over the window's combinations and
// their PBO, and each winner gets the lookahead proof over its window.
func (l *Local) walkForwardPortfolio(ctx context.Context, req WalkForwardRequest, progress func(Progress)) (WalkForwardResult, error) {
	p, base, err := l.portfolioPlan(ctx, req.StrategyRef, req.Grid, req.Params, req.RankBy, req.From, req.To, req.Costs, req.MaxCombinations)
	if err != nil {
		return WalkForwardResult{}, err
	}
	if p.tooMany != nil {
		return WalkForwardResult{}, p.tooMany
	}
	// The calendar and the warm-ups, from the grid's corners over the
	// whole range, before any sweep runs.
	probe, err := l.cfg.Pool.PortfolioSweep(ctx, worker.PortfolioSweepChunk{Request: base, Combos: p.corners(), Times: true})
	if err != nil {
		return WalkForwardResult{}, classify(err)
	}
	if len(probe.Times) == 0 {
		for _, t := range probe.Trials {
			if t.Error != "" {
				return WalkForwardResult{}, errorf(KindStrategy, "the strategy failed over the range (%s): %s", fmtParams(t.Values), t.Error)
			}
		}
		return WalkForwardResult{}, errorf(KindInvalid, "no bars of the universe in the range; check it with `wicket data list`")
	}
	first, _, _ := strings.Cut(probe.Series, ",")
	_, g, err := strategy.ParseSeries(first)
	if err != nil {
		return WalkForwardResult{}, errorf(KindUnavailable, "the portfolio's universe %q: %v", probe.Series, err)
	}
	label := probe.Series
	p.gran, p.bars = g, strategy.Bars{Series: label, Time: probe.Times}
	wins, purge, embargo, err := windowsOf(req, p)
	if err != nil {
		return WalkForwardResult{}, err
	}
	isBars := wins[0].isHi - wins[0].isLo
	for _, t := range probe.Trials {
		if t.Error == "" && !warmupFits(t.Warmup, isBars) {
			return WalkForwardResult{}, warmupError(isBars, t.Warmup, t.Values)
		}
	}
	times := probe.Times
	sr := wfSeries{p: p, times: times}
	res := WalkForwardResult{
		Strategy: p.display, Series: label, RankBy: p.rankBy, Anchored: req.Anchored, Knobs: p.swept,
		Combinations: p.count, Windows: []Window{}, Equity: []EquityPoint{}, Settings: p.settings, Warnings: []string{},
	}
	run := wfRun{trials: make([][]*worker.Trial, len(wins)), ranks: make([]ranking, len(wins)), oos: make([]*worker.Trial, len(wins))}
	total := len(wins) * (p.count + 1)
	blocks := pboBlocksFor(p.count)
	for k, w := range wins {
		if ctx.Err() != nil {
			break
		}
		keep := keepMask(wins, k, embargo)
		p.base.Returns = keep != nil // rescored below
		trials, done, err := l.portfolioWindow(ctx, p, base, sr, w, blocks, func(pr Progress) {
			report(progress, Progress{Done: k*(p.count+1) + pr.Done, Total: total, Message: fmt.Sprintf("window %d of %d: in-sample sweep, %s", k+1, len(wins), pr.Message)})
		})
		if err != nil {
			return WalkForwardResult{}, err
		}
		if done < p.count {
			break // cancelled
		}
		if keep != nil {
			for _, t := range trials {
				if err := sr.rescorer().rescore(t, keep); err != nil {
					return WalkForwardResult{}, err
				}
			}
		}
		run.trials[k] = trials
		run.ranks[k] = rankTrials(trials, p.rankBy)
		rk := run.ranks[k]
		if len(rk.order) == 0 {
			return WalkForwardResult{}, errorf(KindStrategy, "window %d: every combination failed in-sample; the first (%s): %s",
				k+1, fmtParams(rk.errors[0].Params), rk.errors[0].Message)
		}
		for _, t := range trials {
			if t.Error == "" && !warmupFits(t.Warmup, w.isHi-w.isLo) {
				return WalkForwardResult{}, warmupError(w.isHi-w.isLo, t.Warmup, t.Values)
			}
		}
		oos := base
		oos.From, oos.To = unixRFC3339(times[w.isLo]), unixRFC3339(times[w.oosHi-1])
		resp, err := l.cfg.Pool.PortfolioSweep(ctx, worker.PortfolioSweepChunk{
			Request: oos, Combos: []map[string]any{trials[rk.order[0]].Values},
			TradeFrom: unixRFC3339(times[w.oosLo]), Returns: true,
		})
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			return WalkForwardResult{}, classify(err)
		}
		if len(resp.Trials) != 1 {
			return WalkForwardResult{}, errorf(KindUnavailable, "window %d: a worker answered %d trials for the out-of-sample run", k+1, len(resp.Trials))
		}
		run.oos[k] = &resp.Trials[0]
		report(progress, Progress{Done: (k + 1) * (p.count + 1), Total: total, Message: fmt.Sprintf("window %d of %d: out-of-sample", k+1, len(wins))})
	}
	p.base.Series, p.seen, p.base.Returns = label, nil, false
	if err := sr.stitch(ctx, wins, run, &res); err != nil {
		return WalkForwardResult{}, err
	}
	sr.validationSpans(wins, purge, embargo, &res)
	windows := make([]inSample, len(wins))
	for k, w := range wins {
		is := sr.span(w.isLo, w.isHi)
		windows[k] = inSample{from: is.From, to: is.To, trials: run.trials[k]}
		if k < len(res.Windows) {
			windows[k].winner = run.trials[k][run.ranks[k].order[0]]
		}
	}
	for k := range res.Windows {
		rk := run.ranks[k]
		res.Windows[k].DeflatedSharpe = deflated(run.trials[k][rk.order[0]].Stats, variance(rk.srs), rk.evaluated)
		res.Windows[k].Overfitting = overfitting(run.trials[k], blocks)
	}
	l.afterWalkForward(ctx, p, req, windows, &res) // tried, so counted, whatever the check finds
	if res.LookaheadCheck, err = l.checkPortfolioWindows(ctx, base, wins, times, &res); err != nil {
		return WalkForwardResult{}, err
	}
	return res, nil
}

// portfolioWindow runs window w's in-sample sweep (runPortfolioChunks
// over its bars) and returns its trials and how many finished.
func (l *Local) portfolioWindow(ctx context.Context, p *plan, base backtest.Request, sr wfSeries, w window, blocks int, progress func(Progress)) ([]*worker.Trial, int, error) {
	is := base
	is.From, is.To = unixRFC3339(sr.times[w.isLo]), unixRFC3339(sr.times[w.isHi-1])
	p.base.Series, p.seen, p.base.Blocks = "", nil, blocks // the chunks of one window agree on its calendar
	trials, done, err := l.runPortfolioChunks(ctx, p, is, progress)
	if err != nil {
		return nil, 0, err
	}
	if done == p.count && p.seen != nil && p.seen.Count != w.isHi-w.isLo {
		return nil, 0, errorf(KindUnavailable, "the universe's bars changed while the walk-forward ran (%d bars in a window of %d); run it again", p.seen.Count, w.isHi-w.isLo)
	}
	return trials, done, nil
}

// checkPortfolioWindows proves each window's winner free of lookahead
// over the window's bars (one more portfolio backtest each, which runs
// the proof).
func (l *Local) checkPortfolioWindows(ctx context.Context, base backtest.Request, wins []window, times []int64, res *WalkForwardResult) (string, error) {
	if len(res.Windows) == 0 {
		return "not run: no window finished", nil
	}
	if res.Partial {
		return "not run: the walk-forward was cancelled", nil
	}
	passed := true
	for k := range res.Windows {
		w := wins[k]
		req := base
		req.From, req.To = unixRFC3339(times[w.isLo]), unixRFC3339(times[w.oosHi-1])
		check, err := l.checkPortfolioWinner(ctx, req, res.Windows[k].Params)
		if err != nil {
			return "", fmt.Errorf("window %d: the lookahead check of the in-sample winner (%s): %w", k+1, fmtParams(res.Windows[k].Params), err)
		}
		res.Windows[k].LookaheadCheck = check
		passed = passed && strings.HasPrefix(check, "passed")
	}
	if passed {
		return fmt.Sprintf("passed for the winner of each of %d windows (each window's lookahead_check names its cuts)", len(res.Windows)), nil
	}
	return fmt.Sprintf("checked for the winner of each of %d windows: see each window's lookahead_check", len(res.Windows)), nil
}
