//go:build unix

package handlers

import (
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"wicket/strategy/ta"
)

// sharedCase is a 200,000-bar column and six SMA lengths over it.
func sharedCase() ([]float64, []float64) {
	const n = 200_000
	close := make([]float64, n)
	for i := range close {
		close[i] = 100 + 10*math.Sin(float64(i)/300) + float64(i%7)/10
	}
	return close, []float64{5, 10, 20, 40, 80, 160}
}

// smaAll asks memo for every length's SMA of close, keyed as every worker
// keys the close of the same bars (by a name, not by the memo's own
// content hash), and checks each against ta.Compute bit for bit.
func smaAll(t *testing.T, memo *ta.Memo, close, lengths []float64) {
	t.Helper()
	sma, _ := ta.Builtin().Lookup("sma")
	key := memo.Key("bars.source\x00test-digest\x00close", nil, nil)
	for _, l := range lengths {
		res, _, err := memo.Compute(sma, [][]float64{close}, []ta.Key{key}, []float64{l})
		if err != nil {
			t.Fatal(err)
		}
		want, _ := ta.Compute(sma, [][]float64{close}, []float64{l})
		if res.Start != want.Start {
			t.Fatalf("sma %v starts at %d, computed %d", l, res.Start, want.Start)
		}
		for i, w := range want.Outputs[0] {
			if math.Float64bits(res.Outputs[0][i]) != math.Float64bits(w) {
				t.Fatalf("sma %v: bar %d is %v, computed %v", l, i, res.Outputs[0][i], w)
			}
		}
	}
}

// TestSharedColumnsComputedOnce: two memos (two workers: their content
// keys differ, their provenance keys do not) sharing one directory
// compute each of six SMAs once between them; the second takes all six
// from the first's files, equal bit for bit to ta.Compute's. Without a
// directory, each computes its own.
func TestSharedColumnsComputedOnce(t *testing.T) {
	close, lengths := sharedCase()
	dir := t.TempDir()
	a, b := ta.NewMemo(worker0Budget), ta.NewMemo(worker0Budget)
	ca, cb := newSharedColumns(SpillMinBytes), newSharedColumns(SpillMinBytes)
	ca.setDir(dir)
	cb.setDir(dir)
	a.SetShared(ca)
	b.SetShared(cb)
	smaAll(t, a, close, lengths)
	smaAll(t, b, close, lengths)
	if got := a.Stats().Computed["sma"]; got != 6 {
		t.Errorf("the first memo computed %d SMAs, want 6", got)
	}
	if s := b.Stats(); s.Computed["sma"] != 0 || s.Taken != 6 {
		t.Errorf("the second memo computed %d SMAs and took %d, want 0 and 6", s.Computed["sma"], s.Taken)
	}
	cols, _ := filepath.Glob(filepath.Join(dir, "*.col"))
	if len(cols) != 6 {
		t.Errorf("%d shared column files, want 6", len(cols))
	}

	// Views taken back between requests: the memo drops them, then the
	// mappings go; asked again, it reads the files again.
	b.DropSpilled()
	cb.reset()
	smaAll(t, b, close, lengths)
	if s := b.Stats(); s.Computed["sma"] != 0 || s.Taken != 12 {
		t.Errorf("after the reset the second memo computed %d SMAs and took %d, want 0 and 12", s.Computed["sma"], s.Taken)
	}

	alone := ta.NewMemo(worker0Budget)
	none := newSharedColumns(SpillMinBytes)
	alone.SetShared(none)
	smaAll(t, alone, close, lengths)
	if s := alone.Stats(); s.Computed["sma"] != 6 || s.Taken != 0 {
		t.Errorf("without a directory the memo computed %d SMAs and took %d, want 6 and 0", s.Computed["sma"], s.Taken)
	}
}

// worker0Budget holds two of sharedCase's columns, as a worker's memo
// holds two of a million bars.
const worker0Budget = 2*(200_000*8+64) + (2*(200_000*8+64))/7 + 1

