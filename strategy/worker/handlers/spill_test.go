//go:build unix

package handlers

import (
	"fmt"
	"math"
	"testing"

	"wicket/strategy/ta"
	"wicket/strategy/templates"
	"wicket/strategy/worker"
)

// TestSpillComputesEachColumnOnce: a memo whose budget holds two
// 200,000-bar columns, asked for six SMAs three times over, computes each
// once with a spill (of room for all six) and 18 times without; the columns read back from the
// spill equal the computed ones bit for bit. Once the spill's room is
// taken back between requests, the memo computes them again.
func TestSpillComputesEachColumnOnce(t *testing.T) {
	const n = 200_000
	close := make([]float64, n)
	for i := range close {
		close[i] = 100 + 10*math.Sin(float64(i)/300) + float64(i%7)/10
	}
	sma, _ := ta.Builtin().Lookup("sma")
	lengths := []float64{5, 10, 20, 40, 80, 160}
	budget := 2*(n*8+64) + (2*(n*8+64))/7 + 1 // two columns in the major segment
	run := func(memo *ta.Memo) uint64 {
		key := memo.ValuesKey(close)
		for round := range 3 {
			for _, l := range lengths {
				res, _, err := memo.Compute(sma, [][]float64{close}, []ta.Key{key}, []float64{l})
				if err != nil {
					t.Fatal(err)
				}
				want, _ := ta.Compute(sma, [][]float64{close}, []float64{l})
				got, w := res.Outputs[0], want.Outputs[0]
				for i := range w {
					if math.Float64bits(got[i]) != math.Float64bits(w[i]) {
						t.Fatalf("round %d, sma %v: bar %d is %v, computed %v", round, l, i, got[i], w[i])
					}
				}
			}
		}
		return memo.Stats().Computed["sma"]
	}
	if got := run(ta.NewMemo(int64(budget))); got != 18 {
		t.Fatalf("without a spill the memo computed %d SMAs, want 18 (a budget of two columns, asked in a cycle of six)", got)
	}
	s, err := newFileSpill(t.TempDir(), 16<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	memo := ta.NewMemo(int64(budget))
	memo.SetSpill(s, SpillMinBytes)
	if got := run(memo); got != 6 {
		t.Errorf("with a spill the memo computed %d SMAs, want 6", got)
	}
	if st := memo.Stats(); st.Spilled == 0 || st.Bytes > int64(budget) {
		t.Errorf("stats %+v: want columns spilled and the budget kept", st)
	}
	memo.DropSpilled()
	if err := s.reset(); err != nil {
		t.Fatal(err)
	}
	if got := run(memo); got != 6+6 {
		t.Errorf("after the spill's room was taken back the memo computed %d SMAs in all, want 12 (every column again: those in use were read from the spill too)", got)
	}
}

// TestSpillFull: a spill with no room left refuses a column, and the memo
// drops it as it would without one.
func TestSpillFull(t *testing.T) {
	s, err := newFileSpill(t.TempDir(), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	col := make([]float64, 100_000)
	if _, ok := s.Put([][]float64{col}); !ok {
		t.Fatal("a 800 KB column does not fit a 1 MB spill")
	}
	if _, ok := s.Put([][]float64{col}); ok {
		t.Error("a second 800 KB column fits a 1 MB spill")
	}
	if !s.full() {
		t.Error("a spill 80 % used is not full")
	}
}

// BenchmarkSpillColumn: what a million-bar SMA column costs when the memo
// computes it again (compute) against reading it back from the spill
// (spill: each read a cold column's pages mapped in again, the other
// column pushed out), in CPU time per column.
func BenchmarkSpillColumn(b *testing.B) {
	const n = 1_000_000
	close := make([]float64, n)
	for i := range close {
		close[i] = 100 + 10*math.Sin(float64(i)/300)
	}
	sma, _ := ta.Builtin().Lookup("sma")
	for _, spill := range []bool{false, true} {
		b.Run(fmt.Sprintf("spill=%t", spill), func(b *testing.B) {
			memo := ta.NewMemo(int64(n*8+64) * 8 / 7) // one column
			if spill {
				s, err := newFileSpill(b.TempDir(), 32<<20)
				if err != nil {
					b.Fatal(err)
				}
				defer s.close()
				memo.SetSpill(s, SpillMinBytes)
			}
			key := memo.ValuesKey(close)
			sum := 0.0
			before := cpuTime()
			for i := 0; b.Loop(); i++ {
				res, _, err := memo.Compute(sma, [][]float64{close}, []ta.Key{key}, []float64{float64(10 + i%2)})
				if err != nil {
					b.Fatal(err)
				}
				col := res.Outputs[0]
				for j := 0; j < n; j += 512 { // touch every page, as a run reads the column
					sum += col[j]
				}
			}
			b.ReportMetric(float64((cpuTime()-before).Microseconds())/float64(b.N), "cpu-µs/column")
			_ = sum
		})
	}
}

// TestWorkerSpills: a worker process keeps a spill. A chunk over 400,000
// bars asks for eight distinct SMA lengths, the slow one cycling through
// five for each fast one: more columns than the worker's budget holds
// (four of 3.2 MB), so without the spill it computes the slow ones again
// for every fast one (18 SMAs); with it, each once.
func TestWorkerSpills(t *testing.T) {
	path := writeBench(t, 400_000)
	src, err := templates.Source("sma_cross")
	if err != nil {
		t.Fatal(err)
	}
	req := worker.SweepChunk{Name: "sma_cross.star", Source: src, HistoryPath: path, Series: "BENCH@1h", Capital: "10000", FeeBps: 10, SlippageBps: 5}
	for f := 5; f <= 15; f += 5 {
		for s := 20; s <= 100; s += 20 {
			req.Combos = append(req.Combos, map[string]any{"fast": int64(f), "slow": int64(s)})
		}
	}
	p := newPool(t, worker.Config{Size: 1})
	res, err := p.Sweep(ctxT(t), req)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range res.Trials {
		if tr.Error != "" {
			t.Fatalf("%v: %s", tr.Values, tr.Error)
		}
	}
	if got := res.Computed["sma"]; got != 8 {
		t.Errorf("the worker computed %d SMAs for 8 distinct lengths, want 8 (computed: %v)", got, res.Computed)
	}
}

// TestSpillKeepsWhatExceedsTheBudget: a result larger than the memo's
// whole budget (the three bands of 800,000 bars, 19.2 MB, against 16 MiB)
// was never kept; with a spill it is computed once and read back after.
func TestSpillKeepsWhatExceedsTheBudget(t *testing.T) {
	const n = 800_000
	close := make([]float64, n)
	for i := range close {
		close[i] = 100 + 10*math.Sin(float64(i)/300)
	}
	bb, _ := ta.Builtin().Lookup("bbands")
	run := func(memo *ta.Memo) uint64 {
		key := memo.ValuesKey(close)
		want, err := ta.Compute(bb, [][]float64{close}, bb.Defaults())
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			res, _, err := memo.Compute(bb, [][]float64{close}, []ta.Key{key}, bb.Defaults())
			if err != nil {
				t.Fatal(err)
			}
			for j := range want.Outputs {
				for i, w := range want.Outputs[j] {
					if g := res.Outputs[j][i]; math.Float64bits(g) != math.Float64bits(w) {
						t.Fatalf("output %d, bar %d: %v, computed %v", j, i, g, w)
					}
				}
			}
		}
		return memo.Stats().Computed["bbands"]
	}
	if got := run(ta.NewMemo(worker.MemoBytes)); got != 3 {
		t.Fatalf("without a spill: computed %d times, want 3", got)
	}
	s, err := newFileSpill(t.TempDir(), SpillBytes)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	memo := ta.NewMemo(worker.MemoBytes)
	memo.SetSpill(s, SpillMinBytes)
	if got := run(memo); got != 1 {
		t.Errorf("with a spill: computed %d times, want 1", got)
	}
}
