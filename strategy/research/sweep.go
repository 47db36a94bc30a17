package research

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"wicket/strategy/backtest"
	"wicket/strategy/ledger"
	"wicket/strategy/worker"
)

// Sweep backtests every combination of req.Grid (knobs outside the grid
// keep req.Params or their defaults) and ranks them by req.RankBy. The
// grid is checked against the strategy's knobs, and its size against the
// cap, before any combination runs. progress, when set, is called from one
// goroutine at a time as chunks of combinations finish, and must return
// quickly (the workers' next chunks wait on it). When ctx ends
// mid-sweep, Sweep returns promptly with the combinations that finished,
// Partial set, and no error.
func (l *Local) Sweep(ctx context.Context, req SweepRequest, progress func(Progress)) (SweepResult, error) {
	if req.Top < 0 {
		return SweepResult{}, errorf(KindInvalid, "top %d must be positive (default %d, at most %d)", req.Top, DefaultTop, MaxTop)
	}
	if req.DeflateBy != "" && !slices.Contains(ledger.Scopes, req.DeflateBy) {
		return SweepResult{}, errorf(KindInvalid, "deflate_by %q is not one of %s (default %s: every strategy's trials on the series)",
			req.DeflateBy, strings.Join(ledger.Scopes, ", "), ledger.ScopeSeries)
	}
	gate, err := l.gatePlan(ctx, req.Plan, req.StrategyRef, req.Series, &req.From, &req.To) // plan_sealed.go
	if err != nil {
		return SweepResult{}, err
	}
	if err := gate.inSpace(req.Grid, req.Params); err != nil { // plan_space.go
		return SweepResult{}, err
	}
	m, err := l.modeOf(req.Series) // mode.go
	if err != nil {
		return SweepResult{}, err
	}
	return m.sweep(ctx, req, gate, progress)
}

// seriesSweep is one single-series sweep under way: its plan, its
// trials as the chunks answer, and its timing.
type seriesSweep struct {
	l     *Local
	p     *plan
	req   SweepRequest
	after *Local // afterSweep's Local: its ledger calls timed when someone reads tm
	sink  func(SweepTiming)
	// The phases are timed on the monotonic clock, not Config.Now, which
	// decides things (an estimate, a time budget) and is not theirs to
	// advance.
	clk    clock
	start  time.Time
	tm     SweepTiming
	trials []*worker.Trial
	// early is the lookahead proof of the best combination so far, started
	// when a worker of this machine has no chunk left while others run
	// theirs: when that one stays the winner, its proof is done or under
	// way by the end. Whatever becomes of it, the sweep waits for it.
	early         *proof
	done, refused int
}

func (m seriesMode) sweep(ctx context.Context, req SweepRequest, gate *planGate, progress func(Progress)) (SweepResult, error) {
	l := m.l
	s := &seriesSweep{l: l, req: req, after: l, sink: l.timing(), clk: clock{now: time.Now, last: time.Now()}}
	s.start = s.clk.last
	if s.sink != nil {
		s.after = l.timedLedger(&s.tm.Ledger)
	}
	// The workers of this machine share one read-only copy of the bars,
	// in a directory of this sweep's (the mappings outlive the file).
	share := ""
	if l.cfg.Chunks == nil && !req.Estimate {
		var err error
		if share, err = os.MkdirTemp("", "wicket-bars-"); err != nil {
			return SweepResult{}, errorf(KindUnavailable, "make a directory for the sweep's shared bars (TMPDIR must be writable): %v", err)
		}
		defer os.RemoveAll(share)
	}
	p, err := l.plan(ctx, planInput{
		ref: req.StrategyRef, series: req.Series, grid: req.Grid, params: req.Params, rankBy: req.RankBy,
		from: req.From, to: req.To, costs: req.Costs, intrabar: req.Intrabar, maxCombinations: req.MaxCombinations,
		barsInWorker: true, shareDir: share,
	})
	if err != nil {
		return SweepResult{}, err
	}
	s.p = p
	res := SweepResult{
		Strategy: p.display, Series: req.Series, RankBy: p.rankBy, Knobs: p.swept,
		Combinations: p.count, Top: []Trial{}, Settings: p.settings, Warnings: []string{},
	}
	if !req.Estimate {
		if err := gate.admit(p.count); err != nil {
			return SweepResult{}, err
		}
	}
	gate.warn(&res.Warnings)
	if req.Estimate {
		return l.estimate(ctx, p, res)
	}
	if p.tooMany != nil {
		return SweepResult{}, p.tooMany
	}
	_, res.TopClamped = topOf(req.Top)
	defer s.waitEarly()
	if err := s.run(ctx, progress); err != nil {
		return SweepResult{}, err
	}
	if ctx.Err() != nil {
		res.Partial = true
		res.PartialReason = fmt.Sprintf("cancelled after %d of %d combinations: %v", s.done, p.count, context.Cause(ctx))
	}
	if err := s.finish(ctx, &res); err != nil {
		return SweepResult{}, err
	}
	timed(s.sink, s.tm, s.start)
	return res, nil
}