// TestSharedColumnsClaimWaits: while one worker holds a column's claim
// (computing it), another's Take of it waits, and then reads what the
// first published instead of computing it; a claim given up without a
// result (a failed computation, or a column too short to share) leaves
// the next taker to compute it.
func TestSharedColumnsClaimWaits(t *testing.T) {
	close, _ := sharedCase()
	dir := t.TempDir()
	ca, cb := newSharedColumns(SpillMinBytes), newSharedColumns(SpillMinBytes)
	ca.setDir(dir)
	cb.setDir(dir)
	claimed := ta.Key{Hi: 3, Lo: 4}
	_, ok, publish := ca.Take(claimed)
	if ok {
		t.Fatal("a column nobody computed was taken")
	}
	var (
		wg  sync.WaitGroup
		got ta.Result
		hit bool
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		got, hit, _ = cb.Take(claimed)
	}()
	res := ta.Result{Outputs: [][]float64{close}, Start: 3}
	if !publish(&res) {
		t.Fatal("the column was not published")
	}
	wg.Wait()
	if !hit {
		t.Fatal("the waiting worker computed the column instead of reading it")
	}
	if got.Start != 3 || len(got.Outputs) != 1 || len(got.Outputs[0]) != len(close) {
		t.Fatalf("read start %d, %d outputs", got.Start, len(got.Outputs))
	}
	for i, v := range close {
		if math.Float64bits(got.Outputs[0][i]) != math.Float64bits(v) || math.Float64bits(res.Outputs[0][i]) != math.Float64bits(v) {
			t.Fatalf("bar %d differs", i)
		}
	}

	// A claim given up without a column worth sharing leaves the column
	// to the next taker.
	short := ta.Key{Hi: 5, Lo: 6}
	_, _, giveUp := ca.Take(short)
	if giveUp(&ta.Result{Outputs: [][]float64{close[:100]}}) {
		t.Error("a 100-bar column was published")
	}
	if _, ok, publish := cb.Take(short); ok {
		t.Error("a column never published was taken")
	} else {
		publish(nil)
	}
	if _, err := os.Stat(filepath.Join(dir, "00000000000000050000000000000006.col")); !os.IsNotExist(err) {
		t.Errorf("a short column's file: %v", err)
	}
}

// TestSharedColumnsReservedRoom: in room reserved for two of
// sharedCase's columns, a worker maps two shared columns and computes the
// others (equal bit for bit all the same); once the memo has dropped the
// views and the room is reset, it maps them again.
func TestSharedColumnsReservedRoom(t *testing.T) {
	close, lengths := sharedCase()
	dir := t.TempDir()
	a, b := ta.NewMemo(worker0Budget), ta.NewMemo(worker0Budget)
	ca, cb := newSharedColumns(SpillMinBytes), newSharedColumns(SpillMinBytes)
	col := pageUp(sharedHeader + len(close)*8)
	if err := cb.reserve(2 * col); err != nil {
		t.Fatal(err)
	}
	ca.setDir(dir)
	cb.setDir(dir)
	a.SetShared(ca)
	b.SetShared(cb)
	smaAll(t, a, close, lengths)
	smaAll(t, b, close, lengths)
	if s := b.Stats(); s.Computed["sma"] != 4 || s.Taken != 2 {
		t.Errorf("with room for two the second memo computed %d SMAs and took %d, want 4 and 2", s.Computed["sma"], s.Taken)
	}
	if !cb.full(0) {
		t.Error("the room is spent but not full")
	}
	b.DropSpilled()
	cb.reset()
	if cb.full(0) {
		t.Error("the room is full after a reset")
	}
	fresh := ta.NewMemo(worker0Budget)
	fresh.SetShared(cb)
	smaAll(t, fresh, close, lengths[:2])
	if s := fresh.Stats(); s.Computed["sma"] != 0 || s.Taken != 2 {
		t.Errorf("after the reset a memo computed %d SMAs and took %d, want 0 and 2", s.Computed["sma"], s.Taken)
	}
}
