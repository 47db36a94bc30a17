package research

import (
	"fmt"
	"math"
	"testing"
	"time"
)

// BenchmarkCPCVvsSweep: CPCV with N = 10, k = 2 (45 splits, 9 paths) of
// the 100-combination grid on 100,000 hourly bars, against the plain
// sweep of the same grid over the same bars, each on a fresh warm pool
// of two workers; reports the ratio of their best times.
func BenchmarkCPCVvsSweep(b *testing.B) {
	b.StopTimer()
	p := benchProject(b, b.TempDir(), sineBars(100_000))
	ref := templateRef(b, "sma_cross")
	best := [2]time.Duration{math.MaxInt64, math.MaxInt64}
	for i := 0; i < b.N; i++ {
		for k := range 2 {
			pool, _ := warmPool(b, 2)
			l := NewLocal(Config{Project: p, Pool: pool})
			b.StartTimer()
			start := time.Now()
			var err error
			if k == 0 {
				var res SweepResult
				res, err = l.Sweep(ctxT(b), SweepRequest{StrategyRef: ref, Series: "BENCH@1h", Grid: benchGrid}, nil)
				if err == nil && res.Evaluated != 100 {
					err = fmt.Errorf("sweep evaluated %d", res.Evaluated)
				}
			} else {
				var res CPCVRunResult
				res, err = l.CPCV(ctxT(b), CPCVRequest{StrategyRef: ref, Series: "BENCH@1h", Grid: benchGrid, Groups: 10, Test: 2}, nil)
				if err == nil && (len(res.Splits) != 45 || len(res.PathSharpe) != 9 || res.Failed != 0) {
					err = fmt.Errorf("cpcv: %d splits, %d paths, %d failed", len(res.Splits), len(res.PathSharpe), res.Failed)
				}
			}
			took := time.Since(start)
			b.StopTimer()
			pool.Close()
			if err != nil {
				b.Fatal(err)
			}
			best[k] = min(best[k], took)
		}
	}
	ratio := best[1].Seconds() / best[0].Seconds()
	b.ReportMetric(ratio, "cpcv/sweep")
	addRatio(fmt.Sprintf("ratio cpcv N=10 k=2 / sweep, 100000 bars, 100 combinations, 2 workers: %.2fx (cpcv %s, sweep %s)",
		ratio, best[1].Round(time.Millisecond), best[0].Round(time.Millisecond)))
}
