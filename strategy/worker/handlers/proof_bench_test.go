//go:build unix

package handlers

import (
	"context"
	"encoding/json"
	"syscall"
	"testing"
	"time"

	"wicket/strategy/backtest"
	"wicket/strategy/ta"
	"wicket/strategy/templates"
	"wicket/strategy/worker"
)

// BenchmarkProofWarm is a sweep's winner's lookahead proof over a million
// bars (a LookaheadOnly backtest: the full run and 36 prefix runs) in a
// worker that holds the bars: with a bare memo, and as a worker serves
// it after a sweep's chunk (scoped: the spill, and the sweep's shared
// directory set). It reports the CPU, page faults and system time of a
// proof; run with -cpu 1 and 2 for a worker of one core and of two (the
// proof runs its prefixes on GOMAXPROCS goroutines).
func BenchmarkProofWarm(b *testing.B) {
	for _, mode := range []string{"memo", "worker"} {
		b.Run(mode, func(b *testing.B) { benchProof(b, mode) })
	}
}

func benchProof(b *testing.B, mode string) {
	path := writeBench(b, 1_000_000)
	src, err := templates.Source("sma_cross")
	if err != nil {
		b.Fatal(err)
	}
	cache := &barCache{}
	e, err := cache.load(path, "BENCH@1h", time.Time{}, time.Time{}, "")
	if err != nil {
		b.Fatal(err)
	}
	fee, slip := 10.0, 5.0
	req := backtest.Request{Name: "sma_cross.star", Source: src, Series: "BENCH@1h", HistoryPath: path,
		Params: map[string]any{"fast": int64(10), "slow": int64(60)}, Capital: "10000", FeeBps: &fee, SlippageBps: &slip,
		TradesLimit: 1, Digest: e.digest, LookaheadOnly: true, ProofSeed: 7,
		CostOptions: backtest.CostOptions{VolumeCap: "off"}}
	memo := ta.NewMemo(worker.MemoBytes)
	prove := func() error { _, err := backtestWith(context.Background(), req, memo, cache); return err }
	if mode == "worker" {
		cols := newSharedColumns(SpillMinBytes)
		if err := cols.reserve(SpillBytes); err != nil {
			b.Fatal(err)
		}
		memo.SetShared(cols)
		cols.setDir(b.TempDir()) // as the sweep's chunk left it
		s, err := newFileSpill(b.TempDir(), SpillBytes)
		if err != nil {
			b.Fatal(err)
		}
		defer s.close()
		h := scoped(table(memo, cache, cols), memo, cols, s, cache)
		body, err := json.Marshal(req)
		if err != nil {
			b.Fatal(err)
		}
		prove = func() error { _, err := h[worker.KindBacktest](context.Background(), body); return err }
	}
	var ru0, ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	for b.Loop() {
		if err := prove(); err != nil {
			b.Fatal(err)
		}
	}
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	cpu := time.Duration(ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano())
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N)/1000, "cpu-ms/proof")
	b.ReportMetric(float64(ru1.Minflt-ru0.Minflt)/float64(b.N), "faults/proof")
	b.ReportMetric(float64(ru1.Stime.Nano()-ru0.Stime.Nano())/1e6/float64(b.N), "sys-ms/proof")
}
