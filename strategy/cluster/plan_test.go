package cluster_test

import (
	"path/filepath"
	"strings"
	"testing"

	"wicket/internal/testkit"
	"wicket/strategy/cluster"
	"wicket/strategy/clustertest"
	"wicket/strategy/ledger"
	"wicket/strategy/research"
)

// TestClusterSweepCountsAgainstAPlan: a sweep whose chunks run on a
// cluster counts against the research plan its text is under, in the
// ledger the local engine reads too, and is refused past the budget.
func TestClusterSweepCountsAgainstAPlan(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster tests are skipped with -short")
	}
	lg, err := ledger.Open(filepath.Join(t.TempDir(), "research.db"), ledger.Options{Key: testkit.Bytes(t, 32)})
	if err != nil {
		t.Fatal(err)
	}
	defer lg.Close()
	p, pool := demoProject(t), newPool(t)
	local := research.NewLocal(research.Config{Project: p, Pool: pool, Recorder: lg})
	req := sweepReq(t, "SPY@1d")
	if _, err := local.SealPlan(t.Context(), research.PlanRequest{Name: "spy", Hypothesis: "h", Criteria: "dsr>=0.95", MaxTrials: 150,
		Holdout: "2024-01-01:", StrategyRef: req.StrategyRef, Series: "SPY@1d"}); err != nil {
		t.Fatal(err)
	}
	d, _ := joinWorker(t, cluster.Options{Key: testKey, URL: clustertest.Server(t)})
	clustered := research.NewLocal(research.Config{Project: p, Pool: pool, Chunks: d, Recorder: lg})
	res, err := clustered.Sweep(t.Context(), req, nil)
	if err != nil || res.Evaluated != 100 || res.Settings.To != "2023-12-31T23:59:59Z" {
		t.Fatalf("cluster sweep under the plan: %v (evaluated %d, to %q)", err, res.Evaluated, res.Settings.To)
	}
	if plan, err := lg.Plan(t.Context(), "spy"); err != nil || plan.Trials != 100 {
		t.Fatalf("plan %+v %v", plan, err)
	}
	req.Plan = "spy"
	if _, err := local.Sweep(t.Context(), req, nil); err == nil || !strings.Contains(err.Error(), "budget is 150 trials and 100 are spent") {
		t.Fatalf("a local sweep past the cluster's count: %v", err)
	}
	if _, err := clustered.Sweep(t.Context(), req, nil); err == nil || !strings.Contains(err.Error(), "budget is 150 trials and 100 are spent") {
		t.Fatalf("a second cluster sweep: %v", err)
	}
}
