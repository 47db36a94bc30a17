package research

import (
	"context"
	"encoding/json"
	"fmt"

	"wicket/strategy/backtest"
	"wicket/strategy/worker"
)

// CPCVRequest is a combinatorial purged cross-validation of a strategy's
// grid over one series (cpcv.go says the method).
type CPCVRequest struct {
	StrategyRef
	Series string         `json:"series"`
	Grid   Grid           `json:"grid"`
	Params map[string]any `json:"params,omitempty"`
	// Groups (N) and Test (k): C(N, k) splits, C(N−1, k−1) paths.
	Groups int `json:"groups"`
	Test   int `json:"test_groups"`
	// Purge, in bars; nil purges the strategy's longest warm-up over the
	// grid (its longest lookback), at least one bar.
	Purge *int `json:"purge_bars,omitempty"`
	// Embargo is a fraction of the bars; nil is DefaultCPCVEmbargo.
	Embargo         *float64 `json:"embargo,omitempty"`
	From            string   `json:"from,omitempty"`
	To              string   `json:"to,omitempty"`
	MaxCombinations int      `json:"max_combinations,omitempty"`
	Costs
	Intrabar string `json:"intrabar,omitempty"`
}

// DefaultCPCVEmbargo is the embargo a CPCV request that names none uses:
// 1 % of the bars.
const DefaultCPCVEmbargo = 0.01

// CPCVRunResult is a CPCV of a strategy's grid: the figures (CPCVResult)
// with each split's picked parameters.
type CPCVRunResult struct {
	Strategy     string           `json:"strategy"`
	Series       string           `json:"series"`
	Knobs        []string         `json:"knobs"`
	Range        Span             `json:"range"`
	Combinations int              `json:"grid_combinations"`
	Failed       int              `json:"failed"`
	PurgeFrom    string           `json:"purge_from"` // "warmup" or "asked"
	Picks        []map[string]any `json:"picks"`      // per split, the picked combination's values
	Settings     Settings         `json:"settings"`
	// RunID is the ledger run its combinations were recorded under, as a
	// sweep's are (every combination is a trial).
	RunID    string   `json:"run_id,omitempty"`
	Warnings []string `json:"warnings"`
	*CPCVResult
}

