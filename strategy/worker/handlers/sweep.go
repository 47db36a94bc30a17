package handlers

import (
	"context"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"wicket/strategy"
	"wicket/strategy/backtest"
	"wicket/strategy/script"
	"wicket/strategy/ta"
	"wicket/strategy/worker"
)

// evalChunk runs inside a worker: it loads the bars (or finds them in the
// worker's cache), compiles the strategy once and evaluates each
// combination in one streaming pass with the shared memo and reused
// buffers, on as many goroutines as the chunk may use (lanes), each with
// a scratch of scs. A combination whose run fails is a trial with Error
// set; only a failure that concerns the whole chunk (the store, the range,
// cancellation) fails the request.
func evalChunk(ctx context.Context, req worker.SweepChunk, memo *ta.Memo, cache *barCache, cols *sharedColumns, scs *scratches) (worker.SweepChunkResult, error) {
	began := time.Now()
	breq := backtest.Request{Capital: req.Capital, FeeBps: &req.FeeBps, SlippageBps: &req.SlippageBps, From: req.From, To: req.To,
		Intrabar: req.Intrabar, CostOptions: req.CostOptions}
	cfg, err := breq.Config(backtest.DefaultConfig())
	if err != nil {
		return worker.SweepChunkResult{}, err
	}
	tradeFrom, err := backtest.ParseTime("trade_from", req.TradeFrom, false)
	if err != nil {
		return worker.SweepChunkResult{}, err
	}
	var e barEntry
	switch {
	case req.BarsFile != "":
		e, err = cache.loadFile(req.BarsFile, req.Series, req.Digest)
	case req.SharedBars != "":
		e, err = cache.loadShared(storeKey(req.HistoryPath, req.Series, cfg.From, cfg.To), req.SharedBars, req.Series, req.Digest)
	case req.HistoryPath == "":
		return worker.SweepChunkResult{}, &worker.Error{Kind: worker.KindRequest, Msg: "sweep request without a history store path"}
	default:
		e, err = cache.load(req.HistoryPath, req.Series, cfg.From, cfg.To, req.Digest)
	}
	if err != nil {
		return worker.SweepChunkResult{}, err
	}
	defer e.release()
	bars := e.bars
	// The workers that map the shared bars share their long columns in
	// the same directory, private to the sweep (shared.go).
	shareDir := ""
	if req.SharedBars != "" {
		shareDir = filepath.Dir(req.SharedBars)
	}
	cols.setDir(shareDir)
	if err := fundingCosts(&cfg, fundingSource{path: req.HistoryPath, file: req.FundingFile, digest: req.FundingDigest, stores: cache}, req.Series, req.CostOptions, bars); err != nil {
		return worker.SweepChunkResult{}, err
	}
	// The range warnings of a backtest ("range clipped") do not apply to
	// a chunk: its range is the caller's window over known bars.
	cfg.From, cfg.To = time.Time{}, time.Time{}
	start := 0
	if !tradeFrom.IsZero() {
		t := tradeFrom.Unix()
		start = sort.Search(bars.Len(), func(i int) bool { return bars.Time[i] >= t })
		if start >= bars.Len() {
			return worker.SweepChunkResult{}, &backtest.Error{Kind: backtest.KindInvalid, Msg: "no bars to trade after trade_from " + req.TradeFrom}
		}
	}

	sreq := worker.StrategyRequest{Name: req.Name, Source: req.Source, IndicatorsDir: req.IndicatorsDir}
	opts, closeFS, err := options(sreq, memo)
	if err != nil {
		return worker.SweepChunkResult{}, err
	}
	defer closeFS()

	before := memo.Stats().Computed
	resp := worker.SweepChunkResult{Trials: make([]worker.Trial, len(req.Combos)), Bars: e.seen()}
	prog, compileErr := script.Compile(script.Source{Name: req.Name, Text: req.Source})
	opts.BarKeys = e.keys // the chunk's bars come from the bar cache and are never modified
	work := time.Now()
	// The combinations are handed out one at a time to the lanes, each
	// with its scratch and flag columns: a lane runs its combinations
	// one after another, keeping only their metrics. Every trial is
	// computed alone from the same bars and memo, so which lane runs it
	// changes nothing in it.
	lanes := chunkLanes(len(req.Combos), bars.Len())
	laneOpts := make([]script.Options, lanes)
	laneScratch := make([]*backtest.Scratch, lanes) // taken before the lanes run: get may grow scs
	for lane := range lanes {
		sc := scs.get(lane)
		sc.Blocks = req.Blocks   // each trial's returns in blocks, for PBO
		sc.Returns = req.Returns // without them the engine writes no returns
		laneScratch[lane] = sc
		laneOpts[lane] = opts
		laneOpts[lane].Flags = &script.Flags{}
	}
	runLanes(ctx, len(req.Combos), lanes, func(lane, i int) {
		combo := req.Combos[i]
		var t worker.Trial
		if compileErr != nil {
			t = worker.Trial{Error: compileErr.Error()}
		} else {
			o := &laneOpts[lane]
			o.Overrides = combo
			t = runTrial(ctx, prog, *o, bars, start, cfg, req.Returns, laneScratch[lane])
		}
		if t.Values == nil {
			t.Values = combo // a failed run names the combination it was given
		}
		resp.Trials[i] = t
	})
	if err := ctx.Err(); err != nil {
		return worker.SweepChunkResult{}, err
	}
	resp.Work = time.Since(work).Seconds()
	after := memo.Stats().Computed
	for k, v := range after {
		if d := v - before[k]; d > 0 {
			if resp.Computed == nil {
				resp.Computed = map[string]uint64{}
			}
			resp.Computed[k] = d
		}
	}
	resp.Seconds = time.Since(began).Seconds()
	return resp, nil
}

