package research

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"wicket/strategy/backtest"
	"wicket/strategy/ledger"
	"wicket/strategy/optimize"
	"wicket/strategy/worker"
)

// Optimisation bounds.
const (
	DefaultOptimizeTrials = 100
	MaxOptimizeBatch      = 256
	// DefaultOptimizeMethod is the method when a request names none.
	DefaultOptimizeMethod = optimize.MethodTPE
)

// OptimizeRequest asks for a guided search of a grid: the optimiser
// (Method) proposes a batch of combinations, the workers run them as one
// sweep's chunks, the results are told to it, and so on until the budget
// of Trials or Seconds is spent or the grid is exhausted. A range is
// searched as ordered values, a list as unordered choices.
type OptimizeRequest struct {
	StrategyRef
	Series string         `json:"series"`
	Grid   Grid           `json:"grid"`
	Params map[string]any `json:"params,omitempty"`
	Method string         `json:"method,omitempty"` // random, tpe (default) or cmaes
	// Trials is the run's budget of trials (resumed ones included):
	// default DefaultOptimizeTrials, at most research.max_combinations.
	Trials int `json:"trials,omitempty"`
	// Seconds, when set, stops asking for batches once this long has
	// passed (a batch under way finishes).
	Seconds float64 `json:"seconds,omitempty"`
	// Seed makes the proposals reproducible; default 1 (a resumed run
	// keeps its own).
	Seed *uint64 `json:"seed,omitempty"`
	// Batch is how many proposals run at once; default the workers'
	// parallelism.
	Batch  int    `json:"batch,omitempty"`
	RankBy string `json:"rank_by,omitempty"` // the objective; one of RankMetrics
	Top    int    `json:"top,omitempty"`
	From   string `json:"from,omitempty"`
	To     string `json:"to,omitempty"`
	Costs
	Intrabar string `json:"intrabar,omitempty"` // path (default) or pessimistic, as a backtest takes it
	// Resume continues the optimisation the ledger holds as this run id:
	// its trials are replayed into the optimiser and none is repeated;
	// it is refused under other costs or another intrabar rule.
	Resume    string `json:"resume,omitempty"`
	DeflateBy string `json:"deflate_by,omitempty"`
	Plan      string `json:"plan,omitempty"` // the research plan its trials count against
}

// OptimizeResult is a finished (or stopped) optimisation: its trials
// ranked by RankBy, the Pareto front of Sharpe against drawdown, the
// deflated Sharpe ratio of the winner over every trial of the run and
// over the ledger, and the probability of backtest overfitting of the
// evaluated set.
type OptimizeResult struct {
	Strategy string   `json:"strategy"`
	Series   string   `json:"series"`
	Method   string   `json:"method"`
	Seed     uint64   `json:"seed"`
	RankBy   string   `json:"rank_by"`
	Knobs    []string `json:"knobs"`
	// Combinations is the grid's size; Budget the trials asked for.
	Combinations int `json:"combinations"`
	Budget       int `json:"budget"`
	Batch        int `json:"batch"`
	Batches      int `json:"batches"` // run by this request
	// Evaluated counts the run's trials (Resumed of them replayed from
	// the ledger), failed ones included: N of DeflatedSharpe.
	Evaluated int `json:"evaluated"`
	Resumed   int `json:"resumed"`
	Failed    int `json:"failed"`
	// Stopped says why the search ended.
	Stopped       string  `json:"stopped"`
	Partial       bool    `json:"partial"`
	PartialReason string  `json:"partial_reason,omitempty"`
	Top           []Trial `json:"top"`
	TopClamped    string  `json:"top_clamped,omitempty"`
	// Pareto is the non-dominated trials on Sharpe (higher) against max
	// drawdown (smaller), highest Sharpe first, at most MaxTop.
	Pareto               []Trial         `json:"pareto"`
	DeflatedSharpe       *DeflatedSharpe `json:"deflated_sharpe"`
	LedgerDeflatedSharpe *DeflatedSharpe `json:"ledger_deflated_sharpe"`
	Overfitting          *Overfitting    `json:"overfitting,omitempty"`
	// RunID is the ledger's id of the run (every batch's rows carry it);
	// give it as Resume to continue.
	RunID          string       `json:"run_id,omitempty"`
	LookaheadCheck string       `json:"lookahead_check,omitempty"`
	Errors         []TrialError `json:"errors,omitempty"`
	Settings       Settings     `json:"settings"`
	Warnings       []string     `json:"warnings"`
}