// CPCV runs every combination of req's grid once over the whole range,
// keeping each one's per-bar returns, and cross-validates them: each
// split picks by the Sharpe ratio on its purged, embargoed training bars
// and is judged on its test groups.
func (l *Local) CPCV(ctx context.Context, req CPCVRequest, progress func(Progress)) (CPCVRunResult, error) {
	cfg := CPCVConfig{Groups: req.Groups, Test: req.Test, Embargo: DefaultCPCVEmbargo}
	if req.Embargo != nil {
		cfg.Embargo = *req.Embargo
	}
	if err := cfg.check(1 << 30); err != nil { // the bars are checked once read
		return CPCVRunResult{}, errorf(KindInvalid, "%v", err)
	}
	// A strategy under an open research plan is the plan's here too: its
	// holdout unread, its grid and its budget kept (plan_sealed.go).
	gate, err := l.gatePlan(ctx, "", req.StrategyRef, req.Series, &req.From, &req.To)
	if err != nil {
		return CPCVRunResult{}, err
	}
	if err := gate.inSpace(req.Grid, req.Params); err != nil { // plan_space.go
		return CPCVRunResult{}, err
	}
	var (
		p       *plan
		trials  []*worker.Trial
		span    Span
		refused int
	)
	if seriesless(req.Series) {
		// A portfolio strategy over its own universe: each combination's
		// returns on the universe's calendar.
		var base backtest.Request
		var err error
		p, base, err = l.portfolioPlan(ctx, req.StrategyRef, req.Grid, req.Params, "sharpe", req.From, req.To, req.Costs, req.MaxCombinations)
		if err != nil {
			return CPCVRunResult{}, err
		}
		if p.tooMany != nil {
			return CPCVRunResult{}, p.tooMany
		}
		p.base.Returns = true
		if trials, _, err = l.runPortfolioChunks(ctx, p, base, progress); err != nil {
			return CPCVRunResult{}, err
		}
		if p.seen == nil {
			return CPCVRunResult{}, errorf(KindStrategy, "every combination failed; run a backtest of one to see why")
		}
		span = Span{From: unixRFC3339(p.seen.First), To: unixRFC3339(p.seen.Last), Bars: p.seen.Count}
	} else {
		if _, single, err := l.seriesSet(req.Series); err != nil {
			return CPCVRunResult{}, err
		} else if !single {
			return CPCVRunResult{}, errorf(KindInvalid, "cpcv runs over one series, or a portfolio strategy's own universe (no series): give one series, not a series set")
		}
		var err error
		p, err = l.plan(ctx, planInput{
			ref: req.StrategyRef, series: req.Series, grid: req.Grid, params: req.Params, rankBy: "sharpe",
			from: req.From, to: req.To, costs: req.Costs, intrabar: req.Intrabar, maxCombinations: req.MaxCombinations,
		})
		if err != nil {
			return CPCVRunResult{}, err
		}
		if p.tooMany != nil {
			return CPCVRunResult{}, p.tooMany
		}
		if err := gate.admit(p.count); err != nil {
			return CPCVRunResult{}, err
		}
		n := p.bars.Len()
		sr := wfSeries{p: p, times: p.bars.Time}
		span = sr.span(0, n)
		nw, err := l.chunkWorkers(ctx)
		if err != nil {
			return CPCVRunResult{}, err
		}
		base := sr.rangeOf(0, n)
		base.Returns = true
		tasks := p.chunks(base, nw)
		offsets := make([]int, len(tasks))
		for i := 1; i < len(tasks); i++ {
			offsets[i] = offsets[i-1] + len(tasks[i-1].Combos)
		}
		trials = make([]*worker.Trial, p.count)
		done := 0
		report(progress, Progress{Total: p.count, Message: fmt.Sprintf("%d combinations over %d bars", p.count, n)})
		err = l.runTasks(ctx, tasks, func(i int, resp *worker.SweepChunkResult) ([]worker.SweepChunk, error) {
			refused += resp.Refused
			for j := range resp.Trials {
				trials[p.index(offsets[i]+j)] = &resp.Trials[j]
			}
			done += len(resp.Trials)
			report(progress, Progress{Done: done, Total: p.count, Message: "sweeping the whole range"})
			return nil, nil
		})
		if err != nil {
			return CPCVRunResult{}, classify(err)
		}
	}
	n := span.Bars
	series := req.Series
	if series == "" {
		series = p.base.Series
	}
	res := CPCVRunResult{Strategy: p.display, Series: series, Knobs: p.swept, Range: span, Combinations: p.count,
		Settings: p.settings, Warnings: []string{}, PurgeFrom: "asked"}
	gate.warn(&res.Warnings)
	if w := refusedWarning(refused); w != "" {
		res.Warnings = append(res.Warnings, w)
	}
	if l.cfg.Recorder != nil { // every combination is a trial, counted as a sweep's
		if rows := sweepRows(context.WithoutCancel(ctx), p, trials, nil); len(rows) > 0 {
			id, err := l.cfg.Recorder.Append(context.WithoutCancel(ctx), rows)
			res.RunID = id
			if err != nil {
				res.Warnings = append(res.Warnings, ledgerWarning(err))
			}
		}
	}
	var returns [][]float64
	var kept []*worker.Trial
	warmup := 0
	for _, t := range trials {
		if t == nil || t.Error != "" || len(t.Returns) != n {
			res.Failed++
			continue
		}
		returns = append(returns, t.Returns)
		kept = append(kept, t)
		warmup = max(warmup, t.Warmup)
	}
	if len(returns) == 0 {
		return CPCVRunResult{}, errorf(KindStrategy, "every combination failed; run a backtest of one to see why")
	}
	if res.Failed > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d of %d combinations failed and are left out of the cross-validation", res.Failed, p.count))
	}
	if req.Purge != nil {
		cfg.Purge = *req.Purge
	} else {
		cfg.Purge, res.PurgeFrom = max(1, warmup), "warmup"
	}
	cfg.PeriodsPerYear = p.gran.PeriodsPerYear()
	if !p.gran.Valid() { // a portfolio's plan: its trials' metrics say
		var m struct {
			P float64 `json:"periods_per_year"`
		}
		_ = json.Unmarshal(kept[0].Metrics, &m)
		cfg.PeriodsPerYear = m.P
	}
	cv, err := CPCV(returns, cfg)
	if err != nil {
		return CPCVRunResult{}, errorf(KindInvalid, "%v", err)
	}
	res.CPCVResult = cv
	for _, s := range cv.Splits {
		var v map[string]any
		if s.Picked >= 0 {
			v = kept[s.Picked].Values
		}
		res.Picks = append(res.Picks, v)
	}
	if cv.Median != nil && *cv.Median <= 0 {
		res.Warnings = append(res.Warnings, "the median out-of-sample path has a Sharpe ratio at or below 0: the grid's in-sample picks do not carry out of sample")
	}
	if cv.PBO != nil && *cv.PBO > 0.5 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("pbo %.2f: the in-sample pick ranks at or below the median out of sample in most splits; the grid overfits", *cv.PBO))
	}
	return res, nil
}
