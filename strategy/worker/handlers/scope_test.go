//go:build unix

package handlers

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"wicket/strategy/backtest"
	"wicket/strategy/ta"
	"wicket/strategy/templates"
	"wicket/strategy/worker"
)

// call runs the request of kind through h as a worker serves it.
func call[Resp any](t *testing.T, h worker.Handlers, kind string, req any) Resp {
	t.Helper()
	body, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	out, err := h[kind](context.Background(), body)
	if err != nil {
		t.Fatalf("%s: %v", kind, err)
	}
	return out.(Resp)
}

// TestProofKeepsNothing: after a sweep's chunk in a worker, a backtest
// (whose lookahead proof reruns the strategy over some 36 prefixes of the
// bars) publishes none of its columns in the sweep's shared directory and
// spills none of them, so the room in which a warm session's next sweep
// finds the chunk's columns stays as the chunk left it; the winner's
// proof alone (LookaheadOnly) does not touch the worker's memo at all,
// and reads the columns the chunk mapped without mapping them again;
// both pass; and the next chunk shares its columns as before and drops,
// not spills, the prefix columns the backtest left in the memo's budget.
func TestProofKeepsNothing(t *testing.T) {
	const n = 200_000 // columns of 1.6 MB: shared and spilled (SpillMinBytes)
	path := writeBench(t, n)
	src, err := templates.Source("sma_cross")
	if err != nil {
		t.Fatal(err)
	}
	memo, cols, spill, _, h := scopedWorker(t)

	dir := t.TempDir()
	pr := call[worker.ParamsResult](t, h, worker.KindParams, worker.StrategyRequest{Name: "sma_cross.star", Source: src,
		Bars: &worker.BarsRange{HistoryPath: path, Series: "BENCH@1h", ShareDir: dir}})
	if pr.Shared == "" || pr.Bars == nil {
		t.Fatalf("the params request shared no bars: %+v", pr)
	}
	chunk := worker.SweepChunk{Name: "sma_cross.star", Source: src, HistoryPath: path, Series: "BENCH@1h", SharedBars: pr.Shared,
		Digest: pr.Bars.Digest, Capital: "10000", FeeBps: 10, SlippageBps: 5, Blocks: 16}
	for _, f := range []int64{5, 10} {
		for _, s := range []int64{40, 80, 120} {
			chunk.Combos = append(chunk.Combos, map[string]any{"fast": f, "slow": s})
		}
	}
	call[worker.SweepChunkResult](t, h, worker.KindSweep, chunk)
	files := func() int {
		m, _ := filepath.Glob(filepath.Join(dir, "*.col"))
		return len(m)
	}
	colFiles, spilled := files(), spill.used
	if colFiles != 5 {
		t.Fatalf("the chunk shared %d columns, want its 5 SMAs", colFiles)
	}

	fee, slip := 10.0, 5.0
	bt := backtest.Request{Name: "sma_cross.star", Source: src, Series: "BENCH@1h", HistoryPath: path,
		Params: map[string]any{"fast": int64(10), "slow": int64(80)}, Capital: "10000", FeeBps: &fee, SlippageBps: &slip,
		TradesLimit: 1, Digest: pr.Bars.Digest, ProofSeed: 7}
	res := call[backtest.Response](t, h, worker.KindBacktest, bt)
	if !strings.Contains(string(res.Result), `"passed (36 prefixes`) {
		t.Fatalf("the backtest's proof says %s", res.Result)
	}
	before, room := memo.Stats(), cols.used
	bt.LookaheadOnly, bt.Params["slow"] = true, int64(120)
	res = call[backtest.Response](t, h, worker.KindBacktest, bt)
	if !strings.Contains(string(res.Result), `"passed (36 prefixes`) {
		t.Fatalf("the proof says %s", res.Result)
	}
	if after := memo.Stats(); after.Hits != before.Hits || after.Misses != before.Misses {
		t.Errorf("the proof asked the worker's memo %d times", after.Hits+after.Misses-before.Hits-before.Misses)
	}
	if cols.used != room {
		t.Errorf("the proof mapped %d bytes more of shared columns; the chunk had mapped the two it reads", cols.used-room)
	}
	if got := files(); got != colFiles {
		t.Errorf("after the backtest and the proof the sweep's directory holds %d shared columns, want the chunk's %d", got, colFiles)
	}
	if spill.used != spilled {
		t.Errorf("the backtest and the proof spilled %d bytes of their prefix columns", spill.used-spilled)
	}

	// The next chunk, with more lengths, shares them again.
	chunk.Combos = []map[string]any{{"fast": int64(15), "slow": int64(160)}, {"fast": int64(20), "slow": int64(200)}}
	call[worker.SweepChunkResult](t, h, worker.KindSweep, chunk)
	if got := files(); got != colFiles+4 {
		t.Errorf("the next chunk left %d shared columns, want %d", got, colFiles+4)
	}
	if spill.used != spilled {
		t.Errorf("the next chunk spilled %d bytes: the prefix columns the backtest left in the memo", spill.used-spilled)
	}
}

// scopedWorker is a worker's handler table as handlers.New builds it, on
// a memo of worker 0's budget with shared columns and a spill of their
// default room in t's temporary directory: what the tests of a worker's
// memory across requests drive.
func scopedWorker(t *testing.T) (*ta.Memo, *sharedColumns, *fileSpill, *barCache, worker.Handlers) {
	t.Helper()
	memo := ta.NewMemo(worker0Budget)
	cols := newSharedColumns(SpillMinBytes)
	if err := cols.reserve(SpillBytes); err != nil {
		t.Fatal(err)
	}
	memo.SetShared(cols)
	spill, err := newFileSpill(t.TempDir(), SpillBytes)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { spill.close() })
	cache := &barCache{}
	return memo, cols, spill, cache, scoped(table(memo, cache, cols), memo, cols, spill, cache)
}