// optimizeMark is what an optimisation adds to a trial's audit data in
// the ledger, so that the run can be resumed from the ledger alone: the
// optimiser's settings and the objective it was told.
type optimizeMark struct {
	Method    string        `json:"method"`
	Seed      uint64        `json:"seed"`
	Space     string        `json:"space"` // the grid, as spaceText writes it
	RankBy    string        `json:"rank_by"`
	Batch     int           `json:"batch"` // 1-based, in the run
	Objective worker.Num    `json:"objective"`
	Scores    worker.Scores `json:"scores"`
}

type optimizeAudit struct {
	trialAudit
	Optimize *optimizeMark `json:"optimize"`
}

// runReader reads a run's rows back (*ledger.Ledger has it): what resume
// needs of the Recorder.
type runReader interface {
	Query(ctx context.Context, f ledger.Filter) ([]ledger.Row, int, error)
}

// Optimize runs a guided search of req.Grid (see OptimizeRequest). Every
// batch's trials are recorded in the ledger as they finish, under one
// run id, before the next batch is asked for; progress, when set, is
// called as chunks finish. When ctx ends, Optimize returns promptly with
// the trials that finished (recorded too) and Partial set.
func (l *Local) Optimize(ctx context.Context, req OptimizeRequest, progress func(Progress)) (OptimizeResult, error) {
	if err := req.check(l.cfg.Research.MaxCombinations); err != nil {
		return OptimizeResult{}, err
	}
	gate, err := l.gatePlan(ctx, req.Plan, req.StrategyRef, req.Series, &req.From, &req.To) // plan_sealed.go
	if err != nil {
		return OptimizeResult{}, err
	}
	if err := gate.inSpace(req.Grid, req.Params); err != nil { // plan_space.go
		return OptimizeResult{}, err
	}
	m, err := l.modeOf(req.Series) // mode.go
	if err != nil {
		return OptimizeResult{}, err
	}
	return m.optimize(ctx, req, gate, progress)
}

// optimization is one optimisation of a series under way: its plan,
// search space and optimiser, and the run's trials so far (those resumed
// first), in the order told.
type optimization struct {
	l         *Local
	req       OptimizeRequest
	p         *plan
	ss        *searchSpace
	o         optimize.Optimizer
	res       *OptimizeResult
	all       []*worker.Trial
	lastSeq   int64 // the ledger's last row of the run
	lastBatch int
}

func (m seriesMode) optimize(ctx context.Context, req OptimizeRequest, gate *planGate, progress func(Progress)) (OptimizeResult, error) {
	l := m.l
	p, err := l.plan(ctx, planInput{
		ref: req.StrategyRef, series: req.Series, grid: req.Grid, params: req.Params, rankBy: req.RankBy,
		from: req.From, to: req.To, costs: req.Costs, intrabar: req.Intrabar, barsInWorker: true, space: true,
	})
	if err != nil {
		return OptimizeResult{}, err
	}
	if p.tooMany != nil {
		return OptimizeResult{}, errorf(KindTooMany, "the grid has more combinations than an optimiser can index; narrow the ranges or coarsen the steps")
	}
	ss, err := newSearchSpace(p, req.Grid)
	if err != nil {
		return OptimizeResult{}, err
	}
	method := strings.ToLower(req.Method)
	if method == "" {
		method = DefaultOptimizeMethod
	}
	seed := uint64(1)
	if req.Seed != nil {
		seed = *req.Seed
	}
	budget := req.Trials
	if budget == 0 {
		budget = min(DefaultOptimizeTrials, l.cfg.Research.MaxCombinations)
	}
	res := OptimizeResult{
		Strategy: p.display, Series: req.Series, RankBy: p.rankBy, Knobs: p.swept, Combinations: p.count,
		Budget: budget, Top: []Trial{}, Pareto: []Trial{}, Settings: p.settings, Warnings: []string{},
	}
	p.base.Blocks = PBOBlocks
	run := &optimization{l: l, req: req, p: p, ss: ss, res: &res}
	if req.Resume != "" {
		if method, seed, err = run.resume(ctx, method); err != nil {
			return OptimizeResult{}, err
		}
	}
	res.Method, res.Seed = method, seed
	if err := gate.admit(min(budget, p.count) - res.Resumed); err != nil {
		return OptimizeResult{}, err
	}
	gate.warn(&res.Warnings)
	if run.o, err = optimize.New(method, ss.space, seed); err != nil {
		return OptimizeResult{}, errorf(KindInvalid, "method: %v", err)
	}
	for _, t := range run.all {
		pt, err := ss.point(p, t.Values)
		if err == nil {
			err = run.o.Tell(pt, objective(t, p.rankBy))
		}
		if err != nil {
			return OptimizeResult{}, errorf(KindInvalid, "resume %s: a trial (%s) cannot be replayed: %v", req.Resume, fmtParams(t.Values), err)
		}
	}
	if err := run.batches(ctx, progress); err != nil {
		return OptimizeResult{}, err
	}
	if ctx.Err() != nil {
		res.Partial = true
		res.PartialReason = fmt.Sprintf("cancelled after %d of %d trials: %v", len(run.all), budget, context.Cause(ctx))
		res.Stopped = "cancelled"
	}
	if err := l.afterOptimize(ctx, p, run.all, run.lastSeq, req, &res); err != nil {
		return OptimizeResult{}, err
	}
	return res, nil
}

