package cluster_test

import (
	"math"
	"strings"
	"testing"

	"wicket/internal/project"
	"wicket/strategy"
	"wicket/strategy/cluster"
	"wicket/strategy/clustertest"
	"wicket/strategy/history"
	"wicket/strategy/research"
)

// TestSecondSweepShipsNoBars: a long-lived worker keeps the bars it
// fetched, by their digest, and a dispatcher remembers what the cluster
// holds: a second sweep of the same series, through the same dispatcher
// or a new one, ships no bars and the worker fetches none. Once the
// series changes, the next sweep ships and runs over the new bars. A
// sweep this small is one chunk on the cluster, as in process.
func TestSecondSweepShipsNoBars(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster tests are skipped with -short")
	}
	p := project.Project{Root: t.TempDir()}
	writeBars(t, p, 500)
	url := clustertest.Server(t)
	d, log := joinWorker(t, cluster.Options{Key: testKey, URL: url})
	pool := newPool(t)
	var tm research.SweepTiming
	sweep := func(d *cluster.Dispatcher) research.SweepResult {
		t.Helper()
		res, err := research.NewLocal(research.Config{ProofSeed: fixedProofSeed, Project: p, Pool: pool, Chunks: d,
			Timing: func(st research.SweepTiming) { tm = st }}).Sweep(t.Context(), sweepReq(t, "TEST@1d"), nil)
		if err != nil || res.Evaluated != 100 || res.Failed != 0 {
			t.Fatalf("sweep: %v (evaluated %d, failed %d)", err, res.Evaluated, res.Failed)
		}
		return res
	}
	// Bars a worker gets, fetched from the store or pushed by the sweep.
	fetched := func() int {
		return strings.Count(log.String(), " fetched (") + strings.Count(log.String(), " pushed (")
	}

	first := sweep(d)
	if n := cluster.Shipped(d); n != 1 || fetched() != 1 {
		t.Fatalf("first sweep: %d bars shipped, %d fetched, want 1 and 1; the worker's log:\n%s", n, fetched(), log.String())
	}
	if tm.Chunks != 1 || tm.Bars != 500 {
		t.Errorf("first sweep: %d chunks over %d bars, want 1 over 500", tm.Chunks, tm.Bars)
	}
	// The chunk's answer measured what a combination costs a bar, unless
	// its trials were too short to tell (as over 500 bars they should be).
	want := tm.Work / (100 * 500)
	if tm.Work < 100*cluster.MinCostedTrial {
		want = 0
	}
	if got := d.TrialCost(sweepReq(t, "TEST@1d").Source); got-want > 1 || want-got > 1 {
		t.Errorf("measured cost of a combination's bar %v, want %v (%v of work over 100 combinations of 500 bars)", got, want, tm.Work)
	}
	second := sweep(d)
	if n := cluster.Shipped(d); n != 1 || fetched() != 1 {
		t.Fatalf("second sweep: %d bars shipped in all, %d fetched, want 1 and 1; the worker's log:\n%s", n, fetched(), log.String())
	}
	if a, b := first.Top[0], second.Top[0]; string(a.Metrics) != string(b.Metrics) || a.Params["fast"] != b.Params["fast"] || a.Params["slow"] != b.Params["slow"] {
		t.Errorf("the second sweep's winner %v: %s; the first's %v: %s", b.Params, b.Metrics, a.Params, a.Metrics)
	}
	// A new dispatcher (another session) finds them in the cluster's store.
	d2, err := cluster.Dial(t.Context(), cluster.DispatcherOptions{Options: cluster.Options{Key: testKey, URL: url}})
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	sweep(d2)
	if n := cluster.Shipped(d2); n != 0 || fetched() != 1 {
		t.Fatalf("a new dispatcher: %d bars shipped, %d fetched, want 0 and 1 in all; the worker's log:\n%s", n, fetched(), log.String())
	}
	// The series changes: the bars are read, shipped and fetched again.
	writeBars(t, p, 501)
	sweep(d)
	if n := cluster.Shipped(d); n != 2 || fetched() != 2 || tm.Bars != 501 {
		t.Fatalf("after the series changed: %d bars shipped in all, %d fetched, a sweep over %d bars, want 2, 2 and 501; the worker's log:\n%s", n, fetched(), tm.Bars, log.String())
	}
}

// writeBars writes n daily bars of TEST@1d to p's history store,
// replacing any.
func writeBars(t *testing.T, p project.Project, n int) {
	t.Helper()
	s, err := history.Open(p.HistoryPath())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b := strategy.Bars{Series: "TEST@1d"}
	for i := range n {
		c := 100 + 10*math.Sin(float64(i)/15) + float64(i%7)
		b.Time = append(b.Time, int64(1_600_000_000/86400+i)*86400)
		b.Open = append(b.Open, c-0.5)
		b.High = append(b.High, c+1)
		b.Low = append(b.Low, c-1)
		b.Close = append(b.Close, c)
		b.Volume = append(b.Volume, 1e6)
	}
	if err := s.Write(t.Context(), "TEST@1d", b, history.WriteOptions{Replace: true}); err != nil {
		t.Fatal(err)
	}
}