// waitEarly waits for the early proof, when one is under way and was not
// kept as the winner's.
func (s *seriesSweep) waitEarly() {
	if s.early != nil {
		<-s.early.done
	}
}

// run runs the plan's combinations in chunks over the workers, filling
// s.trials, and starts the early proof when a worker runs out of chunks.
func (s *seriesSweep) run(ctx context.Context, progress func(Progress)) error {
	l, p := s.l, s.p
	s.trials = make([]*worker.Trial, p.count)
	p.base.Blocks = pboBlocksFor(p.count)
	nw, err := l.chunkWorkers(ctx)
	if err != nil {
		return err
	}
	if l.cfg.Chunks == nil {
		nw = workersFor(sweepWork(p.count, p.barCount()), nw)
	}
	tasks := p.chunks(p.base, nw)
	tm := &s.tm
	tm.Workers, tm.Combinations, tm.Bars, tm.Plan, tm.Params = nw, p.count, p.barCount(), s.clk.lap(), p.asked
	offsets := make([]int, len(tasks))
	for i := 1; i < len(tasks); i++ {
		offsets[i] = offsets[i-1] + len(tasks[i-1].Combos)
	}
	report(progress, Progress{Done: 0, Total: p.count, Message: fmt.Sprintf("0 of %d combinations", p.count)})
	err = l.runTasksOn(ctx, l.underWay(nw), tasks, func(i int, resp *worker.SweepChunkResult) ([]worker.SweepChunk, error) {
		if err := p.saw(resp.Bars); err != nil {
			return nil, err
		}
		for j := range resp.Trials {
			s.trials[p.index(offsets[i]+j)] = &resp.Trials[j]
		}
		s.done += len(resp.Trials)
		s.refused += resp.Refused
		tm.Chunks++
		tm.Calls += resp.Called
		tm.Worker += time.Duration(resp.Seconds * float64(time.Second))
		tm.Work += time.Duration(resp.Work * float64(time.Second))
		msg := fmt.Sprintf("%d of %d combinations", s.done, p.count)
		if s.refused > 0 {
			msg += fmt.Sprintf(" (forged cluster answers refused: %d)", s.refused)
		}
		report(progress, Progress{Done: s.done, Total: p.count, Message: msg})
		if left := len(tasks) - tm.Chunks; s.early == nil && l.cfg.Chunks == nil && left > 0 && left < nw {
			if rk := rankTrials(s.trials, p.rankBy); len(rk.order) > 0 {
				s.early = l.prove(ctx, p, rk.order[0], s.trials[rk.order[0]].Values)
			}
		}
		return nil, nil
	})
	if err != nil {
		return classify(err)
	}
	s.tm.Run = s.clk.lap()
	return nil
}

// finish ranks the trials, lists the top, records them (afterSweep) while
// the winner's lookahead proof runs, and adds the winner's warnings.
func (s *seriesSweep) finish(ctx context.Context, res *SweepResult) error {
	p, trials, tm := s.p, s.trials, &s.tm
	rk := rankTrials(trials, p.rankBy)
	tm.Rank = s.clk.lap()
	res.Evaluated, res.Failed = rk.evaluated, rk.failed
	res.Errors = rk.errors
	if w := refusedWarning(s.refused); w != "" {
		res.Warnings = append(res.Warnings, w)
	}
	if rk.failed > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d of %d combinations failed and are not ranked; errors lists the first", rk.failed, rk.evaluated))
	}
	if len(rk.order) == 0 {
		if !res.Partial && rk.failed > 0 {
			return errorf(KindStrategy, "every combination failed; the first (%s): %s", fmtParams(rk.errors[0].Params), rk.errors[0].Message)
		}
		s.after.afterSweep(ctx, p, trials, nil, s.req.DeflateBy, res)
		tm.After = s.clk.lap()
		return nil
	}
	top, _ := topOf(s.req.Top)
	res.listTop(rk, trials, p.rankBy, top, s.req.Top)
	win := trials[rk.order[0]]
	res.DeflatedSharpe = deflated(win.Stats, variance(rk.srs), rk.evaluated)
	// The winner's lookahead check runs in a worker while this process
	// computes the overfitting statistics and writes the ledger (or ran
	// already, when the best so far at the tail stayed the winner).
	var proved *proof
	switch {
	case res.Partial:
		proved = &proof{done: make(chan verdict, 1)}
		proved.done <- verdict{check: "not run: the sweep was cancelled"}
	case s.early != nil && s.early.index == rk.order[0]:
		proved, s.early, tm.ProofEarly = s.early, nil, true
	default:
		proved = s.l.prove(ctx, p, rk.order[0], win.Values)
	}
	s.clk.lap()
	s.after.afterSweep(ctx, p, trials, win, s.req.DeflateBy, res)
	tm.After = s.clk.lap()
	v := <-proved.done
	tm.Proof, tm.ProofRun = s.clk.lap(), v.took
	if v.err != nil {
		return v.err
	}
	res.LookaheadCheck = v.check
	winnerWarnings(win, res)
	return nil
}

