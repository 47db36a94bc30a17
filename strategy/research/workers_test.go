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
// 100-combination sweep over 17,544 bars runs on one worker, and a
// 250-combination one on both, as workersFor says.
func TestSweepWorkersFollowTheirWork(t *testing.T) {
	var workers []int
	l := NewLocal(Config{Project: demoProject(t), Pool: newPool(t, 2), Timing: func(tm SweepTiming) { workers = append(workers, tm.Workers) }})
	small := Grid{"fast": {From: fp(2), To: fp(20), Step: fp(2)}, "slow": {From: fp(30), To: fp(120), Step: fp(10)}}
	for _, g := range []Grid{small, twoWorkerGrid} {
		if _, err := l.Sweep(ctxT(t), SweepRequest{StrategyRef: templateRef(t, "sma_cross"), Series: "BTC-USD@1h", Grid: g}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if len(workers) != 2 || workers[0] != 1 || workers[1] != 2 {
		t.Errorf("the sweeps ran on %v workers, want [1 2]", workers)
	}
}