// resume reads the rows of the run req.Resume names into the run's
// trials, and returns the method and seed it ran with.
func (r *optimization) resume(ctx context.Context, method string) (string, uint64, error) {
	rows, method, seed, err := r.l.resumeRows(ctx, r.req, r.p, r.ss, method)
	if err != nil {
		return "", 0, err
	}
	r.res.RunID = r.req.Resume
	for _, row := range rows {
		r.all = append(r.all, trialOfRow(row))
		r.lastSeq = max(r.lastSeq, row.Seq)
	}
	r.res.Resumed = len(rows)
	var a optimizeAudit
	if json.Unmarshal(rows[len(rows)-1].Audit, &a) == nil && a.Optimize != nil {
		r.lastBatch = a.Optimize.Batch
	}
	return method, seed, nil
}

// batches asks the optimiser for batches of points, runs them and tells it
// their objectives, recording each batch in the ledger before the next,
// until the budget of trials or of time is spent, the grid is exhausted,
// or ctx ends.
func (r *optimization) batches(ctx context.Context, progress func(Progress)) error {
	l, p, res := r.l, r.p, r.res
	budget := res.Budget
	nw, err := l.chunkWorkers(ctx)
	if err != nil {
		return err
	}
	batch := r.req.Batch
	if batch == 0 {
		batch = nw
	}
	res.Batch = batch
	start := l.cfg.Now()
	report(progress, Progress{Done: len(r.all), Total: budget, Message: fmt.Sprintf("%d of %d trials", len(r.all), budget)})
	for {
		if len(r.all) >= budget {
			res.Stopped = fmt.Sprintf("the budget of %d trials is spent", budget)
			return nil
		}
		if r.req.Seconds > 0 && l.cfg.Now().Sub(start).Seconds() >= r.req.Seconds {
			res.Stopped = fmt.Sprintf("the time budget of %s s is spent", fmtNum(r.req.Seconds))
			return nil
		}
		if ctx.Err() != nil {
			return nil
		}
		pts := r.o.Ask(min(batch, budget-len(r.all)))
		if len(pts) == 0 {
			res.Stopped = fmt.Sprintf("every one of the grid's %d combinations is tried", p.count)
			return nil
		}
		r.lastBatch++
		trials, runErr := l.runBatch(ctx, p, r.ss, pts, nw, func(done int) {
			report(progress, Progress{Done: len(r.all) + done, Total: budget,
				Message: fmt.Sprintf("batch %d: %d of %d trials", r.lastBatch, len(r.all)+done, budget)})
		})
		res.Batches++
		var rows []ledger.Row
		var told []*worker.Trial
		for i, t := range trials {
			if t == nil {
				continue
			}
			y := objective(t, p.rankBy)
			if err := r.o.Tell(pts[i], y); err != nil {
				return fmt.Errorf("optimize: %w", err)
			}
			told = append(told, t)
			rows = append(rows, optimizeRow(ctx, p, t, &optimizeMark{Method: res.Method, Seed: res.Seed, Space: r.ss.text, RankBy: p.rankBy,
				Batch: r.lastBatch, Objective: worker.Num(y), Scores: t.Scores}))
		}
		r.all = append(r.all, told...)
		if seq := l.recordBatch(ctx, rows, res); seq > 0 {
			r.lastSeq = seq
			report(progress, Progress{Done: len(r.all), Total: budget, RunID: res.RunID,
				Message: fmt.Sprintf("batch %d recorded: %d of %d trials in run %s", r.lastBatch, len(r.all), budget, res.RunID)})
		}
		if runErr != nil {
			if res.RunID != "" {
				return resumable(classify(runErr), res.RunID, len(r.all))
			}
			return classify(runErr)
		}
	}
}

