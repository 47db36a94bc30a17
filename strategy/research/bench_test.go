package research

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"wicket/strategy/backtest"
	"wicket/strategy/history/historytest"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/strategy"
	"wicket/strategy/history"
	"wicket/strategy/worker"
)

// benchGrid is 100 combinations of the SMA-cross template: 10 fast × 10
// slow lengths.
var benchGrid = Grid{"fast": {From: fp(2), To: fp(20), Step: fp(2)}, "slow": {From: fp(30), To: fp(120), Step: fp(10)}}

// refGrid is the reference's grid (ref_sma.py --sweep
// 5,10,...,50 20,40,...,200): 100 combinations.
var refGrid = Grid{"fast": {From: fp(5), To: fp(50), Step: fp(5)}, "slow": {From: fp(20), To: fp(200), Step: fp(20)}}

// refCosts are the reference's costs beyond fee and slippage: none. It
// models no volume cap, and on the sine (whose equity compounds into the
// billions) the default cap binds at every bar, carrying each fill over
// thousands of bars: another backtest, and a slower one.
var refCosts = Costs{CostOptions: backtest.CostOptions{VolumeCap: "off"}}

// refScript is the jit-compiled yardstick of the sweep benchmarks (the
// project's shared/bench/ref_sma.py, kept here so a fresh clone has it).
const refScript = "testdata/ref_sma.py"

// refPython is the interpreter the reference runs with: the system one,
// where Debian's python3-numba installs.
const refPython = "/usr/bin/python3"

// refFigures are the reference's published figures (shared/bench, measured
// 2026-12-01 on a 2-core machine), used only when numba is not installed,
// and then labelled as such.
var refFigures = map[int]float64{17_544: 13_600, 1_000_000: 160}

// benchSeries are the demo's two-year hourly series (17,544 bars each).
// Each timed sweep runs over another one, so it finds neither its bars
// nor its indicators cached in the workers.
var benchSeries = []string{"BTC-USD@1h", "ETH-USD@1h", "SOL-USD@1h", "SPY@1h"}

// warmPool starts every worker of a fresh pool (a sweep over daily bars,
// which the timed sweeps do not use) so the timed sweeps do not pay for
// process start-up. Each worker runs with GOMAXPROCS 1, so size workers
// use size cores: a lone worker would otherwise run its garbage
// collector on the second core, and one worker would not be one core.
func warmPool(b *testing.B, size int) (*worker.Pool, *computedCounter) {
	b.Helper()
	pool, err := worker.NewPool(worker.Config{Size: size, MemoryMiB: 1024, Procs: 1})
	if err != nil {
		b.Fatal(err)
	}
	// As many warm-up sweeps as workers, sent at once: each starts its own
	// worker and, unless one finishes before another's chunk is sent, runs
	// its chunk there, so that whichever worker the timed sweeps land on
	// has compiled, swept and grown its heap: one that had only started
	// would pay its first page faults inside the timing.
	warm := NewLocal(Config{ProofSeed: fixedSeed, Project: demoProject(b), Pool: pool})
	var wg sync.WaitGroup
	for range size {
		wg.Go(func() {
			if _, err := warm.Sweep(ctxT(b), SweepRequest{StrategyRef: templateRef(b, "sma_cross"), Series: "SPY@1d",
				Grid: Grid{"fast": {From: fp(2), To: fp(2 + 2*float64(4*size-1)), Step: fp(2)}}}, nil); err != nil {
				b.Error(err)
			}
		})
	}
	wg.Wait()
	if st := pool.Stats(); st.Running != size {
		b.Fatalf("%d of %d workers running after the warm-up", st.Running, size)
	}
	return pool, &computedCounter{}
}

// timedSweeps runs the 100-combination sweep over each bench series on a
// warm pool of size workers, timing only the sweeps. It returns each
// series' time and the SMA computations of the last sweep.
func timedSweeps(b *testing.B, size int) ([]time.Duration, uint64) {
	b.StopTimer()
	pool, c := warmPool(b, size)
	defer pool.Close()
	l := NewLocal(Config{ProofSeed: fixedSeed, Project: demoProject(b), Pool: pool, Computed: c.add})
	took := make([]time.Duration, len(benchSeries))
	var sma uint64
	for i, series := range benchSeries {
		before := c.get("sma")
		req := SweepRequest{StrategyRef: templateRef(b, "sma_cross"), Series: series, Grid: benchGrid}
		b.StartTimer()
		start := time.Now()
		res, err := l.Sweep(ctxT(b), req, nil)
		took[i] = time.Since(start)
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		if res.Evaluated != 100 || res.Failed != 0 {
			b.Fatalf("%s: evaluated %d, failed %d", series, res.Evaluated, res.Failed)
		}
		sma = c.get("sma") - before
	}
	b.StartTimer()
	return took, sma
}

