package research

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"testing"
	"time"

	"wicket/internal/testkit"
	"wicket/strategy/ledger"
	"wicket/strategy/worker"
)

// BenchmarkSweepWarm is the sweep a warm `wicket mcp` session repeats
// (agent's BenchmarkSweepWarmMCP) without the protocol around it: the
// reference's 100-combination grid over the same 17,544-bar series again
// and again, on one warm worker, with a research ledger as the server
// keeps one (a single handle, its moments kept). It reports the median
// sweep, its phases and the median CPU of the caller and of the worker
// (procfs), so that a CPU profile of this benchmark (-cpuprofile) is the
// caller's side of what a warm session spends.
func BenchmarkSweepWarm(b *testing.B) {
	lg, err := ledger.Open(filepath.Join(b.TempDir(), "research.db"), ledger.Options{Key: testkit.Bytes(b, 32)})
	if err != nil {
		b.Fatal(err)
	}
	defer lg.Close()
	pool, _ := warmPool(b, 1)
	defer pool.Close()
	var got []SweepTiming
	l := NewLocal(Config{ProofSeed: fixedSeed, Project: demoProject(b), Pool: pool, Recorder: lg, Timing: func(t SweepTiming) { got = append(got, t) }})
	req := SweepRequest{StrategyRef: templateRef(b, "sma_cross"), Series: "BTC-USD@1h", Grid: refGrid, Costs: refCosts}
	if _, err := l.Sweep(ctxT(b), req, nil); err != nil { // the series' first sweep: not timed
		b.Fatal(err)
	}
	got = got[:0]
	var cpu, workers []time.Duration
	b.ResetTimer()
	for range b.N {
		cpu0, all0 := taskCPU("self"), sweepCPU(pool)
		res, err := l.Sweep(ctxT(b), req, nil)
		caller := taskCPU("self") - cpu0
		cpu, workers = append(cpu, caller), append(workers, sweepCPU(pool)-all0-caller)
		if err != nil {
			b.Fatal(err)
		}
		if res.Evaluated != 100 || res.RunID == "" || res.LookaheadCheck == "" {
			b.Fatalf("evaluated %d, run id %q, lookahead check %q", res.Evaluated, res.RunID, res.LookaheadCheck)
		}
	}
	b.StopTimer()
	sort.Slice(got, func(i, j int) bool { return got[i].Total < got[j].Total })
	m := got[len(got)/2]
	slices.Sort(cpu)
	slices.Sort(workers)
	b.ReportMetric(ms(cpu[len(cpu)/2]), "caller-cpu-ms")
	b.ReportMetric(ms(workers[len(workers)/2]), "worker-cpu-ms")
	b.ReportMetric(ms(m.Total), "median-ms")
	b.ReportMetric(ms(m.Run), "chunks-ms")
	b.ReportMetric(ms(m.After+m.Proof), "after-ms")
	addRatio(fmt.Sprintf("ratio warm sweep with a ledger, median of %d, 17544 bars, 1 worker, in process: after the chunks / the chunks %.2fx (CPU: caller %.1f ms, worker %.1f ms; total %.1f ms: params %.1f, rest of the plan %.1f, chunks %.1f, rank %.1f, after %.1f of which ledger %.1f, proof wait %.1f (its run %.1f))",
		len(got), float64(m.After+m.Proof+m.Rank)/float64(m.Run), ms(cpu[len(cpu)/2]), ms(workers[len(workers)/2]), ms(m.Total), ms(m.Params), ms(m.Plan-m.Params), ms(m.Run), ms(m.Rank), ms(m.After), ms(m.Ledger), ms(m.Proof), ms(m.ProofRun)))
}

// keptChunks is a Dispatcher that keeps the trials of the chunks it
// passes on to the pool.
type keptChunks struct {
	*worker.Pool
	trials []*worker.Trial
}

func (k *keptChunks) Sweep(ctx context.Context, req worker.SweepChunk) (worker.SweepChunkResult, error) {
	res, err := k.Pool.Sweep(ctx, req)
	for i := range res.Trials {
		k.trials = append(k.trials, &res.Trials[i])
	}
	return res, err
}

// sweepTrials are the trials of the reference grid's sweep over series.
func sweepTrials(b *testing.B, series string) (*Local, *plan, []*worker.Trial) {
	pool, _ := warmPool(b, 1)
	b.Cleanup(func() { pool.Close() })
	k := &keptChunks{Pool: pool}
	l := NewLocal(Config{ProofSeed: fixedSeed, Project: demoProject(b), Pool: pool, Chunks: k})
	req := SweepRequest{StrategyRef: templateRef(b, "sma_cross"), Series: series, Grid: refGrid, Costs: refCosts}
	if _, err := l.Sweep(ctxT(b), req, nil); err != nil {
		b.Fatal(err)
	}
	p, err := l.plan(ctxT(b), planInput{ref: req.StrategyRef, series: series, grid: req.Grid, costs: req.Costs, barsInWorker: true})
	if err != nil {
		b.Fatal(err)
	}
	p.base.Blocks = pboBlocksFor(p.count)
	return l, p, k.trials
}

// BenchmarkSweepAfter times the caller's parts of a sweep after its
// chunks, each alone, on the trials of the reference grid's sweep over
// 17,544 bars: the PBO, the ledger's rows, and the rows appended to a
// ledger and its trials read back (afterSweep without the PBO).
func BenchmarkSweepAfter(b *testing.B) {
	l, p, trials := sweepTrials(b, "BTC-USD@1h")
	if len(trials) != 100 {
		b.Fatalf("%d trials", len(trials))
	}
	win := trials[rankTrials(trials, p.rankBy).order[0]]
	b.Run("pbo", func(b *testing.B) {
		for b.Loop() {
			if o := overfitting(trials, p.base.Blocks); o.PBO == nil {
				b.Fatal(o.Note)
			}
		}
	})
	b.Run("rows", func(b *testing.B) {
		for b.Loop() {
			sweepRows(ctxT(b), p, trials, win)
		}
	})
	b.Run("ledger", func(b *testing.B) {
		lg, err := ledger.Open(filepath.Join(b.TempDir(), "research.db"), ledger.Options{Key: testkit.Bytes(b, 32)})
		if err != nil {
			b.Fatal(err)
		}
		defer lg.Close()
		c := *l
		c.cfg.Recorder = lg
		p.base.Blocks = 0 // no PBO
		defer func() { p.base.Blocks = pboBlocksFor(p.count) }()
		for b.Loop() {
			var res SweepResult
			res.DeflatedSharpe = &DeflatedSharpe{}
			c.afterSweep(ctxT(b), p, trials, win, "", &res)
			if res.RunID == "" || len(res.Warnings) > 0 {
				b.Fatal(res.Warnings)
			}
		}
	})
}
