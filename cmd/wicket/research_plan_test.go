package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wicket/internal/project"
	"wicket/strategy/templates"
)

// TestResearchPlanSealedAndForgeryCaught: `wicket research plan` seals a
// plan row (bad criteria are refused naming the valid ones), shows it by
// name, and a plan row edited afterwards (a bigger budget) is named by
// `wicket research verify`.
func TestResearchPlanSealedAndForgeryCaught(t *testing.T) {
	dir := t.TempDir()
	p, err := project.Init(dir, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	src, err := templates.Source("sma_cross")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p.StrategiesDir(), "mine.star"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	wicket := func(args ...string) (int, string, string) {
		var out, errOut strings.Builder
		code := run(context.Background(), append([]string{"wicket", "--project", dir}, args...), strings.NewReader(""), &out, &errOut)
		return code, out.String(), errOut.String()
	}
	seal := []string{"research", "plan", "eth", "--strategy", "mine", "--series", "ETH-USD@1d", "--hypothesis", "trend",
		"--max-trials", "40", "--holdout", "2024-07-01:", "--grid", "fast=5,10"}
	if code, _, stderr := wicket(append(seal, "--criteria", "sharpe>=1")...); code != 2 || !strings.Contains(stderr, "oos_sharpe, dsr, pbo, max_drawdown, trades") {
		t.Fatalf("bad criteria: exit %d %q", code, stderr)
	}
	if code, out, stderr := wicket(append(seal, "--criteria", "oos_sharpe>=1, dsr>=0.95, pbo<=0.2, max_drawdown<=0.25, trades>=50")...); code != 0 ||
		!strings.Contains(out, "plan eth (row 1") || !strings.Contains(out, "open, 0 of 40 trials spent") {
		t.Fatalf("seal: exit %d %q %q", code, out, stderr)
	}
	if code, _, stderr := wicket(append(seal, "--criteria", "dsr>=0.5")...); code != 2 || !strings.Contains(stderr, "already sealed") {
		t.Fatalf("sealed twice: exit %d %q", code, stderr)
	}
	if code, out, _ := wicket("research", "plan", "eth"); code != 0 || !strings.Contains(out, "criteria    oos_sharpe>=1, dsr>=0.95, pbo<=0.2, max_drawdown<=0.25, trades>=50") {
		t.Fatalf("show: exit %d %q", code, out)
	}
	if code, out, _ := wicket("research", "verify"); code != 0 || !strings.Contains(out, "intact: 1 rows") {
		t.Fatalf("intact: exit %d %q", code, out)
	}
	db, err := sql.Open("sqlite", p.ResearchPath())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE trials SET params = replace(params, '"max_trials":40', '"max_trials":4000') WHERE kind = 'plan'`); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := wicket("research", "plan", "eth"); code != 0 || !strings.Contains(out, "0 of 4000") {
		t.Fatalf("the forgery did not take: %q", out)
	}
	if code, _, stderr := wicket("research", "verify"); code != 1 || !strings.Contains(stderr, "research ledger broken at row 1: row 1's content does not match its keyed hash") {
		t.Fatalf("forged plan: exit %d %q", code, stderr)
	}
}
