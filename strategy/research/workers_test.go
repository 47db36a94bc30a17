package research

import (
	"testing"
	"time"
)

// TestWorkersFor: a sweep takes another worker only when each gets at
// least barTrialsPerWorker bar-evaluations; unknown bars leave the pool's
// size.
func TestWorkersFor(t *testing.T) {
	for _, c := range []struct {
		work time.Duration
		size int
		want int
	}{
		{sweepWork(100, 17_544), 2, 1},       // the demo's sweep: 35 ms, one worker is faster
		{sweepWork(250, 17_544), 2, 2},       // 88 ms
		{sweepWork(100, 1_000_000), 2, 2},    // the million-bar sweep takes both
		{sweepWork(1, 1_000_000), 2, 1},      // 20 ms
		{sweepWork(1000, 1_000_000), 8, 8},   // never more than the pool
		{sweepWork(100, 0), 2, 2},            // bars not known: the pool's size
		{sweepWork(100, 1_000_000), 1, 1},    // one worker
		{sweepWork(200, 17_544), 4, 1},       // 70 ms: under two workers' worth
		{sweepWork(0, 17_544), 2, 1},         // nothing to run still runs on one
		{sweepWork(300, 20_000), 4, 3},       // 120 ms: three workers' worth
		{57 * 1500 * time.Millisecond, 2, 2}, // a measured heavy strategy
	} {
		if got := workersFor(c.work, c.size); got != c.want {
			t.Errorf("workersFor(%v, %d) = %d, want %d", c.work, c.size, got, c.want)
		}
	}
}

// TestSweepWorkersFollowTheirWork: on a pool of two, the demo's
// 100-combination sweep over 17,544 bars runs on one worker in one chunk,
// and never starts the second, and a 250-combination one runs on both, a
// chunk each, as workersFor and chunkSizes say.
func TestSweepWorkersFollowTheirWork(t *testing.T) {
	var workers, chunks []int
	pool := newPool(t, 2)
	l := NewLocal(Config{ProofSeed: fixedSeed, Project: demoProject(t), Pool: pool, Timing: func(tm SweepTiming) {
		workers, chunks = append(workers, tm.Workers), append(chunks, tm.Chunks)
	}})
	small := Grid{"fast": {From: fp(2), To: fp(20), Step: fp(2)}, "slow": {From: fp(30), To: fp(120), Step: fp(10)}}
	for i, g := range []Grid{small, twoWorkerGrid} {
		if _, err := l.Sweep(ctxT(t), SweepRequest{StrategyRef: templateRef(t, "sma_cross"), Series: "BTC-USD@1h", Grid: g}, nil); err != nil {
			t.Fatal(err)
		}
		if st := pool.Stats(); i == 0 && st.Started != 1 {
			t.Errorf("the one-worker sweep started %d workers", st.Started)
		}
	}
	if len(workers) != 2 || workers[0] != 1 || workers[1] != 2 {
		t.Errorf("the sweeps ran on %v workers, want [1 2]", workers)
	}
	if len(chunks) != 2 || chunks[0] != 1 || chunks[1] != 2 {
		t.Errorf("the sweeps ran in %v chunks, want [1 2]", chunks)
	}
}

// TestGridSize: the grid's own count, before the knobs are known; a range
// without a step has none.
func TestGridSize(t *testing.T) {
	if n, ok := gridSize(twoWorkerGrid); !ok || n != 250 {
		t.Errorf("gridSize = %d, %v; want 250", n, ok)
	}
	if n, ok := gridSize(Grid{"fast": {Values: []any{5.0, 10.0}}, "slow": {From: fp(0.1), To: fp(0.3), Step: fp(0.1)}}); !ok || n != 6 {
		t.Errorf("gridSize = %d, %v; want 6", n, ok)
	}
	if _, ok := gridSize(Grid{"fast": {From: fp(2), To: fp(20)}}); ok {
		t.Error("a range without a step was counted")
	}
}
