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
// worker's view (one core, its collector included). On 1,000 bars the
// figure is mostly what a combination costs besides the engine's pass
// (loading the strategy, calling signals, writing the metrics).
func BenchmarkSweepChunk(b *testing.B) {
	type input struct {
		name string
		open func() (path, series string)
	}
	var inputs []input
	for _, n := range []int{1_000, 17_544, 1_000_000} {
		inputs = append(inputs, input{fmt.Sprintf("bars=%d", n), func() (string, string) { return writeBench(b, n), "BENCH@1h" }})
	}
	// The demo's hourly random walk (17,544 bars, the reference's small
	// case): many more crossings, so many more trades, than the sine.
	inputs = append(inputs, input{"demo=BTC-USD@1h", func() (string, string) { return demoStore(b), "BTC-USD@1h" }})
	for _, in := range inputs {
		for _, spill := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/spill=%t", in.name, spill), func(b *testing.B) { benchChunk(b, in.open, spill) })
		}
	}
}

// benchChunk is one case of BenchmarkSweepChunk: with spill, the memo
// spills what it evicts as a worker's does (withSpill).
func benchChunk(b *testing.B, open func() (path, series string), spill bool) {
	path, series := open()
	src, err := templates.Source("sma_cross")
	if err != nil {
		b.Fatal(err)
	}
	req := worker.SweepChunk{Name: "sma_cross.star", Source: src, HistoryPath: path, Series: series, Capital: "10000", FeeBps: 10, SlippageBps: 5, Blocks: 16,
		// The reference models no volume cap (strategy/research's refCosts).
		CostOptions: backtest.CostOptions{VolumeCap: "off"}}
	for f := 5; f <= 50; f += 5 {
		for s := 20; s <= 200; s += 20 {
			req.Combos = append(req.Combos, map[string]any{"fast": int64(f), "slow": int64(s)})
		}
	}
	cache := &barCache{}
	e, err := cache.load(path, series, time.Time{}, time.Time{}, "")
	if err != nil {
		b.Fatal(err)
	}
	req.Digest = e.digest // the chunks find the bars in the cache, as a sweep's do
	before := cpuTime()
	var computed uint64
	for b.Loop() {
		memo := ta.NewMemo(worker.MemoBytes)
		if spill {
			s, err := newFileSpill(b.TempDir(), SpillBytes)
			if err != nil {
				b.Fatal(err)
			}
			defer s.close()
			memo.SetSpill(s, SpillMinBytes)
		}
		if _, err := evalChunk(context.Background(), req, memo, cache, newSharedColumns(SpillMinBytes), &scratches{}); err != nil {
			b.Fatal(err)
		}
		computed = memo.Stats().Computed["sma"]
	}
	cpu := cpuTime() - before
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N*len(req.Combos)), "cpu-µs/combination")
	b.ReportMetric(float64(computed), "SMAs/chunk")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