// runTrial evaluates one combination over bars, trading from bar start.
func runTrial(ctx context.Context, prog *script.Program, opts script.Options, bars strategy.Bars, start int, cfg backtest.Config, returns bool, sc *backtest.Scratch) worker.Trial {
	fail := func(err error) worker.Trial { return worker.Trial{Error: err.Error()} }
	s, err := prog.Load(ctx, opts)
	if err != nil {
		return fail(err)
	}
	d, warmup, done, err := decide(ctx, s, bars, start)
	if err != nil {
		return fail(err)
	}
	defer done()
	cfg.Warmup = warmup
	ev, err := backtest.Evaluate(ctx, bars.Slice(start, bars.Len()), cfg, d, sc)
	if err != nil {
		return fail(err)
	}
	// MarshalJSON writes compact JSON: json.Marshal would only scan it
	// again.
	metrics, err := ev.Metrics.MarshalJSON()
	if err != nil {
		return fail(err)
	}
	m := ev.Metrics
	t := worker.Trial{
		Values:  s.Values(),
		Metrics: metrics,
		Scores: worker.Scores{
			Sharpe: worker.Num(m.Sharpe), CAGR: worker.Num(m.CAGR), Calmar: worker.Num(m.Calmar), ProfitFactor: worker.Num(m.ProfitFactor),
			TotalReturn: worker.Num(m.TotalReturn), MaxDrawdown: worker.Num(m.MaxDrawdown),
			Sortino: worker.Num(m.Sortino), WinRate: worker.Num(m.WinRate), Exposure: worker.Num(m.Exposure),
		},
		Stats:  worker.StatsOf(ev.Moments),
		Trades: m.Trades,
		Warmup: s.Warmup(),
	}
	if returns {
		t.Returns = append([]float64(nil), ev.Returns...)
	}
	t.Blocks = ev.Blocks
	return t
}

// chunkLanes is how many goroutines a chunk of combos combinations over
// bars bars runs on: the worker's GOMAXPROCS, which the pool sets for
// each request to the cores it leaves this one (every core to a lone
// request), at most one per combination, and one for a chunk of
// parallelBelow bars or more. A small sweep is one chunk on one worker
// (a second worker costs more than it saves), whose caller waits on the
// other core; a large one runs on every worker, one lane each.
func chunkLanes(combos, bars int) int {
	if bars >= parallelBelow {
		return 1
	}
	return max(1, min(runtime.GOMAXPROCS(0), combos))
}

// runLanes calls do(lane, i) for every i below n, handing the i out one
// at a time, in order, to lanes goroutines (lane 0 to lanes-1), until ctx
// ends. A panic in one lane stops the others from taking more and is
// raised again here once every lane has stopped, where the worker's
// dispatch turns it into the request's error, as it did when the
// combinations ran on the handler's own goroutine.
func runLanes(ctx context.Context, n, lanes int, do func(lane, i int)) {
	var (
		next     atomic.Int64
		wg       sync.WaitGroup
		mu       sync.Mutex
		panicked any
	)
	for lane := range lanes {
		wg.Go(func() {
			defer func() {
				if r := recover(); r != nil {
					next.Store(int64(n))
					mu.Lock()
					if panicked == nil {
						panicked = r
					}
					mu.Unlock()
				}
			}()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				do(lane, i)
			}
		})
	}
	wg.Wait()
	if panicked != nil {
		panic(panicked)
	}
}

// parallelBelow is the bar count from which a chunk runs on one
// goroutine: research.DefaultShareFromBars, where sweeps start sharing
// their bars between workers. Below it a lane's scratch and flag columns
// are under 2 MB.
const parallelBelow = 1 << 17

// scratches are a worker's engine scratches, one per lane of a chunk:
// they serve the chunks one after another (a worker serves one request at
// a time; a second at once gets its own), so their buffers and their price
// check of the cached bars outlive a chunk.
type scratches struct{ s []*backtest.Scratch }

// get is lane's scratch.
func (s *scratches) get(lane int) *backtest.Scratch {
	for len(s.s) <= lane {
		s.s = append(s.s, &backtest.Scratch{})
	}
	return s.s[lane]
}

// runSweep is the sweep handler. Its bar cache lives as long as the
// worker, like memo: the chunks of one sweep, and the next sweep over the
// same bars, read the store once.
func runSweep(memo *ta.Memo, cache *barCache, cols *sharedColumns) worker.Handler {
	var (
		mu  sync.Mutex
		scs scratches
	)
	return worker.Typed(func(ctx context.Context, req worker.SweepChunk) (worker.SweepChunkResult, error) {
		if !mu.TryLock() {
			return evalChunk(ctx, req, memo, cache, cols, &scratches{})
		}
		defer mu.Unlock()
		return evalChunk(ctx, req, memo, cache, cols, &scs)
	})
}
