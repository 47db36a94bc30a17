package cluster_test

import (
	"context"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"wicket/internal/project"
	"wicket/strategy/cluster"
	"wicket/strategy/clustertest"
	"wicket/strategy/history"
	"wicket/strategy/research"
	"wicket/strategy/ta"
	"wicket/strategy/templates"
	"wicket/strategy/worker"
	"wicket/strategy/worker/handlers"
)

// ratios are the ratio lines the benchmarks print at the end, by
// benchmark.
var ratios = map[string]string{}

func TestMain(m *testing.M) {
	worker.ServeIfWorker(handlers.New(ta.NewMemo(worker.MemoBytes)))
	code := m.Run()
	for _, name := range slices.Sorted(maps.Keys(ratios)) {
		fmt.Println(ratios[name])
	}
	os.Exit(code)
}

var (
	demoOnce sync.Once
	demoDir  string
	demoErr  error
)

func demoProject(b testing.TB) project.Project {
	demoOnce.Do(func() {
		if demoDir, demoErr = os.MkdirTemp("", "wicket-cluster-"); demoErr != nil {
			return
		}
		s, err := history.Open(project.Project{Root: demoDir}.HistoryPath())
		if err != nil {
			demoErr = err
			return
		}
		defer s.Close()
		_, demoErr = history.SeedDemo(context.Background(), s)
	})
	if demoErr != nil {
		b.Fatal(demoErr)
	}
	return project.Project{Root: demoDir}
}

// benchSeries are the demo's two-year hourly series (17,544 bars each).
var benchSeries = []string{"BTC-USD@1h", "ETH-USD@1h", "SOL-USD@1h", "SPY@1h"}

func sweepReq(b testing.TB, series string) research.SweepRequest {
	src, err := templates.Source("sma_cross")
	if err != nil {
		b.Fatal(err)
	}
	fp := func(x float64) *float64 { return &x }
	return research.SweepRequest{StrategyRef: research.StrategyRef{Source: src, Label: "sma_cross.star"}, Series: series,
		Grid: research.Grid{"fast": {From: fp(2), To: fp(20), Step: fp(2)}, "slow": {From: fp(30), To: fp(120), Step: fp(10)}}}
}

