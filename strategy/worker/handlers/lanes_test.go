package handlers

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"wicket/strategy/ta"
	"wicket/strategy/templates"
	"wicket/strategy/worker"
)

// TestChunkLanesAgree: a chunk whose combinations run on two lanes (a lone
// request's GOMAXPROCS) answers, trial by trial and bit for bit, what it
// answers on one, failed combinations included, in the combinations'
// order, with each SMA computed once however the lanes meet in the memo.
func TestChunkLanesAgree(t *testing.T) {
	src, err := templates.Source("sma_cross")
	if err != nil {
		t.Fatal(err)
	}
	req := worker.SweepChunk{Name: "sma_cross.star", Source: src, HistoryPath: demoStore(t), Series: "BTC-USD@1h", Capital: "10000", FeeBps: 10, SlippageBps: 5, Blocks: 16}
	for f := 5; f <= 50; f += 9 {
		for s := 20; s <= 200; s += 45 {
			req.Combos = append(req.Combos, map[string]any{"fast": int64(f), "slow": int64(s)})
		}
	}
	req.Combos = append(req.Combos, map[string]any{"fast": int64(5), "slow": "not a number"})
	if got := chunkLanes(len(req.Combos), 17_544); got != runtime.GOMAXPROCS(0) && runtime.GOMAXPROCS(0) <= len(req.Combos) {
		t.Fatalf("chunkLanes = %d, want GOMAXPROCS %d", got, runtime.GOMAXPROCS(0))
	}
	if got := chunkLanes(len(req.Combos), parallelBelow); got != 1 {
		t.Fatalf("a chunk of %d bars runs on %d lanes, want 1", parallelBelow, got)
	}
	run := func(procs int) (worker.SweepChunkResult, uint64) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		memo := ta.NewMemo(worker.MemoBytes)
		res, err := evalChunk(context.Background(), req, memo, &barCache{}, newSharedColumns(SpillMinBytes), &scratches{})
		if err != nil {
			t.Fatal(err)
		}
		return res, memo.Stats().Computed["sma"]
	}
	one, sma1 := run(1)
	two, sma2 := run(2)
	if len(one.Trials) != len(req.Combos) || len(two.Trials) != len(req.Combos) {
		t.Fatalf("%d and %d trials, want %d", len(one.Trials), len(two.Trials), len(req.Combos))
	}
	if sma1 != sma2 {
		t.Errorf("SMAs computed: %d on one lane, %d on two", sma1, sma2)
	}
	if e := two.Trials[len(req.Combos)-1].Error; e == "" {
		t.Error("the combination with a bad knob value did not fail")
	}
	for i := range one.Trials {
		// %#v writes every float in its shortest exact form, NaN as NaN.
		a, b := fmt.Sprintf("%#v", one.Trials[i]), fmt.Sprintf("%#v", two.Trials[i])
		if a != b {
			t.Fatalf("trial %d differs between one lane and two:\n%s\n%s", i, a, b)
		}
	}
}

// TestRunLanesHandsOutEachOnce: every index is done once, by a lane below
// the count; a panic in a lane reaches the caller (the worker's dispatch
// turns it into the request's error) once the lanes stop, and the other
// lanes take no more.
func TestRunLanesHandsOutEachOnce(t *testing.T) {
	const n = 1000
	var mu sync.Mutex
	done := make([]int, n)
	runLanes(context.Background(), n, 3, func(lane, i int) {
		if lane < 0 || lane >= 3 {
			t.Errorf("lane %d", lane)
		}
		mu.Lock()
		done[i]++
		mu.Unlock()
	})
	for i, c := range done {
		if c != 1 {
			t.Fatalf("index %d done %d times", i, c)
		}
	}
	var ran atomic.Int64
	got := func() (r any) {
		defer func() { r = recover() }()
		runLanes(context.Background(), n, 2, func(_, i int) {
			ran.Add(1)
			if i == 10 {
				panic("combination 10")
			}
		})
		return nil
	}()
	if got != "combination 10" {
		t.Fatalf("recovered %v, want the lane's panic", got)
	}
	if r := ran.Load(); r >= n {
		t.Errorf("the lanes went on after the panic: %d of %d done", r, n)
	}
}