// BenchmarkSweep100 measures combinations per second of the SMA-cross
// template on two years of hourly bars, at one and two workers.
func BenchmarkSweep100(b *testing.B) {
	for _, size := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", size), func(b *testing.B) {
			var total time.Duration
			for i := 0; i < b.N; i++ {
				took, _ := timedSweeps(b, size)
				for _, t := range took {
					total += t
				}
			}
			b.ReportMetric(float64(100*len(benchSeries)*b.N)/total.Seconds(), "combinations/s")
		})
	}
}

// BenchmarkSweepSpeedup runs the 100-combination sweeps on one worker and
// on two, alternately, speedupRounds times per op, and reports the
// speed-up (the spec asks that a pool of two is never slower on these
// 17,544 bars, where workersFor keeps the sweep on one) from each series'
// fastest run at each size, which is the one least disturbed by other
// work on the machine; and the indicator sharing: SMA computations over
// the 200 a sweep without sharing would make.
func BenchmarkSweepSpeedup(b *testing.B) {
	best := [2][]time.Duration{}
	for k := range best {
		best[k] = make([]time.Duration, len(benchSeries))
		for i := range best[k] {
			best[k][i] = math.MaxInt64
		}
	}
	var sma uint64
	for i := 0; i < b.N*speedupRounds; i++ {
		for k, size := range []int{1, 2} {
			took, s := timedSweeps(b, size)
			for j, t := range took {
				best[k][j] = min(best[k][j], t)
			}
			if size == 2 {
				sma = s
			}
		}
	}
	var one, two time.Duration
	for j := range benchSeries {
		one, two = one+best[0][j], two+best[1][j]
	}
	speedup := one.Seconds() / two.Seconds()
	sharing := float64(sma) / 200
	b.ReportMetric(speedup, "speedup")
	b.ReportMetric(float64(sma), "sma-computations")
	b.ReportMetric(100*float64(len(benchSeries))/two.Seconds(), "combinations/s")
	b.ReportMetric(100*float64(len(benchSeries))/one.Seconds(), "combinations/s/1-worker")
	addRatio("ratio sweep 2 workers / 1 worker, 17544 bars: " + strconv.FormatFloat(speedup, 'f', 2, 64) + "x (target >= 1.0x: a pool of two never slower; this sweep runs on one, workersFor)")
	addRatio("ratio sweep sma computations / without sharing: " + strconv.FormatFloat(sharing, 'f', 2, 64) + "x")
}

// speedupRounds is how many times each size runs per op.
const speedupRounds = 3

// BenchmarkSweepSpeedup1M is BenchmarkSweepSpeedup on a million bars
// (the reference's grid), where the combinations' own work, which two
// workers share, outweighs what a sweep does once (reading the bars,
// PBO, the winner's proof). Each sweep runs on a fresh warm pool, so its
// workers read the bars and compute the indicators.
func BenchmarkSweepSpeedup1M(b *testing.B) {
	b.StopTimer()
	p := benchProject(b, b.TempDir(), sineBars(1_000_000))
	req := SweepRequest{StrategyRef: templateRef(b, "sma_cross"), Series: "BENCH@1h", Grid: refGrid, Costs: refCosts}
	best := [2]time.Duration{math.MaxInt64, math.MaxInt64}
	for i := 0; i < b.N*2; i++ {
		for k, size := range []int{1, 2} {
			pool, _ := warmPool(b, size)
			l := NewLocal(Config{ProofSeed: fixedSeed, Project: p, Pool: pool})
			b.StartTimer()
			start := time.Now()
			res, err := l.Sweep(ctxT(b), req, nil)
			took := time.Since(start)
			b.StopTimer()
			pool.Close()
			if err != nil {
				b.Fatal(err)
			}
			if res.Evaluated != 100 || res.Failed != 0 {
				b.Fatalf("evaluated %d, failed %d", res.Evaluated, res.Failed)
			}
			best[k] = min(best[k], took)
		}
	}
	speedup := best[0].Seconds() / best[1].Seconds()
	b.ReportMetric(speedup, "speedup")
	addRatio(fmt.Sprintf("ratio sweep 2 workers / 1 worker, 1000000 bars: %.2fx (target >= 1.85x; 1 worker %s, 2 workers %s)",
		speedup, best[0].Round(time.Millisecond), best[1].Round(time.Millisecond)))
}

