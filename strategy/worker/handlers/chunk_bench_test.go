//go:build unix

package handlers

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"wicket/strategy/backtest"
	"wicket/strategy/ta"
	"wicket/strategy/templates"
	"wicket/strategy/worker"
)

// BenchmarkSweepChunk evaluates the reference's 100-combination SMA-cross
// grid as one chunk in this process, with a cold indicator cache each
// time, and reports the process's CPU time per combination, which a busy
// machine disturbs less than the wall clock. Run with -cpu 1 for a
// worker's view (one core, its collector included).
func BenchmarkSweepChunk(b *testing.B) {
	for _, n := range []int{17_544, 1_000_000} {
		b.Run(fmt.Sprintf("bars=%d", n), func(b *testing.B) {
			path := writeBench(b, n)
			src, err := templates.Source("sma_cross")
			if err != nil {
				b.Fatal(err)
			}
			req := worker.SweepChunk{Name: "sma_cross.star", Source: src, HistoryPath: path, Series: "BENCH@1h", Capital: "10000", FeeBps: 10, SlippageBps: 5}
			for f := 5; f <= 50; f += 5 {
				for s := 20; s <= 200; s += 20 {
					req.Combos = append(req.Combos, map[string]any{"fast": int64(f), "slow": int64(s)})
				}
			}
			cache := &barCache{}
			e, err := cache.load(path, "BENCH@1h", time.Time{}, time.Time{}, "")
			if err != nil {
				b.Fatal(err)
			}
			req.Digest = e.digest // the chunks find the bars in the cache, as a sweep's do
			before := cpuTime()
			for b.Loop() {
				if _, err := evalChunk(context.Background(), req, ta.NewMemo(worker.MemoBytes), cache, &backtest.Scratch{}); err != nil {
					b.Fatal(err)
				}
			}
			cpu := cpuTime() - before
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N*len(req.Combos)), "cpu-µs/combination")
		})
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
