package research

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"wicket/internal/testkit"
	"wicket/strategy/ledger"
)

// BenchmarkSweepLedger measures what the research ledger costs a sweep:
// the 100-combination sweep over each hourly bench series on a warm pool
// of 2 workers, alternately without a recorder and with one (100 rows in
// one transaction, then the ledger's Sharpe ratios read back), each
// variant's fastest of ledgerRounds runs over the four series.
func BenchmarkSweepLedger(b *testing.B) {
	lg, err := ledger.Open(filepath.Join(b.TempDir(), "research.db"), ledger.Options{Key: testkit.Bytes(b, 32)})
	if err != nil {
		b.Fatal(err)
	}
	defer lg.Close()
	pool, _ := warmPool(b, 2)
	defer pool.Close()
	plain := NewLocal(Config{ProofSeed: fixedSeed, Project: demoProject(b), Pool: pool})
	recorded := NewLocal(Config{ProofSeed: fixedSeed, Project: demoProject(b), Pool: pool, Recorder: lg})
	best := [2]time.Duration{}
	for k := range best {
		best[k] = math.MaxInt64
	}
	b.ResetTimer()
	for round := range b.N * ledgerRounds {
		for _, k := range [][]int{{0, 1}, {1, 0}}[round%2] { // alternate which goes first
			l := []*Local{plain, recorded}[k]
			var total time.Duration
			for _, series := range benchSeries {
				start := time.Now()
				res, err := l.Sweep(ctxT(b), SweepRequest{StrategyRef: templateRef(b, "sma_cross"), Series: series, Grid: benchGrid}, nil)
				total += time.Since(start)
				if err != nil || res.Evaluated != 100 {
					b.Fatalf("%s: %v (evaluated %d)", series, err, res.Evaluated)
				}
				if (k == 1) != (res.RunID != "") {
					b.Fatalf("recorder %v, run id %q", k == 1, res.RunID)
				}
			}
			best[k] = min(best[k], total)
			b.Logf("round %d, ledger %v: %v", round, k == 1, total)
		}
	}
	ratio := best[1].Seconds() / best[0].Seconds()
	b.ReportMetric(ratio, "ledger/plain")
	ratios = append(ratios, "ratio sweep with the research ledger / without: "+strconv.FormatFloat(ratio, 'f', 3, 64)+"x")
}

// ledgerRounds is how many times each variant runs per op.
const ledgerRounds = 6

// BenchmarkCSCV times the probability of backtest overfitting at 16
// blocks (12,870 splits) for the benchmarks' 100 combinations and the
// largest default sweep (5,000).
func BenchmarkCSCV(b *testing.B) {
	for _, n := range []int{100, DefaultMaxCombinations} {
		b.Run(fmt.Sprintf("combinations=%d", n), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(3, 4))
			blocks := make([][]blockStat, n)
			for i := range blocks {
				r := make([]float64, 16*100)
				for j := range r {
					r[j] = rng.NormFloat64() * 0.01
				}
				blocks[i] = blockStats(r, PBOBlocks)
			}
			for b.Loop() {
				if pbo, _ := cscv(blocks, PBOBlocks); math.IsNaN(pbo) {
					b.Fatal("undefined")
				}
			}
		})
	}
}