// check refuses a request's bad bounds before any work.
func (req OptimizeRequest) check(maxTrials int) error {
	switch {
	case req.Top < 0:
		return errorf(KindInvalid, "top %d must be positive (default %d, at most %d)", req.Top, DefaultTop, MaxTop)
	case req.Trials < 0:
		return errorf(KindInvalid, "trials %d must be positive (default %d)", req.Trials, DefaultOptimizeTrials)
	case req.Trials > maxTrials:
		return errorf(KindInvalid, "trials %d is above this project's cap of %d (research.max_combinations in wicket.toml, which only the operator raises)", req.Trials, maxTrials)
	case req.Seconds < 0 || math.IsNaN(req.Seconds) || math.IsInf(req.Seconds, 0):
		return errorf(KindInvalid, "seconds %v must be a positive number of seconds", req.Seconds)
	case req.Batch < 0 || req.Batch > MaxOptimizeBatch:
		return errorf(KindInvalid, "batch %d must be 1 to %d (default the workers' parallelism)", req.Batch, MaxOptimizeBatch)
	case req.DeflateBy != "" && !slices.Contains(ledger.Scopes, req.DeflateBy):
		return errorf(KindInvalid, "deflate_by %q is not one of %s (default %s: every strategy's trials on the series)",
			req.DeflateBy, strings.Join(ledger.Scopes, ", "), ledger.ScopeSeries)
	}
	if req.Method != "" && !slices.Contains(optimize.Methods, strings.ToLower(req.Method)) {
		return errorf(KindInvalid, "method %q is not one of %s (default %s)", req.Method, strings.Join(optimize.Methods, ", "), DefaultOptimizeMethod)
	}
	return nil
}

// runBatch runs the points as one sweep's chunks, spread over the
// workers (or the cluster), and returns their trials in the points'
// order, nil where one did not finish. done is told how many have.
func (l *Local) runBatch(ctx context.Context, p *plan, ss *searchSpace, pts []optimize.Point, workers int, done func(int)) ([]*worker.Trial, error) {
	size := (len(pts) + workers - 1) / workers
	var tasks []worker.SweepChunk
	var offsets []int
	for lo := 0; lo < len(pts); lo += size {
		req := p.base
		hi := min(len(pts), lo+size)
		req.Combos = make([]map[string]any, 0, hi-lo)
		for _, pt := range pts[lo:hi] {
			req.Combos = append(req.Combos, ss.combo(p, pt))
		}
		tasks = append(tasks, req)
		offsets = append(offsets, lo)
	}
	trials := make([]*worker.Trial, len(pts))
	n := 0
	err := l.runTasks(ctx, tasks, func(i int, resp *worker.SweepChunkResult) ([]worker.SweepChunk, error) {
		if err := p.saw(resp.Bars); err != nil {
			return nil, err
		}
		if len(resp.Trials) != len(tasks[i].Combos) {
			return nil, errorf(KindUnavailable, "a worker answered %d trials for a chunk of %d", len(resp.Trials), len(tasks[i].Combos))
		}
		for j := range resp.Trials {
			trials[offsets[i]+j] = &resp.Trials[j]
		}
		n += len(resp.Trials)
		done(n)
		return nil, nil
	})
	return trials, err
}

