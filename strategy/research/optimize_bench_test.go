package research

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkOptimizeVsGrid runs, on the same strategy, bars and two
// workers, the whole 400-combination grid as a sweep and a 100-trial
// optimisation of it by each method, and reports the sweep's
// combinations/s beside each optimisation's trials/s: an optimisation
// pays a round trip per batch (the workers' parallelism) and the
// optimiser's proposals, where a sweep hands out large chunks.
func BenchmarkOptimizeVsGrid(b *testing.B) {
	grid := Grid{"fast": {From: fp(2), To: fp(40), Step: fp(2)}, "slow": {From: fp(30), To: fp(220), Step: fp(10)}}
	ref := templateRef(b, "sma_cross")
	const series = "BTC-USD@1h"
	pool, _ := warmPool(b, 2)
	l := NewLocal(Config{ProofSeed: fixedSeed, Project: demoProject(b), Pool: pool})
	var sweepTook time.Duration
	took := map[string]time.Duration{}
	methods := []string{"random", "tpe", "cmaes"}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		res, err := l.Sweep(ctxT(b), SweepRequest{StrategyRef: ref, Series: series, Grid: grid}, nil)
		sweepTook += time.Since(start)
		if err != nil || res.Evaluated != 400 {
			b.Fatalf("sweep: %v, %d evaluated", err, res.Evaluated)
		}
		for _, m := range methods {
			seed := uint64(i + 1)
			start := time.Now()
			res, err := l.Optimize(ctxT(b), OptimizeRequest{StrategyRef: ref, Series: series, Grid: grid, Method: m, Trials: 100, Seed: &seed}, nil)
			took[m] += time.Since(start)
			if err != nil || res.Evaluated != 100 {
				b.Fatalf("optimize %s: %v, %d evaluated", m, err, res.Evaluated)
			}
		}
	}
	b.ReportMetric(float64(400*b.N)/sweepTook.Seconds(), "grid-combinations/s")
	for _, m := range methods {
		b.ReportMetric(float64(100*b.N)/took[m].Seconds(), m+"-trials/s")
	}
	addRatio(fmt.Sprintf("ratio optimize tpe trials/s / sweep combinations/s: %.2f", (float64(100*b.N)/took["tpe"].Seconds())/(float64(400*b.N)/sweepTook.Seconds())))
}
