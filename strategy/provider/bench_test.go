package provider_test

import (
	"context"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"wicket/internal/testkit"
	"wicket/strategy/history"
	"wicket/strategy/provider"
	"wicket/strategy/provider/binance"
	"wicket/strategy/provider/providertest"
)

// peakHeap samples the live heap every 5 ms until stop is called and
// returns the largest value seen, in MiB. It includes the fake server,
// which runs in the same process.
func peakHeap() (stop func() float64) {
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > peak.Load() {
				peak.Store(ms.HeapAlloc)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() float64 {
		close(done)
		wg.Wait()
		return float64(peak.Load()) / (1 << 20)
	}
}

// BenchmarkFetch1M fetches a million 1m bars from the fake Binance (1000
// klines a page, every page committed), into a fresh store each time.
func BenchmarkFetch1M(b *testing.B) {
	const n = 1_000_000
	end := t0.Add(n * time.Minute)
	clock := providertest.NewClock(end.Add(time.Hour))
	f := providertest.NewBinance(clock, map[string]providertest.Gen{"BTCUSDT": {Start: t0, End: end, Step: time.Minute}})
	defer f.Close()
	src := binance.New(binance.Config{BaseURL: f.URL, Transport: &provider.Transport{}})
	var total time.Duration
	var peak float64
	cpu, _ := testkit.CPUTime(false)
	for b.Loop() {
		store, err := history.Open(filepath.Join(b.TempDir(), "history.db"))
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		stop := peakHeap()
		start := time.Now()
		res, err := provider.Fetch(context.Background(), store, src, "BTC-USD@1m", provider.FetchOptions{From: t0, Now: clock.Now})
		total += time.Since(start)
		peak = max(peak, stop())
		if err != nil || res.Added != n {
			b.Fatalf("added %d, %v", res.Added, err)
		}
		store.Close()
	}
	per := total.Seconds() / float64(b.N)
	b.ReportMetric(n/per, "bars/s")
	b.ReportMetric(per, "s/1M-bars")
	b.ReportMetric(peak, "peak-heap-MiB")
	now, _ := testkit.CPUTime(false)
	b.ReportMetric((now-cpu).Seconds()/float64(b.N), "cpu-s/1M-bars") // the fake server's share included
}