// afterOptimize ranks the run's trials, finds the Pareto front and
// computes the deflated Sharpe ratios, the probability of backtest
// overfitting and the winner's lookahead check.
func (l *Local) afterOptimize(ctx context.Context, p *plan, all []*worker.Trial, lastSeq int64, req OptimizeRequest, res *OptimizeResult) error {
	res.Overfitting = overfitting(all, p.base.Blocks)
	rk := rankTrials(all, p.rankBy)
	res.Evaluated, res.Failed, res.Errors = rk.evaluated, rk.failed, rk.errors
	if rk.failed > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d of %d trials failed and are not ranked; errors lists the first", rk.failed, rk.evaluated))
	}
	if len(rk.order) == 0 {
		if !res.Partial && rk.failed > 0 {
			return errorf(KindStrategy, "every trial failed; the first (%s): %s", fmtParams(rk.errors[0].Params), rk.errors[0].Message)
		}
		return nil
	}
	var top int
	top, res.TopClamped = topOf(req.Top)
	for r, idx := range rk.order[:min(top, len(rk.order))] {
		t := all[idx]
		res.Top = append(res.Top, Trial{Rank: r + 1, Params: t.Values, Score: reportedScore(t.Scores, p.rankBy), Metrics: t.Metrics})
	}
	if len(rk.order) > top && res.TopClamped == "" && req.Top == 0 {
		res.TopClamped = fmt.Sprintf("showing the best %d of %d ranked trials; ask for up to %d with top", top, len(rk.order), MaxTop)
	}
	// The Pareto front of the trials that traded: one that never did has
	// no drawdown and would stand on the front as the best on drawdown
	// (issue 45 item 7).
	rankOf := make(map[int]int, len(rk.order))
	var onFront []int // indexes into all
	var scores []optimize.Score
	for r, idx := range rk.order {
		rankOf[idx] = r + 1
		if !traded(all[idx]) {
			continue
		}
		s := all[idx].Scores
		onFront = append(onFront, idx)
		scores = append(scores, optimize.Score{Sharpe: float64(s.Sharpe), MaxDrawdown: float64(s.MaxDrawdown)})
	}
	if n := len(rk.order) - len(onFront); n > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d of %d ranked trials never traded and are left out of the Pareto front", n, len(rk.order)))
	}
	front := optimize.ParetoFront(scores)
	for _, r := range front[:min(MaxTop, len(front))] {
		idx := onFront[r]
		t := all[idx]
		res.Pareto = append(res.Pareto, Trial{Rank: rankOf[idx], Params: t.Values, Score: reportedScore(t.Scores, p.rankBy), Metrics: t.Metrics})
	}
	win := all[rk.order[0]]
	res.DeflatedSharpe = deflated(win.Stats, variance(rk.srs), rk.evaluated)
	res.DeflatedSharpe.Note = fmt.Sprintf("over all %d trials of this optimisation, failed ones included; %s", rk.evaluated, res.DeflatedSharpe.Note)
	if l.cfg.Recorder != nil && lastSeq > 0 {
		set, d, warn, err := l.ledgerDeflated(context.WithoutCancel(ctx), p, win.Stats, req.DeflateBy, lastSeq)
		if err != nil {
			res.Warnings = append(res.Warnings, fmt.Sprintf("the deflated Sharpe ratio over the research ledger is missing: %v", err))
		} else {
			if warn != "" {
				res.Warnings = append(res.Warnings, warn)
			}
			d.Note = fmt.Sprintf("over all %d %s trials in the research ledger (%d on the series, %d of them %s's), this optimisation's included",
				d.Trials, set.Scope, set.Series, set.Strategy, p.ledgerName)
			res.LedgerDeflatedSharpe = d
		}
	}
	if res.Partial {
		res.LookaheadCheck = "not run: the optimisation was cancelled"
	} else {
		c, err := l.checkWinner(ctx, p, win.Values)
		if err != nil {
			return err
		}
		res.LookaheadCheck = c
	}
	if win.Trades < backtest.TooFewTrades {
		res.Warnings = append(res.Warnings, fmt.Sprintf("the winner made only %d closed trades; its metrics rest on too few to judge it by", win.Trades))
	}
	return nil
}

// Optimize runs an optimisation on the service, reporting its progress.
// When ctx ends it asks the service to stop and returns what finished,
// like Local.
func (c *Client) Optimize(ctx context.Context, req OptimizeRequest, progress func(Progress)) (OptimizeResult, error) {
	var out OptimizeResult
	return out, c.stream(ctx, PathOptimize, req, progress, &out)
}

// markOptimizeWinner marks an optimisation's winner among its exported
// trials (rows and trials in the same order): its rows are recorded batch
// by batch, before the winner is known, so none carries the mark a
// sweep's winner does. The winner is the one Optimize reports, the best by
// the run's rank metric, ties by ledger order.
func markOptimizeWinner(rows []ledger.Row, trials []ExportTrial) {
	if len(rows) != len(trials) {
		return
	}
	all := make([]*worker.Trial, len(rows))
	rankBy := ""
	for i, r := range rows {
		var a optimizeAudit
		if json.Unmarshal(r.Audit, &a) != nil || a.Optimize == nil || trials[i].Winner {
			return
		}
		rankBy = a.Optimize.RankBy
		all[i] = trialOfRow(r)
	}
	if rk := rankTrials(all, rankBy); len(rk.order) > 0 {
		trials[rk.order[0]].Winner = true
	}
}

// traded reports whether a trial ever held a position: a closed trade, or
// exposure (a position held to the end closes no trade).
func traded(t *worker.Trial) bool {
	return t.Trades > 0 || float64(t.Scores.Exposure) > 0
}
