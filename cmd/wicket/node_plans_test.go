package main

import (
	"context"
	"crypto/rand"
	"math"
	"os"
	"strings"
	"testing"

	"wicket/deploy"
	"wicket/internal/project"
	"wicket/strategy/ledger"
	"wicket/strategy/research"
)

// TestLedgerPlans: the node reads the plan binding a strategy's text
// from the project's research ledger, opened for each read (a verdict
// recorded while it runs is seen), and a project without a ledger has
// none, creating nothing.
func TestLedgerPlans(t *testing.T) {
	dir := t.TempDir()
	p, err := project.Init(dir, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	lp := ledgerPlans{p: p}
	const src = "def signals(bars):\n    return {}\n"
	digest := ledger.SourceDigest(src)
	if got, err := lp.PlanOf(context.Background(), digest); err != nil || got != nil {
		t.Fatalf("no ledger: %+v %v", got, err)
	}
	if _, err := os.Stat(p.ResearchPath()); !os.IsNotExist(err) {
		t.Fatalf("reading plans created the ledger: %v", err)
	}
	key, err := ledgerKey(os.Stderr, p, "test")
	if err != nil {
		t.Fatal(err)
	}
	lg, err := ledger.Open(p.ResearchPath(), ledger.Options{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	crit, _ := research.ParseCriteria("oos_sharpe>=1")
	row := ledger.Row{Strategy: "s", Digest: digest, Series: "BTC-USD@1d", SharpePerPeriod: math.NaN()}
	if err := lg.SealPlan(context.Background(), ledger.PlanSpec{Name: "first", Hypothesis: "h", Criteria: crit, MaxTrials: 5, HoldoutFrom: "2025-01-01T00:00:00Z"}, &row); err != nil {
		t.Fatal(err)
	}
	lg.Close()
	got, err := lp.PlanOf(context.Background(), digest)
	if err != nil || got == nil || got.Name != "first" || !got.Open {
		t.Fatalf("sealed plan: %+v %v", got, err)
	}
	line := planLine(&deploy.PlanStatus{Status: deploy.PlanOpen, Name: "first", Criteria: got.Criteria, Note: "not judged yet"})
	if line != "first (open): oos_sharpe>=1; not judged yet" {
		t.Errorf("plan line %q", line)
	}
	if other, err := lp.PlanOf(context.Background(), ledger.SourceDigest(strings.ToUpper(src))); err != nil || other != nil {
		t.Errorf("another text: %+v %v", other, err)
	}
}

// TestArmWithoutPlanIsForDeployments: --without-plan, after the name as
// the other flags may be, names a deployment's override: on a venue it is
// refused as a usage error before anything is read or signed, and on a
// deployment it passes the flags (to the terminal check, here a pipe).
func TestArmWithoutPlanIsForDeployments(t *testing.T) {
	code, _, stderr := wicket(t, "node", "arm", "bn", "--without-plan")
	if code != exitUsage || !strings.Contains(stderr, "--without-plan arms a deployment (dep-...)") {
		t.Errorf("a venue: exit %d: %s", code, stderr)
	}
	code, _, stderr = wicket(t, "node", "arm", "dep-0001", "--without-plan", "--for", "2h")
	if code == exitUsage || !strings.Contains(stderr, "interactive terminal") {
		t.Errorf("a deployment: exit %d: %s", code, stderr)
	}
}