func newPool(b testing.TB) *worker.Pool {
	pool, err := worker.NewPool(worker.Config{Size: 1, MemoryMiB: 1024, Procs: 1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { pool.Close() })
	return pool
}

// timed runs the 100-combination sweep over each bench series after a
// warm-up over daily bars, and returns each series' time; cpu, unless
// nil, adds what the timed sweeps cost the cores.
func timed(b *testing.B, l *research.Local, cpu *coreTimes) []time.Duration {
	ctx := b.Context()
	if _, err := l.Sweep(ctx, sweepReq(b, "SPY@1d"), nil); err != nil {
		b.Fatal(err)
	}
	took := make([]time.Duration, len(benchSeries))
	for i, s := range benchSeries {
		before := readCoreTimes()
		start := time.Now()
		res, err := l.Sweep(ctx, sweepReq(b, s), nil)
		took[i] = time.Since(start)
		if cpu != nil {
			cpu.add(readCoreTimes().since(before))
		}
		if err != nil {
			b.Fatal(err)
		}
		if res.Evaluated != 100 || res.Failed != 0 {
			b.Fatalf("%s: evaluated %d, failed %d", s, res.Evaluated, res.Failed)
		}
	}
	return took
}

// BenchmarkClusterOverhead times the 100-combination sweeps in process on
// one worker and through an embedded NATS server on one cluster worker
// (bars shipped, chunks queued, results replied), alternately, and
// reports the ratio of the fastest runs.
func BenchmarkClusterOverhead(b *testing.B) {
	p := demoProject(b)
	url := clustertest.Server(b)
	best := [2][]time.Duration{make([]time.Duration, len(benchSeries)), make([]time.Duration, len(benchSeries))}
	for k := range best {
		for i := range best[k] {
			best[k][i] = math.MaxInt64
		}
	}
	var cpu [2]coreTimes
	for i := 0; i < b.N*3; i++ {
		for k := range 2 {
			b.StopTimer()
			cfg := research.Config{ProofSeed: fixedProofSeed, Project: p, Pool: newPool(b)}
			stop := func() {}
			if k == 1 {
				// A fresh cluster worker (cold memo, empty bars cache) and dispatcher each round, like the fresh local pool.
				cfg.Chunks, stop = joinCluster(b, url)
			}
			b.StartTimer()
			for j, t := range timed(b, research.NewLocal(cfg), &cpu[k]) {
				best[k][j] = min(best[k][j], t)
			}
			stop()
		}
	}
	reportRatio(b, best, fmt.Sprintf("ratio sweep cluster (embedded NATS, 1 worker) / in-process (1 worker): %%.2fx (target <= 1.15x; %%.0f ms against %%.0f ms a sweep, best of %d alternated rounds)", 3*b.N))
	reportCores(b, cpu)
}

// BenchmarkClusterOverheadWarm is BenchmarkClusterOverhead in a warm
// session: one local pool, and one long-lived cluster worker and
// dispatcher, for every round, as in a `wicket mcp` session whose
// cluster's `wicket worker`s stay up. A first pass over the series, not
// timed, reads, ships and fetches their bars and computes their
// indicators on both sides; the alternated rounds then time each
// series' sweep again: the store unchanged, no bars are read or shipped.
func BenchmarkClusterOverheadWarm(b *testing.B) {
	p := demoProject(b)
	url := clustertest.Server(b)
	chunks, stop := joinCluster(b, url)
	defer stop()
	engines := [2]*research.Local{
		research.NewLocal(research.Config{ProofSeed: fixedProofSeed, Project: p, Pool: newPool(b)}),
		research.NewLocal(research.Config{ProofSeed: fixedProofSeed, Project: p, Pool: newPool(b), Chunks: chunks}),
	}
	b.StopTimer()
	for _, l := range engines {
		timed(b, l, nil)
	}
	b.StartTimer()
	best := [2][]time.Duration{make([]time.Duration, len(benchSeries)), make([]time.Duration, len(benchSeries))}
	for k := range best {
		for i := range best[k] {
			best[k][i] = math.MaxInt64
		}
	}
	for i := 0; i < b.N*3; i++ {
		for k, l := range engines {
			for j, t := range timed(b, l, nil) {
				best[k][j] = min(best[k][j], t)
			}
		}
	}
	reportRatio(b, best, fmt.Sprintf("ratio sweep cluster warm (embedded NATS, 1 long-lived worker, second sweep) / in-process warm (1 worker): %%.2fx (target <= 1.15x; %%.0f ms against %%.0f ms a sweep, best of %d alternated rounds)", 3*b.N))
}

// reportRatio reports the ratio of the cluster's best times (best[1]) to
// the local ones (best[0]) summed over the series, and keeps its line,
// line's verbs taking the ratio, the cluster's and the local time a
// sweep.
func reportRatio(b *testing.B, best [2][]time.Duration, line string) {
	var local, remote time.Duration
	for j := range benchSeries {
		local, remote = local+best[0][j], remote+best[1][j]
	}
	r := remote.Seconds() / local.Seconds()
	b.ReportMetric(r, "cluster/local")
	n := float64(len(benchSeries))
	b.ReportMetric(local.Seconds()*1000/n, "local-ms/sweep")
	b.ReportMetric(remote.Seconds()*1000/n, "cluster-ms/sweep")
	ratios[b.Name()] = fmt.Sprintf(line, r, remote.Seconds()*1000/n, local.Seconds()*1000/n)
}

// coreTimes are what sweeps cost the cores: the time this process's
// threads (the caller, and here the NATS server and the cluster worker
// too) ran and waited for a core, and the same of its children (the
// strategy workers), from Linux's schedstat (zero where there is none),
// and how many sweeps they sum.
type coreTimes struct {
	selfRun, selfWait, kidsRun, kidsWait time.Duration
	sweeps                               int
}

func (c *coreTimes) add(d coreTimes) {
	c.selfRun, c.selfWait = c.selfRun+d.selfRun, c.selfWait+d.selfWait
	c.kidsRun, c.kidsWait = c.kidsRun+d.kidsRun, c.kidsWait+d.kidsWait
	c.sweeps++
}

// since is c less an earlier reading.
func (c coreTimes) since(was coreTimes) coreTimes {
	return coreTimes{selfRun: c.selfRun - was.selfRun, selfWait: c.selfWait - was.selfWait,
		kidsRun: c.kidsRun - was.kidsRun, kidsWait: c.kidsWait - was.kidsWait}
}

// readCoreTimes sums the schedstat of this process's threads and of
// its children's threads now. A child that exits between two readings
// takes its times with it; the sweeps' strategy workers stay up.
func readCoreTimes() coreTimes {
	var c coreTimes
	sched := func(task string) (run, wait time.Duration) {
		f := strings.Fields(readProc(task + "/schedstat"))
		if len(f) < 2 {
			return 0, 0
		}
		r, _ := strconv.ParseInt(f[0], 10, 64)
		w, _ := strconv.ParseInt(f[1], 10, 64)
		return time.Duration(r), time.Duration(w)
	}
	tasks := func(proc string) []string {
		es, _ := os.ReadDir(proc + "/task")
		names := make([]string, len(es))
		for i, e := range es {
			names[i] = proc + "/task/" + e.Name()
		}
		return names
	}
	for _, t := range tasks("/proc/self") {
		r, w := sched(t)
		c.selfRun, c.selfWait = c.selfRun+r, c.selfWait+w
		for _, pid := range strings.Fields(readProc(t + "/children")) {
			for _, k := range tasks("/proc/" + pid) {
				r, w := sched(k)
				c.kidsRun, c.kidsWait = c.kidsRun+r, c.kidsWait+w
			}
		}
	}
	return c
}

func readProc(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// reportCores reports, a sweep, what the in-process sweeps (cpu[0]) and
// the cluster's (cpu[1]) cost the cores, where the machine tells.
func reportCores(b *testing.B, cpu [2]coreTimes) {
	if cpu[0].sweeps == 0 || cpu[1].sweeps == 0 || cpu[0].selfRun == 0 {
		return
	}
	per := func(d time.Duration, n int) float64 { return d.Seconds() * 1000 / float64(n) }
	var v [2][4]float64
	for k, c := range cpu {
		v[k] = [4]float64{per(c.selfRun, c.sweeps), per(c.kidsRun, c.sweeps), per(c.kidsWait, c.sweeps), per(c.selfWait, c.sweeps)}
	}
	b.ReportMetric(v[1][0], "cluster-caller-cpu-ms/sweep")
	b.ReportMetric(v[0][0], "local-caller-cpu-ms/sweep")
	b.ReportMetric(v[1][2], "cluster-workers-wait-ms/sweep")
	b.ReportMetric(v[0][2], "local-workers-wait-ms/sweep")
	ratios[b.Name()+" cores"] = fmt.Sprintf("cores a sweep, cluster against in process (mean of every timed sweep): caller process (with the NATS server and cluster worker) ran %.1f ms against %.1f, waited for a core %.1f against %.1f; strategy workers ran %.1f against %.1f, waited for a core %.1f against %.1f",
		v[1][0], v[0][0], v[1][3], v[0][3], v[1][1], v[0][1], v[1][2], v[0][2])
}

// joinCluster starts a one-worker cluster worker in this process and a
// dispatcher that has seen it; stop ends both.
func joinCluster(b *testing.B, url string) (*cluster.Dispatcher, func()) {
	ctx, cancel := context.WithCancel(b.Context())
	served := make(chan error, 1)
	go func() {
		served <- cluster.Serve(ctx, cluster.WorkerOptions{Options: cluster.Options{Key: testKey, URL: url}, Pool: newPool(b), CacheDir: b.TempDir()})
	}()
	d, err := cluster.Dial(ctx, cluster.DispatcherOptions{Options: cluster.Options{Key: testKey, URL: url}})
	if err != nil {
		b.Fatal(err)
	}
	return d, func() {
		d.Close()
		cancel()
		if err := <-served; err != nil {
			b.Error(err)
		}
	}
}

// testKey is the cluster key of this test run.
var testKey = clustertest.NewKey()
