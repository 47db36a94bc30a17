package research

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// BenchmarkSweepFixedCost runs the 100-combination sweep over each of the
// demo's 17,544-bar hourly series on a warm pool (workers started, as in a
// running server), and prints where the time of the fastest run went:
// the combinations' own time (what the workers spent in them, shared out
// over the workers) and everything else, the sweep's fixed cost, phase by
// phase. The spec asks for a fixed cost under 20 ms.
func BenchmarkSweepFixedCost(b *testing.B) {
	for _, size := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", size), func(b *testing.B) {
			b.StopTimer()
			pool, _ := warmPool(b, size)
			defer pool.Close()
			var got []SweepTiming
			l := NewLocal(Config{ProofSeed: fixedSeed, Project: demoProject(b), Pool: pool, Timing: func(t SweepTiming) { got = append(got, t) }})
			best := SweepTiming{Total: time.Hour}
			for i := 0; i < b.N*fixedCostRounds; i++ {
				for _, series := range benchSeries {
					req := SweepRequest{StrategyRef: templateRef(b, "sma_cross"), Series: series, Grid: benchGrid}
					b.StartTimer()
					res, err := l.Sweep(ctxT(b), req, nil)
					b.StopTimer()
					if err != nil {
						b.Fatal(err)
					}
					if res.Evaluated != 100 || len(got) == 0 {
						b.Fatalf("%s: evaluated %d, %d timings", series, res.Evaluated, len(got))
					}
					if t := got[len(got)-1]; t.Total < best.Total {
						best = t
					}
				}
			}
			own := best.Work / time.Duration(max(1, best.Workers))
			fixed := best.Total - own
			b.ReportMetric(ms(fixed), "fixed-ms")
			b.ReportMetric(ms(own), "combinations-ms")
			addRatio(fmt.Sprintf("ratio sweep fixed cost / 20 ms, 17544 bars, 100 combinations, %d warm worker(s), in process: %.2fx (target < 1; %s)",
				size, ms(fixed)/20, breakdown(best)))
		})
	}
}

// fixedCostRounds is how many times each series is swept per op.
const fixedCostRounds = 3

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// breakdown says where a sweep's time went, in milliseconds.
func breakdown(t SweepTiming) string {
	n := time.Duration(max(1, t.Workers))
	own := t.Work / n
	parts := []string{
		fmt.Sprintf("total %.1f ms = combinations' own %.1f ms (%.1f ms of work over %d workers) + fixed %.1f ms", ms(t.Total), ms(own), ms(t.Work), t.Workers, ms(t.Total-own)),
		fmt.Sprintf("params request %.1f", ms(t.Params)),
		fmt.Sprintf("rest of the plan %.1f", ms(t.Plan-t.Params)),
		fmt.Sprintf("chunks' bars and compiling in the workers %.1f", ms((t.Worker-t.Work)/n)),
		fmt.Sprintf("pipe and JSON of %d chunks %.1f", t.Chunks, ms((t.Calls-t.Worker)/n)),
		fmt.Sprintf("idle tail %.1f", ms(t.Run-t.Calls/n)),
		fmt.Sprintf("rank %.1f", ms(t.Rank)),
		fmt.Sprintf("PBO %.1f (no ledger)", ms(t.After)),
		fmt.Sprintf("waiting for the winner's proof %.1f (its run %.1f, beside the PBO)", ms(t.Proof), ms(t.ProofRun)),
	}
	rest := t.Total - t.Plan - t.Run - t.Rank - t.After - t.Proof
	parts = append(parts, fmt.Sprintf("other %.1f", ms(rest)))
	return strings.Join(parts, "; ")
}
