package research

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"wicket/strategy/backtest"
	"wicket/strategy/worker"
)

// seriesless reports whether a request names no series: a sweep of a
// portfolio strategy, which declares its own.
func seriesless(series string) bool { return strings.TrimSpace(series) == "" }

// sweepPortfolio sweeps a portfolio strategy (one that declares its
// universe; the request names no series): each combination of the grid
// is one portfolio backtest, run in the worker pool in chunks
// (worker.KindPortfolioSweep), ranked by the same metric as a
// single-series sweep. Every finished combination is a ledger row under
// the universe's label; the deflated Sharpe ratio counts all of them,
// PBO is computed from each combination's equity-curve returns on the
// calendar, and the winner gets the lookahead proof of one more run.
func (l *Local) sweepPortfolio(ctx context.Context, req SweepRequest, progress func(Progress)) (SweepResult, error) {
	if req.Estimate {
		return SweepResult{}, errorf(KindInvalid, "estimate is for a sweep over one series; a portfolio strategy's sweep (no series) runs its grid, bounded by max_combinations")
	}
	p, base, err := l.portfolioPlan(ctx, req.StrategyRef, req.Grid, req.Params, req.RankBy, req.From, req.To, req.Costs, req.MaxCombinations)
	if err != nil {
		return SweepResult{}, err
	}
	res := SweepResult{
		Strategy: p.display, RankBy: p.rankBy, Knobs: p.swept,
		Combinations: p.count, Top: []Trial{}, Settings: p.settings, Warnings: []string{},
	}
	if p.tooMany != nil {
		return SweepResult{}, p.tooMany
	}
	var top int
	top, res.TopClamped = topOf(req.Top)
	p.base.Blocks = pboBlocksFor(p.count)
	trials, done, err := l.runPortfolioChunks(ctx, p, base, progress)
	if err != nil {
		return SweepResult{}, err
	}
	res.Series = p.base.Series
	if ctx.Err() != nil {
		res.Partial = true
		res.PartialReason = fmt.Sprintf("cancelled after %d of %d combinations: %v", done, p.count, context.Cause(ctx))
	}
	rk := rankTrials(trials, p.rankBy)
	res.Evaluated, res.Failed, res.Errors = rk.evaluated, rk.failed, rk.errors
	if rk.failed > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d of %d combinations failed and are not ranked; errors lists the first", rk.failed, rk.evaluated))
	}
	if len(rk.order) == 0 {
		if !res.Partial && rk.failed > 0 {
			return SweepResult{}, errorf(KindStrategy, "every combination failed; the first (%s): %s", fmtParams(rk.errors[0].Params), rk.errors[0].Message)
		}
		l.afterSweep(ctx, p, trials, nil, req.DeflateBy, &res)
		return res, nil
	}
	res.listTop(rk, trials, p.rankBy, top, req.Top)
	win := trials[rk.order[0]]
	res.DeflatedSharpe = deflated(win.Stats, variance(rk.srs), rk.evaluated)
	l.afterSweep(ctx, p, trials, win, req.DeflateBy, &res)
	if res.Partial {
		res.LookaheadCheck = "not run: the sweep was cancelled"
	} else if res.LookaheadCheck, err = l.checkPortfolioWinner(ctx, base, win.Values); err != nil {
		return SweepResult{}, err
	}
	if win.Trades < backtest.TooFewTrades {
		res.Warnings = append(res.Warnings, fmt.Sprintf("the winner made only %d closed trades; its metrics rest on too few to judge it by", win.Trades))
	}
	return res, nil
}

// portfolioPlan validates a portfolio sweep's request and expands its
// grid against the strategy's knobs (asked of a worker) before any
// combination runs; base is the backtest request every combination
// shares.
func (l *Local) portfolioPlan(ctx context.Context, ref StrategyRef, grid Grid, params map[string]any, rankBy, from, to string, costs Costs, maxCombinations int) (*plan, backtest.Request, error) {
	label, source, err := l.resolve(ref)
	if err != nil {
		return nil, backtest.Request{}, err
	}
	if err := l.needProject(); err != nil {
		return nil, backtest.Request{}, err
	}
	if err := l.needPool(); err != nil {
		return nil, backtest.Request{}, err
	}
	p := &plan{display: strings.TrimSuffix(label, ".star"), rankBy: rankBy, ledgerName: LedgerName(ref, label, source)}
	if ref.Name != "" {
		p.display = ref.Name
	}
	if p.rankBy == "" {
		p.rankBy = RankSharpe
	}
	if !slices.Contains(RankMetrics, p.rankBy) {
		return nil, backtest.Request{}, errorf(KindInvalid, "rank_by %q is not one of %s", rankBy, strings.Join(RankMetrics, ", "))
	}
	limit, err := l.combinationCap(planInput{maxCombinations: maxCombinations})
	if err != nil {
		return nil, backtest.Request{}, err
	}
	if len(grid) == 0 {
		return nil, backtest.Request{}, errorf(KindInvalid, "grid is empty: map at least one knob to a list of values or {\"from\", \"to\", \"step\"}, e.g. {\"top\": [1, 2, 3]}")
	}
	c := l.costs(costs)
	base := backtest.Request{
		Source: source, Name: label, Params: params, From: from, To: to,
		Capital: c.Capital, FeeBps: c.FeeBps, SlippageBps: c.SlippageBps, CostOptions: c.CostOptions, TradesLimit: 1,
		HistoryPath: l.cfg.Project.HistoryPath(), IndicatorsDir: l.indicatorsDir(),
	}
	cfg, err := base.Config(backtest.DefaultConfig())
	if err != nil {
		return nil, backtest.Request{}, classify(err)
	}
	p.capital = cfg.Capital
	p.settings = Settings{Capital: cfg.Capital.String(), FeeBps: cfg.FeeBps, SlippageBps: cfg.SlippageBps}
	if !cfg.From.IsZero() {
		p.settings.From = cfg.From.UTC().Format(time.RFC3339)
	}
	if !cfg.To.IsZero() {
		p.settings.To = cfg.To.UTC().Format(time.RFC3339)
	}
	knobs, err := l.cfg.Pool.Params(ctx, worker.StrategyRequest{Name: label, Source: source, IndicatorsDir: l.indicatorsDir(), Overrides: params})
	if err != nil {
		return nil, backtest.Request{}, classify(err)
	}
	p.knobs = knobs.Knobs
	if err := p.expand(grid, params, limit); err != nil {
		return nil, backtest.Request{}, err
	}
	p.base = worker.SweepChunk{
		Name: label, Source: source, IndicatorsDir: base.IndicatorsDir, HistoryPath: base.HistoryPath,
		From: p.settings.From, To: p.settings.To,
		Capital: p.settings.Capital, FeeBps: cfg.FeeBps, SlippageBps: cfg.SlippageBps,
	}
	return p, base, nil
}