// winnerWarnings adds the warnings the winner's own figures call for:
// too few trades, fills cut by the volume cap, results too good.
func winnerWarnings(win *worker.Trial, res *SweepResult) {
	if win.Trades < backtest.TooFewTrades {
		res.Warnings = append(res.Warnings, fmt.Sprintf("the winner made only %d closed trades; its metrics rest on too few to judge it by", win.Trades))
	}
	var capped struct {
		N int `json:"volume_capped_fills"`
	}
	if json.Unmarshal(win.Metrics, &capped) == nil && capped.N > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("the winner's volume cap cut %d fills short: it trades more than its bars' volume can absorb (its backtest names the orders)", capped.N))
	}
	if d := res.DeflatedSharpe; d != nil {
		dsr := math.NaN()
		if d.DSR != nil {
			dsr = *d.DSR
		}
		if note := backtest.TooGoodNote(float64(win.Scores.Sharpe), win.Trades, dsr); note != "" {
			res.Warnings = append(res.Warnings, "the winner: "+note)
		}
	}
}

// proof is a lookahead proof of combination index under way in a
// worker; done receives its verdict.
type proof struct {
	index int
	done  chan verdict
}

// verdict is a lookahead proof's outcome, and how long it took.
type verdict struct {
	check string
	err   error
	took  time.Duration
}

// prove starts the lookahead proof of p's combination index (values) in
// a worker (checkWinner).
func (l *Local) prove(ctx context.Context, p *plan, index int, values map[string]any) *proof {
	return startProof(index, func() (string, error) { return l.checkWinner(ctx, p, values) })
}

// startProof runs check, the proof of combination index, in a goroutine
// of its own, and returns once that goroutine runs, so that the proof's
// request is on its way to the worker before the caller turns to its own
// work. Without the wait the goroutine waited for a processor behind the
// PBO's goroutines and the ledger's write, which keep every one busy:
// BenchmarkSweepWarm found the request sent a median 0.1 ms after the
// proof was started, but 3.4-7.6 ms at the 90th percentile and up to
// 19 ms (load average 3 on 2 cores), while the worker sat idle.
func startProof(index int, check func() (string, error)) *proof {
	pr := &proof{index: index, done: make(chan verdict, 1)}
	running := make(chan struct{})
	go func() {
		close(running) // this goroutine keeps its processor: it sends the request before it waits
		asked := time.Now()
		c, err := check()
		pr.done <- verdict{c, err, time.Since(asked)}
	}()
	<-running
	return pr
}

// topOf is how many of the best a result lists for a request's top (0:
// the default), and the note when the request asked for more than the
// maximum.
func topOf(asked int) (top int, clamped string) {
	switch {
	case asked == 0:
		return DefaultTop, ""
	case asked > MaxTop:
		return MaxTop, fmt.Sprintf("top %d is above the maximum %d; showing %d", asked, MaxTop, MaxTop)
	}
	return asked, ""
}

// listTop lists the best top of rk's ranked trials in res, with a note
// when more were ranked than a default-sized list shows (asked: the
// request's top).
func (res *SweepResult) listTop(rk ranking, trials []*worker.Trial, rankBy string, top, asked int) {
	for r, idx := range rk.order[:min(top, len(rk.order))] {
		t := trials[idx]
		res.Top = append(res.Top, Trial{Rank: r + 1, Params: t.Values, Score: reportedScore(t.Scores, rankBy), Metrics: t.Metrics})
	}
	if len(rk.order) > top && res.TopClamped == "" && asked == 0 {
		res.TopClamped = fmt.Sprintf("showing the best %d of %d ranked combinations; ask for up to %d with top", top, len(rk.order), MaxTop)
	}
}

