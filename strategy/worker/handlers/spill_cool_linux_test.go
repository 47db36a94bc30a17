package handlers

import (
	"bufio"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"wicket/strategy/backtest"
	"wicket/strategy/templates"
	"wicket/strategy/worker"
)

// residentKB is the resident memory (Rss in /proc/self/smaps, KiB) of the
// mappings that hold the shared columns cols has mapped.
func residentKB(t *testing.T, cols *sharedColumns) int {
	t.Helper()
	cols.mu.Lock()
	var addrs []uintptr
	for _, res := range cols.held {
		for _, c := range res.Outputs {
			if len(c) > 0 {
				addrs = append(addrs, uintptr(unsafe.Pointer(&c[0])))
			}
		}
	}
	cols.mu.Unlock()
	if len(addrs) == 0 {
		t.Fatal("no shared column is mapped")
	}
	return mappedKB(t, addrs)
}

// mappedKB is the resident memory (KiB) of the mappings holding addrs.
func mappedKB(t *testing.T, addrs []uintptr) int {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	kb, in := 0, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if lo, hi, ok := strings.Cut(strings.Fields(line)[0], "-"); ok && !strings.HasSuffix(line, ":") && !strings.Contains(line, " kB") {
			a, err1 := strconv.ParseUint(lo, 16, 64)
			b, err2 := strconv.ParseUint(hi, 16, 64)
			in = false
			for _, p := range addrs {
				if err1 == nil && err2 == nil && uint64(p) >= a && uint64(p) < b {
					in = true
				}
			}
			continue
		}
		if v, ok := strings.CutPrefix(line, "Rss:"); ok && in {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			kb += n
		}
	}
	return kb
}

// TestProofLetsSharedColumnsGo: after a sweep's chunk the shared columns
// it read are resident in the worker; a backtest (the winner's proof
// here) lets their pages go before it runs and lets those its full run
// read go when it ends, so none stays resident beside the next sweep;
// the shared bars' pages go before the prefix runs, which map in again
// only the closes they read, not the times and opens the engine read;
// the next chunk reads them all again, bit for bit.
func TestProofLetsSharedColumnsGo(t *testing.T) {
	const n = 200_000 // columns of 1.6 MB: shared (SpillMinBytes)
	path := writeBench(t, n)
	src, err := templates.Source("sma_cross")
	if err != nil {
		t.Fatal(err)
	}
	_, cols, _, cache, h := scopedWorker(t)
	pr := call[worker.ParamsResult](t, h, worker.KindParams, worker.StrategyRequest{Name: "sma_cross.star", Source: src,
		Bars: &worker.BarsRange{HistoryPath: path, Series: "BENCH@1h", ShareDir: t.TempDir()}})
	chunk := worker.SweepChunk{Name: "sma_cross.star", Source: src, HistoryPath: path, Series: "BENCH@1h", SharedBars: pr.Shared,
		Digest: pr.Bars.Digest, Capital: "10000", FeeBps: 10, SlippageBps: 5, Blocks: 16,
		Combos: []map[string]any{{"fast": int64(5), "slow": int64(40)}, {"fast": int64(10), "slow": int64(80)}}}
	first := call[worker.SweepChunkResult](t, h, worker.KindSweep, chunk)
	if kb := residentKB(t, cols); kb < 1024 {
		t.Fatalf("after the chunk %d KiB of its shared columns are resident, want its SMAs", kb)
	}
	e, ok := cache.get(storeKey(path, "BENCH@1h", time.Time{}, time.Time{}), pr.Bars.Digest)
	if !ok || e.m == nil {
		t.Fatal("the chunk's bars are not a shared mapping")
	}
	e.release()
	barsAt := []uintptr{uintptr(unsafe.Pointer(&e.m.data[0]))}
	column := n * 8 / 1024
	if kb := mappedKB(t, barsAt); kb < 3*column {
		t.Fatalf("after the chunk %d KiB of the shared bars are resident, want the times, opens and closes (%d KiB each)", kb, column)
	}
	fee, slip := 10.0, 5.0
	bt := backtest.Request{Name: "sma_cross.star", Source: src, Series: "BENCH@1h", HistoryPath: path,
		Params: map[string]any{"fast": int64(10), "slow": int64(80)}, Capital: "10000", FeeBps: &fee, SlippageBps: &slip,
		TradesLimit: 1, Digest: pr.Bars.Digest, ProofSeed: 7, LookaheadOnly: true}
	if res := call[backtest.Response](t, h, worker.KindBacktest, bt); !strings.Contains(string(res.Result), `"passed (36 prefixes`) {
		t.Fatalf("the proof says %s", res.Result)
	}
	cols.mu.Lock()
	headers := len(cols.held) * os.Getpagesize() / 1024 // a file's header page, read to view it
	cols.mu.Unlock()
	if kb := residentKB(t, cols); kb > headers {
		t.Errorf("after the proof %d KiB of shared columns are resident in the worker, want only their headers' %d", kb, headers)
	}
	if kb := mappedKB(t, barsAt); kb > column+column/4 {
		t.Errorf("after the proof %d KiB of the shared bars are resident, want the closes the prefix runs read (%d KiB)", kb, column)
	}
	again := call[worker.SweepChunkResult](t, h, worker.KindSweep, chunk)
	if a, b := mustJSON(t, first.Trials), mustJSON(t, again.Trials); a != b {
		t.Errorf("the chunk after the proof answers\n%s\nwant\n%s", b, a)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
