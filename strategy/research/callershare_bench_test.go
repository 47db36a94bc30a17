package research

import (
	"fmt"
	"math"
	"testing"
	"time"
)

// BenchmarkSweepCallerShare measures how much of a sweep's CPU the caller
// takes (planning, decoding the chunks' answers, ranking, the PBO), beside
// what the workers take, for the 100-combination sweep over the demo's
// 17,544 hourly bars and over a million bars (the reference's grid), on a
// warm pool of one and of two workers, and where the fastest run's time
// went (SweepTiming). CPU time comes from /proc/<pid>/task/*/schedstat
// (taskCPU), so it is 0 where there is no procfs.
func BenchmarkSweepCallerShare(b *testing.B) {
	cases := []struct {
		name   string
		series []string
		grid   Grid
		bars   func(b *testing.B) Config
	}{
		{"bars=17544", benchSeries, benchGrid, func(b *testing.B) Config { return Config{Project: demoProject(b)} }},
		{"bars=1000000", []string{"BENCH@1h"}, refGrid, func(b *testing.B) Config {
			return Config{Project: benchProject(b, b.TempDir(), sineBars(1_000_000))}
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.StopTimer()
			base := c.bars(b)
			for _, size := range []int{1, 2} {
				pool, _ := warmPool(b, size)
				var got SweepTiming
				cfg := base
				cfg.Pool, cfg.Timing = pool, func(t SweepTiming) { got = t }
				l := NewLocal(cfg)
				best := SweepTiming{Total: math.MaxInt64}
				var caller, workers time.Duration
				for i := 0; i < b.N*callerShareRounds; i++ {
					for _, series := range c.series {
						self, all := taskCPU("self"), sweepCPU(pool)
						b.StartTimer()
						res, err := l.Sweep(ctxT(b), SweepRequest{StrategyRef: templateRef(b, "sma_cross"), Series: series, Grid: c.grid}, nil)
						b.StopTimer()
						if err != nil || res.Evaluated != 100 {
							b.Fatalf("%s: %v (evaluated %d)", series, err, res.Evaluated)
						}
						mine := taskCPU("self") - self
						caller, workers = caller+mine, workers+sweepCPU(pool)-all-mine
						if got.Total < best.Total {
							best = got
						}
					}
				}
				pool.Close()
				share := caller.Seconds() / max(1e-9, (caller+workers).Seconds())
				b.ReportMetric(share, fmt.Sprintf("caller-share-%dw", size))
				addRatio(fmt.Sprintf("ratio sweep caller CPU / the sweep's CPU, %s, %d warm worker(s): %.2f (caller %.0f ms, workers %.0f ms over %d sweeps; fastest: %s)",
					c.name, size, share, ms(caller), ms(workers), b.N*callerShareRounds*len(c.series), breakdown(best)))
			}
		})
	}
}

// callerShareRounds is how many times each series is swept per op.
const callerShareRounds = 2