// scoreOf is the rank metric of a trial's scores.
func scoreOf(s worker.Scores, metric string) float64 {
	switch metric {
	case RankCAGR:
		return float64(s.CAGR)
	case RankCalmar:
		return float64(s.Calmar)
	case RankProfitFactor:
		return float64(s.ProfitFactor)
	case RankTotalReturn:
		return float64(s.TotalReturn)
	case RankMaxDrawdown:
		return float64(s.MaxDrawdown)
	}
	return float64(s.Sharpe)
}

// reportedScore is a trial's rank_by figure as a result reports it:
// rounded, and an annualised one (sharpe, cagr, calmar) within
// backtest.AnnualisedBound, as a report's metrics are: a short run's CAGR
// compounds past 1e300 and reads as noise (issue 45 item 7).
func reportedScore(s worker.Scores, metric string) *float64 {
	x := scoreOf(s, metric)
	switch metric {
	case RankSharpe, RankCAGR, RankCalmar:
		x = backtest.Bounded(x)
	}
	return backtest.Ratio(x)
}

func report(progress func(Progress), p Progress) {
	if progress != nil {
		progress(p)
	}
}

// ranking is the order of the successful trials, best first.
type ranking struct {
	order     []int // indexes into the trials, best first
	srs       []float64
	evaluated int
	failed    int
	errors    []TrialError
}

// rankTrials orders the finished, successful trials by metric: highest
// first (lowest for max_drawdown), undefined scores last, ties by
// combination order. nil trials did not finish.
func rankTrials(trials []*worker.Trial, metric string) ranking {
	var rk ranking
	for i, t := range trials {
		if t == nil {
			continue
		}
		rk.evaluated++
		if t.Error != "" {
			rk.failed++
			if len(rk.errors) < MaxTrialErrors {
				rk.errors = append(rk.errors, TrialError{Params: t.Values, Message: t.Error})
			}
			continue
		}
		rk.order = append(rk.order, i)
		if sr := float64(t.Stats.SR); !math.IsNaN(sr) {
			rk.srs = append(rk.srs, sr)
		}
	}
	lower := metric == RankMaxDrawdown
	sort.SliceStable(rk.order, func(a, b int) bool {
		x, y := scoreOf(trials[rk.order[a]].Scores, metric), scoreOf(trials[rk.order[b]].Scores, metric)
		xn, yn := math.IsNaN(x), math.IsNaN(y)
		switch {
		case xn || yn:
			return !xn && yn
		case lower:
			return x < y
		}
		return x > y
	})
	return rk
}

// fmtParams writes knob values as "fast=5, slow=20" in name order.
func fmtParams(p map[string]any) string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	s := ""
	for i, k := range keys {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s=%v", k, p[k])
	}
	return s
}

// runTasks hands tasks to the worker pool, as many at once as the pool
// has workers (or as its dispatcher keeps under way), in order. done is
// called, one call at a time, for each finished task; it may return more
// tasks (they run before the tasks still waiting, their indexes following
// on) or an error. runTasks returns the first failure, of a worker or of
// done, which stops the rest; when ctx ends it stops handing out tasks
// and returns nil, and the tasks that finished are the ones done saw.
func (l *Local) runTasks(ctx context.Context, tasks []worker.SweepChunk, done func(i int, resp *worker.SweepChunkResult) ([]worker.SweepChunk, error)) error {
	return l.runTasksOn(ctx, l.underWay(l.chunks().Size()), tasks, done)
}

// underWay is how many tasks to keep under way for workers workers: a
// dispatcher that fetches ahead (pipeliner) is kept as busy as it asks.
func (l *Local) underWay(workers int) int {
	n := max(1, workers)
	if d, ok := l.chunks().(pipeliner); ok {
		n = max(n, d.InFlight())
	}
	return n
}