// sineBars are n hourly bars of a noisy sine, the million-bar series of
// the benchmarks (historytest.Sine, as every package's benchmarks use).
func sineBars(n int) strategy.Bars { return historytest.Sine("BENCH@1h", n) }

// benchProject is a project in dir whose store holds bars as BENCH@1h.
func benchProject(b testing.TB, dir string, bars strategy.Bars) project.Project {
	b.Helper()
	p := project.Project{Root: dir}
	s, err := history.Open(p.HistoryPath())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if err := s.Write(context.Background(), "BENCH@1h", bars, history.WriteOptions{}); err != nil {
		b.Fatal(err)
	}
	return p
}

// writeCSV writes bars in the import format (time,open,high,low,close,
// volume), every price in full precision.
func writeCSV(b testing.TB, path string, bars strategy.Bars) {
	b.Helper()
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	w.WriteString("time,open,high,low,close,volume\n")
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	for i := range bars.Len() {
		fmt.Fprintf(w, "%d,%s,%s,%s,%s,%s\n", bars.Time[i], g(bars.Open[i]), g(bars.High[i]), g(bars.Low[i]), g(bars.Close[i]), g(bars.Volume[i]))
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
}

// refRun is what the reference reports of its sweep: its speed and its
// winner (the highest per-bar Sharpe ratio).
type refRun struct {
	CombosPerS float64    `json:"numba_combos_per_s"`
	Best       [4]float64 `json:"best"` // Sharpe per bar, fast, slow, final equity
}

// reference runs ref_sma.py over csv with the reference grid and returns
// what it reports, or "" and the reason it did not run.
func reference(b testing.TB, csv string) (refRun, string) {
	if err := exec.Command(refPython, "-c", "import numba").Run(); err != nil {
		return refRun{}, "numba is not installed for " + refPython + " (apt-get install -y python3-numba)"
	}
	var fasts, slows []string
	for f := 5; f <= 50; f += 5 {
		fasts = append(fasts, strconv.Itoa(f))
	}
	for s := 20; s <= 200; s += 20 {
		slows = append(slows, strconv.Itoa(s))
	}
	cmd := exec.Command(refPython, refScript, csv, "--sweep", strings.Join(fasts, ","), strings.Join(slows, ","))
	cmd.Env = append(os.Environ(), "FEE=10", "SLIP=5")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return refRun{}, fmt.Sprintf("the reference failed: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	var r refRun
	if err := json.Unmarshal(out, &r); err != nil || r.CombosPerS <= 0 {
		return refRun{}, fmt.Sprintf("the reference printed %q", out)
	}
	return r, ""
}

// sameAsReference fails b unless the sweep's winner is the reference's,
// with the same final equity to the cent (the metrics round money to
// cents) or to 1e-9 of it, whichever is looser: a ratio between two programs
// means something only when they ran the same backtest.
func sameAsReference(b testing.TB, res SweepResult, ref refRun) {
	b.Helper()
	if len(res.Top) == 0 {
		b.Fatal("the sweep ranked no combination")
	}
	w := res.Top[0]
	var m struct {
		FinalEquity string `json:"final_equity"`
	}
	if err := json.Unmarshal(w.Metrics, &m); err != nil {
		b.Fatal(err)
	}
	eq, err := strconv.ParseFloat(m.FinalEquity, 64)
	if err != nil {
		b.Fatalf("final equity %q: %v", m.FinalEquity, err)
	}
	fast, slow, want := ref.Best[1], ref.Best[2], ref.Best[3]
	if fmt.Sprint(w.Params["fast"]) != fmt.Sprint(int(fast)) || fmt.Sprint(w.Params["slow"]) != fmt.Sprint(int(slow)) ||
		!(math.Abs(eq-want) <= max(0.005000001, 1e-9*math.Abs(want))) {
		b.Fatalf("the sweep's winner is fast %v slow %v with final equity %v; the reference's is fast %v slow %v with %v: they ran different backtests",
			w.Params["fast"], w.Params["slow"], eq, fast, slow, want)
	}
}

// BenchmarkSweepVsReference times the 100-combination SMA-cross sweep (the
// reference's grid, fees and slippage) on one worker of one core, cold
// (a fresh pool whose workers have seen neither the bars nor their
// indicators), against the numba reference on the same bars, on the
// demo's 17,544 hourly bars and on a million bars. The spec asks for at
// least the reference's combinations per second per core at a million
// bars. Each op runs the sweep referenceRounds times and keeps the
// fastest, the run least disturbed by other work on the machine.
func BenchmarkSweepVsReference(b *testing.B) {
	demoBars := func() strategy.Bars {
		s, err := history.OpenReadOnly(demoProject(b).HistoryPath())
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		bars, err := s.Load("BTC-USD@1h", time.Time{}, time.Time{})
		if err != nil {
			b.Fatal(err)
		}
		return bars
	}
	for _, n := range []int{17_544, 1_000_000} {
		b.Run(fmt.Sprintf("bars=%d", n), func(b *testing.B) {
			b.StopTimer()
			var bars strategy.Bars
			if n == 1_000_000 {
				bars = sineBars(n)
			} else {
				bars = demoBars()
			}
			if bars.Len() != n {
				b.Fatalf("%d bars, want %d", bars.Len(), n)
			}
			dir := b.TempDir()
			p := benchProject(b, dir, bars)
			csv := filepath.Join(dir, "bars.csv")
			writeCSV(b, csv, bars)
			req := SweepRequest{StrategyRef: templateRef(b, "sma_cross"), Series: "BENCH@1h", Grid: refGrid, Costs: refCosts}
			best := time.Duration(math.MaxInt64)
			bestCPU := time.Duration(math.MaxInt64)
			var last SweepResult
			b.StartTimer()
			for i := 0; i < b.N*referenceRounds; i++ {
				b.StopTimer()
				pool, _ := warmPool(b, 1)
				l := NewLocal(Config{ProofSeed: fixedSeed, Project: p, Pool: pool})
				cpu0 := sweepCPU(pool)
				b.StartTimer()
				start := time.Now()
				res, err := l.Sweep(ctxT(b), req, nil)
				took := time.Since(start)
				b.StopTimer()
				if cpu := sweepCPU(pool) - cpu0; cpu > 0 {
					bestCPU = min(bestCPU, cpu)
				}
				pool.Close()
				if err != nil {
					b.Fatal(err)
				}
				if res.Evaluated != 100 || res.Failed != 0 {
					b.Fatalf("evaluated %d, failed %d", res.Evaluated, res.Failed)
				}
				best, last = min(best, took), res
				b.StartTimer()
			}
			ours := 100 / best.Seconds()
			b.ReportMetric(ours, "combinations/s/core")
			// The reference's best of two runs, as the sweep's is its best.
			run, why := reference(b, csv)
			if again, _ := reference(b, csv); again.CombosPerS > run.CombosPerS {
				run.CombosPerS = again.CombosPerS
			}
			ref, label := run.CombosPerS, "numba reference"
			if why != "" {
				ref, label = refFigures[n], "the reference's published figure, not measured here: "+why
			} else {
				sameAsReference(b, last, run)
			}
			addRatio(fmt.Sprintf("ratio sweep combinations/s per core / %s, %d bars: %.2fx (target >= 1 at 1000000 bars; wicket %.1f/s, reference %.1f/s)",
				label, n, ours/ref, ours, ref))
			if bestCPU < math.MaxInt64 {
				// The same sweep by the CPU time it took in all (the caller,
				// which ranks, records and computes PBO, and the worker):
				// combinations per CPU-second, as the one-core reference's
				// combinations per second are. A busy machine disturbs this
				// less than the wall clock.
				perCPU := 100 / bestCPU.Seconds()
				addRatio(fmt.Sprintf("ratio sweep combinations per CPU-second (caller + worker) / %s, %d bars: %.2fx (wicket %.1f, reference %.1f)",
					label, n, perCPU/ref, perCPU, ref))
			}
			engine := engineRate(b, p)
			addRatio(fmt.Sprintf("ratio sweep engine alone (one worker's chunk of the 100, bars in memory, indicators cold) combinations/s / %s, %d bars: %.2fx (wicket %.1f/s, reference %.1f/s)",
				label, n, engine/ref, engine, ref))
		})
	}
}

// engineRate times the 100 combinations of the reference's grid as one
// chunk in a worker, measured as the reference is: over bars already in
// memory (the worker's bar cache), with the strategy compiled once, and
// each indicator computed once in the chunk, as the reference computes
// each SMA once per sweep (a fresh worker each round, warmed by one
// combination of other lengths, as the reference warms its jit). The
// chunk is the sweep's own (its plan's base and combinations, in the
// plan's order), run whole after the plan's params request has read the
// bars. Unlike a
// sweep, it leaves out the ranking, the overfitting statistics and the
// winner's lookahead proof, none of which the reference does; the chunk
// still computes every metric and the blocks PBO needs, which the
// reference does not. It returns the best round's combinations per
// second, on one worker of one core.
func engineRate(b *testing.B, p project.Project) float64 {
	b.StopTimer()
	defer b.StartTimer()
	best := time.Duration(math.MaxInt64)
	for range referenceRounds {
		pool, err := worker.NewPool(worker.Config{Size: 1, MemoryMiB: 1024, Procs: 1})
		if err != nil {
			b.Fatal(err)
		}
		l := NewLocal(Config{ProofSeed: fixedSeed, Project: p, Pool: pool})
		pl, err := l.plan(ctxT(b), planInput{ref: templateRef(b, "sma_cross"), series: "BENCH@1h", grid: refGrid, costs: refCosts, barsInWorker: true})
		if err != nil {
			b.Fatal(err)
		}
		req := pl.base
		req.Blocks = pboBlocksFor(pl.count)
		// A combination of other lengths first, as the reference warms its
		// jit on a short run before it times the sweep.
		warm := req
		warm.Combos = []map[string]any{{"fast": int64(2), "slow": int64(3)}}
		if _, err := pool.Sweep(ctxT(b), warm); err != nil {
			b.Fatal(err)
		}
		for _, c := range pl.chunks(pl.base, 1) {
			req.Combos = append(req.Combos, c.Combos...)
		}
		start := time.Now()
		res, err := pool.Sweep(ctxT(b), req)
		took := time.Since(start)
		pool.Close()
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Trials) != pl.count || pl.order == nil && res.Computed["sma"] != 18 {
			b.Fatalf("%d trials of %d, %v computed", len(res.Trials), pl.count, res.Computed)
		}
		best = min(best, took)
	}
	return 100 / best.Seconds()
}

// referenceRounds is how many times each sweep runs per op.
const referenceRounds = 3

// BenchmarkSweepPeakRSS runs the 100-combination sweep over a million bars
// on two workers in a fresh process (this test binary, re-executed) and
// reports the peak resident memory of that process and of each worker,
// and their sum, against the spec's 300 MB; and their proportional set
// sizes when the sweep ends (PSS, /proc/PID/smaps_rollup: a page shared
// by k processes counts 1/k in each, as the workers' one mapped copy of
// the bars is), summed, which is the memory they take together.
func BenchmarkSweepPeakRSS(b *testing.B) {
	dir := b.TempDir()
	benchProject(b, dir, sineBars(1_000_000))
	var r rssReport
	for b.Loop() {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), rssEnv+"="+dir)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			b.Fatalf("%v: %s", err, stderr.String())
		}
		if err := json.Unmarshal(bytes.TrimSpace(out), &r); err != nil {
			b.Fatalf("%v: %q", err, out)
		}
	}
	sum := r.Caller
	largest := r.Caller
	for _, w := range r.Workers {
		sum += w
		largest = max(largest, w)
	}
	mb := func(x uint64) float64 { return float64(x) / 1e6 }
	b.ReportMetric(mb(sum), "MB-total")
	b.ReportMetric(float64(r.SMA), "sma-computations")
	addRatio(fmt.Sprintf("ratio sweep peak RSS, 1000000 bars, 100 combinations, 2 workers, caller + workers / 300 MB: %.2fx (target <= 1; %.0f MB: caller %.0f MB, workers %s MB; largest process %.0f MB)",
		mb(sum)/300, mb(sum), mb(r.Caller), fmtMBs(r.Workers), mb(largest)))
	pss := r.CallerPSS
	for _, w := range r.WorkersPSS {
		pss += w
	}
	b.ReportMetric(mb(pss), "MB-PSS")
	addRatio(fmt.Sprintf("ratio sweep PSS at the end, 1000000 bars, 100 combinations, 2 workers, caller + workers / 300 MB: %.2fx (target <= 1; %.0f MB: caller %.0f MB, workers %s MB)",
		mb(pss)/300, mb(pss), mb(r.CallerPSS), fmtMBs(r.WorkersPSS)))
}