// runPortfolioChunks runs p's combinations in chunks, as many at once as
// the pool has workers, and returns their trials in combination order
// (nil where one did not finish) and how many finished. It sets p's
// series (the universe's label) and calendar from the chunks, which must
// agree. When ctx ends it returns what finished and no error.
func (l *Local) runPortfolioChunks(ctx context.Context, p *plan, base backtest.Request, progress func(Progress)) ([]*worker.Trial, int, error) {
	nw := max(1, min(l.cfg.Pool.Size(), p.count))
	size := max(1, (p.count+2*nw-1)/(2*nw)) // two chunks a worker: the last ones balance
	trials := make([]*worker.Trial, p.count)
	var (
		mu       sync.Mutex
		done     int
		firstErr error
		next     int
		wg       sync.WaitGroup
	)
	inner, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	report(progress, Progress{Done: 0, Total: p.count, Message: fmt.Sprintf("0 of %d combinations", p.count)})
	for range nw {
		wg.Go(func() {
			for {
				mu.Lock()
				lo := next
				next = min(p.count, next+size)
				hi := next
				mu.Unlock()
				if lo >= hi || inner.Err() != nil {
					return
				}
				chunk := worker.PortfolioSweepChunk{Request: base, Blocks: p.base.Blocks, Combos: make([]map[string]any, 0, hi-lo)}
				for i := lo; i < hi; i++ {
					chunk.Combos = append(chunk.Combos, p.combo(i))
				}
				resp, err := l.cfg.Pool.PortfolioSweep(inner, chunk)
				mu.Lock()
				switch {
				case err != nil:
					if firstErr == nil && ctx.Err() == nil {
						firstErr = classify(err)
						cancel(err)
					}
				case len(resp.Trials) != hi-lo:
					if firstErr == nil {
						firstErr = errorf(KindUnavailable, "a worker answered %d trials for a chunk of %d combinations", len(resp.Trials), hi-lo)
						cancel(firstErr)
					}
				default:
					if resp.Series != "" {
						switch {
						case p.base.Series == "":
							p.base.Series, p.seen = resp.Series, &resp.Calendar
						case p.base.Series != resp.Series || p.seen.First != resp.Calendar.First || p.seen.Last != resp.Calendar.Last:
							if firstErr == nil {
								firstErr = errorf(KindUnavailable, "the universe or its bars changed while the sweep ran (%s, then %s); run it again", p.base.Series, resp.Series)
								cancel(firstErr)
							}
						}
					}
					for j := range resp.Trials {
						trials[lo+j] = &resp.Trials[j]
					}
					done += len(resp.Trials)
					report(progress, Progress{Done: done, Total: p.count, Message: fmt.Sprintf("%d of %d combinations", done, p.count)})
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return nil, 0, firstErr
	}
	return trials, done, nil
}

// checkPortfolioWinner proves the winner's weights free of lookahead:
// one more portfolio backtest of its values, which runs the proof.
func (l *Local) checkPortfolioWinner(ctx context.Context, base backtest.Request, values map[string]any) (string, error) {
	req := base
	req.Params = values
	req.ProofSeed = l.proofSeed()
	resp, err := l.cfg.Pool.Portfolio(ctx, req)
	if err != nil {
		return "", classify(err)
	}
	var r struct {
		LookaheadCheck string `json:"lookahead_check"`
	}
	if err := json.Unmarshal(resp.Result, &r); err != nil {
		return "", errorf(KindUnavailable, "lookahead check of the winner: %v", err)
	}
	return r.LookaheadCheck, nil
}
