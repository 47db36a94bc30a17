package ledger

import (
	"context"
	"math"
	"path/filepath"
	"testing"
)

// TestAppendFoldsItsOwnRows: an append folds its rows into the kept sums
// of each series whose sums were at the chain's tip, so the Trials that
// follows reads no row, and answers as a fresh read of every row does
// (NaN and infinite Sharpe ratios, uncounted kinds and several series in
// one batch); sums left behind by another handle's append are not
// folded, and Trials reads the rows they miss.
func TestAppendFoldsItsOwnRows(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "research.db")
	kept, other := openTest(t, path), openTest(t, path)
	series := []string{"BTC-USD@1h", "ETH-USD@1h"}
	through := func(s string) int64 {
		kept.sums.mu.Lock()
		defer kept.sums.mu.Unlock()
		if k := kept.sums.bySeries[s]; k != nil {
			return k.through
		}
		return -1
	}
	same := func(when string) {
		t.Helper()
		for _, s := range series {
			for _, scope := range Scopes {
				q := TrialQuery{Strategy: "rsi", Series: s, Scope: scope}
				got, err := kept.Trials(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				fresh := openTest(t, path)
				want, err := fresh.Trials(ctx, q)
				fresh.Close()
				if err != nil {
					t.Fatal(err)
				}
				if got != want {
					t.Fatalf("%s, %+v: kept sums %+v, a fresh read %+v", when, q, got, want)
				}
			}
		}
	}
	batch := func(n int) []Row {
		var rows []Row
		for k := range n {
			r := row([]string{"sma_cross", "rsi"}[k%2], math.Sin(float64(k*13+n))/10, "s")
			r.Series = series[(k/3)%2]
			switch k % 7 {
			case 2:
				r.SharpePerPeriod = math.NaN()
			case 4:
				r.SharpePerPeriod = math.Inf(1)
			case 5:
				r.Kind = KindWalkForward // not counted
			}
			rows = append(rows, r)
		}
		return rows
	}
	if _, err := kept.Append(ctx, batch(9)); err != nil {
		t.Fatal(err)
	}
	same("before any fold") // the sums are read and kept
	for round := range 4 {
		rows := batch(11 + round)
		if _, err := kept.Append(ctx, rows); err != nil {
			t.Fatal(err)
		}
		last := rows[len(rows)-1].Seq
		for _, s := range series {
			if got := through(s); got != last {
				t.Fatalf("round %d: the sums of %s are through row %d after an append up to row %d: the append did not fold its rows", round, s, got, last)
			}
		}
		same("after an append that folded its rows")
	}
	rows := batch(6)
	if _, err := other.Append(ctx, rows); err != nil {
		t.Fatal(err)
	}
	mine := batch(8)
	if _, err := kept.Append(ctx, mine); err != nil {
		t.Fatal(err)
	}
	if got := through(series[0]); got >= rows[0].Seq {
		t.Fatalf("the sums are through row %d, past another handle's rows from %d that they never read", got, rows[0].Seq)
	}
	same("after another handle's append")
	if got, want := through(series[0]), mine[len(mine)-1].Seq; got != want {
		t.Fatalf("after Trials the sums are through row %d, not the tip %d", got, want)
	}
}