func fmtMBs(xs []uint64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.FormatFloat(float64(x)/1e6, 'f', 0, 64)
	}
	return strings.Join(parts, " + ")
}

// rssEnv names the project directory when this test binary is re-executed
// to measure a sweep's memory.
const rssEnv = "WICKET_BENCH_RSS_PROJECT"

type rssReport struct {
	Caller  uint64   `json:"caller"`
	Workers []uint64 `json:"workers"`
	SMA     uint64   `json:"sma"` // SMA computations in the workers
	// Proportional set sizes at the end of the sweep.
	CallerPSS  uint64   `json:"caller_pss"`
	WorkersPSS []uint64 `json:"workers_pss"`
}

// rssChild is the re-executed process of BenchmarkSweepPeakRSS: one sweep,
// then the peak resident memory of itself and of its workers on stdout.
func rssChild(dir string) int {
	pool, err := worker.NewPool(worker.Config{Size: 2, Procs: 1})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer pool.Close()
	var c computedCounter
	l := NewLocal(Config{ProofSeed: fixedSeed, Project: project.Project{Root: dir}, Pool: pool, Computed: c.add})
	src, err := os.ReadFile(filepath.Join("..", "templates", "star", "sma_cross.star"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	res, err := l.Sweep(context.Background(), SweepRequest{StrategyRef: StrategyRef{Source: string(src), Label: "sma_cross.star"}, Series: "BENCH@1h", Grid: refGrid, Costs: refCosts}, nil)
	if err != nil || res.Evaluated != 100 {
		fmt.Fprintln(os.Stderr, "sweep:", err, res.Evaluated)
		return 1
	}
	r := rssReport{SMA: c.get("sma")}
	r.Caller, r.CallerPSS = testkit.PeakRSS("self"), testkit.PSS("self")
	for _, pid := range pool.PIDs() {
		r.Workers = append(r.Workers, testkit.PeakRSS(strconv.Itoa(pid)))
		r.WorkersPSS = append(r.WorkersPSS, testkit.PSS(strconv.Itoa(pid)))
	}
	json.NewEncoder(os.Stdout).Encode(r)
	return 0
}

// sweepCPU is the CPU time this process and the pool's workers have
// used, from /proc/<pid>/task/*/schedstat (nanoseconds; 0 without
// procfs).
func sweepCPU(pool *worker.Pool) time.Duration {
	t := taskCPU("self")
	for _, pid := range pool.PIDs() {
		t += taskCPU(strconv.Itoa(pid))
	}
	return t
}

// taskCPU sums the time on CPU of every thread of process pid.
func taskCPU(pid string) time.Duration {
	paths, _ := filepath.Glob("/proc/" + pid + "/task/*/schedstat")
	var t time.Duration
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		if f := strings.Fields(string(b)); len(f) > 0 {
			ns, _ := strconv.ParseInt(f[0], 10, 64)
			t += time.Duration(ns)
		}
	}
	return t
}

// ratios are the lines `make bench` collects (grep '^ratio'); TestMain
// prints them once the benchmarks are done, each on a line of its own.
var ratios []string

// addRatio records a ratio line; a later line with the same name (the
// text before the colon) replaces an earlier one, so a benchmark that the
// framework runs more than once reports its last run.
func addRatio(s string) {
	name, _, _ := strings.Cut(s, ":")
	for i, r := range ratios {
		if n, _, _ := strings.Cut(r, ":"); n == name {
			ratios[i] = s
			return
		}
	}
	ratios = append(ratios, s)
}

func printRatios() {
	for _, r := range ratios {
		os.Stdout.WriteString(r + "\n")
	}
}
