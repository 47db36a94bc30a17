package research

import (
	"math"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"wicket/internal/testkit"
	"wicket/strategy/ledger"
)

// BenchmarkSweepPlan measures what a research plan costs a sweep: the
// 100-combination sweep over each hourly bench series on a warm pool of
// 2 workers, recorded in the ledger, alternately of a strategy under no
// plan and of the same text (one comment apart) under an open plan named
// in the request (the plan read, the holdout checked, the budget
// counted), each variant's fastest of ledgerRounds runs over the four
// series.
func BenchmarkSweepPlan(b *testing.B) {
	lg, err := ledger.Open(filepath.Join(b.TempDir(), "research.db"), ledger.Options{Key: testkit.Bytes(b, 32)})
	if err != nil {
		b.Fatal(err)
	}
	defer lg.Close()
	pool, _ := warmPool(b, 2)
	defer pool.Close()
	l := NewLocal(Config{Project: demoProject(b), Pool: pool, Recorder: lg})
	free := templateRef(b, "sma_cross")
	planned := StrategyRef{Source: free.Source + "\n# under a plan\n", Label: "planned.star"}
	if _, err := l.SealPlan(ctxT(b), PlanRequest{Name: "bench", Hypothesis: "h", Criteria: "dsr>=0.95", MaxTrials: math.MaxInt32,
		Holdout: "2100-01-01:", StrategyRef: planned, Series: benchSeries[0]}); err != nil {
		b.Fatal(err)
	}
	best := [2]time.Duration{math.MaxInt64, math.MaxInt64}
	b.ResetTimer()
	for round := range b.N * ledgerRounds {
		for _, k := range [][]int{{0, 1}, {1, 0}}[round%2] { // alternate which goes first
			var total time.Duration
			for _, series := range benchSeries {
				req := SweepRequest{StrategyRef: free, Series: series, Grid: benchGrid}
				if k == 1 {
					req.StrategyRef, req.Plan = planned, "bench"
					if series != benchSeries[0] {
						req.Plan = "" // the open plan of the text applies all the same (a plan binds one series)
					}
				}
				start := time.Now()
				res, err := l.Sweep(ctxT(b), req, nil)
				total += time.Since(start)
				if err != nil || res.Evaluated != 100 {
					b.Fatalf("%s: %v (evaluated %d)", series, err, res.Evaluated)
				}
			}
			best[k] = min(best[k], total)
			b.Logf("round %d, plan %v: %v", round, k == 1, total)
		}
	}
	ratio := best[1].Seconds() / best[0].Seconds()
	b.ReportMetric(ratio, "plan/none")
	ratios = append(ratios, "ratio sweep under a research plan / under none: "+strconv.FormatFloat(ratio, 'f', 3, 64)+"x")
}

// BenchmarkPlanGate times the plan's part of a run alone: finding the
// open plan of a strategy's text, counting its trials and checking the
// range, on a ledger holding 10,000 of the plan's trials and 10,000
// others.
func BenchmarkPlanGate(b *testing.B) {
	lg, err := ledger.Open(filepath.Join(b.TempDir(), "research.db"), ledger.Options{Key: testkit.Bytes(b, 32)})
	if err != nil {
		b.Fatal(err)
	}
	defer lg.Close()
	l := NewLocal(Config{Project: demoProject(b), Recorder: lg})
	ref := templateRef(b, "sma_cross")
	if _, err := l.SealPlan(ctxT(b), PlanRequest{Name: "bench", Hypothesis: "h", Criteria: "dsr>=0.95", MaxTrials: math.MaxInt32,
		Holdout: "2100-01-01:", StrategyRef: ref, Series: "BTC-USD@1h"}); err != nil {
		b.Fatal(err)
	}
	for i := range 20 {
		rows := make([]ledger.Row, 1000)
		for j := range rows {
			rows[j] = ledger.Row{Kind: ledger.KindSweep, Strategy: "s", Digest: ledger.SourceDigest(ref.Source), Series: "BTC-USD@1h", SharpePerPeriod: 0.01}
			if i%2 == 1 {
				rows[j].Digest = "other"
			}
		}
		if _, err := lg.Append(ctxT(b), rows); err != nil {
			b.Fatal(err)
		}
	}
	ctx := ctxT(b)
	for b.Loop() {
		from, to := "", ""
		g, err := l.gatePlan(ctx, "", ref, "BTC-USD@1h", &from, &to)
		if err != nil || g.plan == nil || g.plan.Trials != 10000 {
			b.Fatalf("%+v %v", g, err)
		}
		if err := g.admit(100); err != nil {
			b.Fatal(err)
		}
	}
}
