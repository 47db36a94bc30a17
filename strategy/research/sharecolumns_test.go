package research

import (
	"math"
	"runtime"
	"testing"
)

// TestSweepWorkersShareColumns: on two workers sharing the bars (from
// 131,072 bars up), the workers compute each distinct SMA length once
// between them (5 fast and 7 slow lengths: 12), not once each, and the
// sweep's result is bit for bit the one-worker sweep's that shares
// nothing and computes every column on its own heap.
func TestSweepWorkersShareColumns(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no mapped files: every worker computes its own columns")
	}
	p := benchProject(t, t.TempDir(), sineBars(140_000))
	req := SweepRequest{StrategyRef: templateRef(t, "sma_cross"), Series: "BENCH@1h",
		Grid: Grid{"fast": {From: fp(5), To: fp(25), Step: fp(5)}, "slow": {From: fp(30), To: fp(150), Step: fp(20)}}}
	alone, err := NewLocal(Config{ProofSeed: fixedSeed, Project: p, Pool: newPool(t, 1), ShareFromBars: math.MaxInt}).Sweep(ctxT(t), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	var c computedCounter
	pool := newPool(t, 2)
	two, err := NewLocal(Config{ProofSeed: fixedSeed, Project: p, Pool: pool, Computed: c.add}).Sweep(ctxT(t), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(pool.PIDs()); n != 2 {
		t.Fatalf("%d workers ran the sweep, want 2", n)
	}
	if got := c.get("sma"); got != 12 {
		t.Errorf("the two workers computed %d SMAs, want 12 (each distinct length once)", got)
	}
	alone.RunID, two.RunID = "", ""
	if a, b := marshal(t, alone), marshal(t, two); string(a) != string(b) {
		t.Errorf("shared columns changed the result:\n%s\n%s", a, b)
	}
}