// runTasksOn is runTasks with at most n tasks under way at once.
func (l *Local) runTasksOn(ctx context.Context, n int, tasks []worker.SweepChunk, done func(i int, resp *worker.SweepChunkResult) ([]worker.SweepChunk, error)) error {
	inner, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		mu       sync.Mutex
		cond     = sync.NewCond(&mu)
		queue    = make([]int, len(tasks)) // task indexes, in the order they run
		running  int
		firstErr error
		wg       sync.WaitGroup
	)
	for i := range queue {
		queue[i] = i
	}
	stopWake := context.AfterFunc(inner, func() {
		mu.Lock()
		defer mu.Unlock()
		cond.Broadcast()
	})
	defer stopWake()
	fail := func(err error) {
		if firstErr == nil && ctx.Err() == nil {
			firstErr = err
			cancel(err)
		}
	}
	for range max(1, n) {
		wg.Go(func() {
			mu.Lock()
			defer mu.Unlock()
			for {
				for len(queue) == 0 && running > 0 && inner.Err() == nil {
					cond.Wait()
				}
				if inner.Err() != nil || len(queue) == 0 {
					cond.Broadcast()
					return
				}
				i := queue[0]
				queue = queue[1:]
				req := tasks[i]
				running++
				mu.Unlock()
				sent := time.Now()
				resp, err := l.chunks().Sweep(inner, req)
				resp.Called = time.Since(sent)
				mu.Lock()
				running--
				switch {
				case err != nil:
					fail(err)
				case firstErr == nil:
					if l.cfg.Computed != nil && len(resp.Computed) > 0 {
						l.cfg.Computed(resp.Computed)
					}
					more, err := done(i, &resp)
					if err != nil {
						fail(err)
					}
					first := make([]int, len(more), len(more)+len(queue))
					for j := range more {
						first[j] = len(tasks) + j
					}
					tasks = append(tasks, more...)
					queue = append(first, queue...)
				}
				cond.Broadcast()
			}
		})
	}
	wg.Wait()
	return firstErr
}

// workersFor is how many of size workers a sweep whose combinations
// take work in all runs on. A worker beyond the first costs the sweep a
// fixed share whatever its work (its chunks' round trips, more and
// smaller chunks, its own indicator columns, and on two cores the
// caller's decoding competing with two workers instead of one), so a
// sweep takes another worker only when each would get at least
// minWorkerShare of work: below that a worker saves less than it costs.
func workersFor(work time.Duration, size int) int {
	if size <= 1 {
		return 1
	}
	return max(1, min(size, int(work/minWorkerShare)))
}

// sweepWork is what count combinations over bars bars take, from the
// cost of the cheapest strategies' bar (barTrialCost); a strategy that
// does more per bar has more work than this says, so the rule errs
// toward fewer workers only where the work is small anyway. Unknown
// bars (0) are work enough for any pool.
func sweepWork(count, bars int) time.Duration {
	if bars <= 0 {
		return math.MaxInt64
	}
	return time.Duration(float64(count) * float64(bars) * float64(barTrialCost))
}

// The rule's figures, measured with BenchmarkSweepFixedCost on the
// 2-core machine: the SMA-cross template's combinations cost 20–25 ns a
// bar (35 ms for 100 over 17,544 bars), and a second worker added about
// 20 ms to that sweep (5 more chunks, its own indicators, contention),
// so a worker must be given at least twice that. The demo's
// 100-combination sweep over 17,544 bars (35 ms) stays on one worker; a
// million-bar one (2 s) takes both.
const (
	barTrialCost   = 20 * time.Nanosecond
	minWorkerShare = 40 * time.Millisecond
)

// estimate times one combination and extrapolates.
func (l *Local) estimate(ctx context.Context, p *plan, res SweepResult) (SweepResult, error) {
	workers := max(1, min(l.chunks().Size(), p.count))
	est := &Estimate{Combinations: p.count, Workers: workers}
	res.Estimate = est
	if p.tooMany != nil {
		est.Note = p.tooMany.Msg + "; a sweep of this grid would be refused before any work"
		return res, nil
	}
	req := p.base
	req.Combos = []map[string]any{p.combo(0)}
	start := l.cfg.Now()
	var resp worker.SweepChunkResult
	if err := l.cfg.Pool.Do(ctx, worker.KindSweep, req, &resp); err != nil {
		return SweepResult{}, classify(err)
	}
	took := l.cfg.Now().Sub(start).Seconds()
	if len(resp.Trials) == 1 && resp.Trials[0].Error != "" {
		return SweepResult{}, errorf(KindStrategy, "the first combination (%s) failed, so the sweep would too: %s", fmtParams(req.Combos[0]), resp.Trials[0].Error)
	}
	est.PerCombinationSeconds = math.Round(took*1e4) / 1e4
	rounds := (p.count + workers - 1) / workers
	est.Seconds = math.Round(took*float64(rounds)*100) / 100
	est.Note = fmt.Sprintf("measured on one combination (%s) with a cold indicator cache (reading the bars counts only where that worker had not read them yet) and spread over %d workers; "+
		"combinations that share indicators usually run faster than this", fmtParams(req.Combos[0]), workers)
	return res, nil
}
