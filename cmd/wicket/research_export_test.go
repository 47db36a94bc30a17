package main

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"wicket/internal/project"
	"wicket/strategy/research"
)

// wicketIn runs the wicket binary (the copy of this test binary that
// testscript's TestMain put in PATH: it starts strategy workers of its
// own) in project dir and returns its exit code, stdout and stderr.
func wicketIn(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	bin, err := exec.LookPath("wicket")
	if err != nil {
		t.Fatalf("the wicket test command is not in PATH: %v", err)
	}
	var out, errOut strings.Builder
	cmd := exec.Command(bin, append([]string{"--project", dir}, args...)...)
	cmd.Env = append(os.Environ(), project.KeyLedger+"=")
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return exit.ExitCode(), out.String(), errOut.String()
	case err != nil:
		t.Fatal(err)
	}
	return 0, out.String(), errOut.String()
}

// TestResearchExportRecomputedInPython: a sweep's run, exported with
// `wicket research export`, gives testdata/audit_recompute.py (the
// Python standard library alone) the sweep's deflated Sharpe ratio, its
// deflated Sharpe ratio over the ledger and its probability of backtest
// overfitting, as reported.
func TestResearchExportRecomputedInPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not on PATH: the export's recomputation in Python is not checked")
	}
	dir := t.TempDir()
	if _, err := project.Init(dir, rand.Reader); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"data", "seed-demo"},
		// Earlier trials on the series: another strategy's, counted by
		// the series alone, and this one's.
		{"backtest", "--local", "rsi_reversion", "--series", "BTC-USD@1d"},
		{"backtest", "--local", "sma_cross", "--series", "BTC-USD@1d", "--param", "fast=7"},
	} {
		if code, _, stderr := wicketIn(t, dir, args...); code != 0 {
			t.Fatalf("wicket %v: exit %d: %s", args, code, stderr)
		}
	}
	code, stdout, stderr := wicketIn(t, dir, "sweep", "sma_cross", "--series", "BTC-USD@1d", "--grid", "fast=5:20:5", "--grid", "slow=30,40,50,60", "--json")
	if code != 0 {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	var res research.SweepResult
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	d, ld, o := res.DeflatedSharpe, res.LedgerDeflatedSharpe, res.Overfitting
	if d == nil || d.DSR == nil || ld == nil || ld.DSR == nil || o == nil || o.PBO == nil || res.RunID == "" {
		t.Fatalf("sweep result: DSR %+v, over the ledger %+v, PBO %+v, run %q", d, ld, o, res.RunID)
	}
	out := filepath.Join(t.TempDir(), "run.json") // the name the docs' snippet reads
	if code, _, stderr := wicketIn(t, dir, "research", "export", res.RunID, "--out", out); code != 0 || !strings.Contains(stderr, "exported run "+res.RunID+": 16 trials, 18 ledger trials on BTC-USD@1d") {
		t.Fatalf("export: exit %d: %s", code, stderr)
	}
	if code, _, stderr := wicketIn(t, dir, "research", "export", "--out", out, res.RunID); code == 0 || !strings.Contains(stderr, "an existing file is never overwritten") {
		t.Fatalf("export over a file: exit %d: %s", code, stderr)
	}
	cmd := exec.Command(py, filepath.Join("testdata", "audit_recompute.py"), out)
	cmd.Stderr = os.Stderr
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3 audit_recompute.py: %v", err)
	}
	var got struct {
		DSR, LedgerDSR, ByStrategy, PBO float64
		Series, Strategy                int
	}
	var raw map[string]float64
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatalf("python said %s: %v", b, err)
	}
	got.DSR, got.LedgerDSR, got.ByStrategy, got.PBO = raw["dsr"], raw["ledger_dsr"], raw["ledger_dsr_by_strategy"], raw["pbo"]
	got.Series, got.Strategy = int(raw["series_trials"]), int(raw["strategy_trials"])
	// The reports round a DSR to 4 places and the PBO to 6 digits.
	near := func(what string, py, reported, tol float64) {
		if math.Abs(py-reported) > tol {
			t.Errorf("%s: python %v, wicket %v", what, py, reported)
		}
	}
	// The recomputation docs/strategies.md shows says the same.
	docs, err := os.ReadFile(filepath.Join("..", "..", "docs", "strategies.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, snippet, found := strings.Cut(string(docs), "```python\nimport json, math, itertools")
	snippet, _, closed := strings.Cut(snippet, "```")
	if !found || !closed || !strings.Contains(snippet, `open("run.json")`) {
		t.Fatal("docs/strategies.md has no recomputation snippet reading run.json")
	}
	cmd = exec.Command(py, "-c", "import json, math, itertools"+snippet)
	cmd.Dir, cmd.Stderr = filepath.Dir(out), os.Stderr
	fromDocs, err := cmd.Output()
	if err != nil {
		t.Fatalf("the docs' snippet: %v", err)
	}
	for _, line := range []string{fmt.Sprintf("deflated_sharpe %v\n", got.DSR), fmt.Sprintf("ledger_deflated_sharpe %v\n", got.LedgerDSR), fmt.Sprintf("pbo %v\n", got.PBO)} {
		if !strings.Contains(string(fromDocs), line) {
			t.Errorf("the docs' snippet printed %q, want a line %q", fromDocs, line)
		}
	}
	near("the sweep's DSR", got.DSR, *d.DSR, 5.01e-5)
	near("the DSR over the ledger", got.LedgerDSR, *ld.DSR, 5.01e-5)
	near("the PBO", got.PBO, *o.PBO, 1e-6)
	if got.Series != ld.Trials || got.Series != 18 || got.Strategy != 17 || ld.StrategyTrials != 17 {
		t.Errorf("N: python %d on the series (%d of the strategy), wicket %d (%d)", got.Series, got.Strategy, ld.Trials, ld.StrategyTrials)
	}
}

// TestWalkForwardExportRecomputedInPython (issue 44 item 13): a
// walk-forward's export marks each window's in-sample winner and holds
// their PBO blocks, so testdata/audit_recompute.py and the docs' snippet
// recompute each window's deflated Sharpe ratio and PBO as the run
// reported them (the export had no winner and no blocks, and the
// documented recomputation crashed).
func TestWalkForwardExportRecomputedInPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not on PATH: the export's recomputation in Python is not checked")
	}
	dir := t.TempDir()
	if _, err := project.Init(dir, rand.Reader); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := wicketIn(t, dir, "data", "seed-demo"); code != 0 {
		t.Fatalf("seed-demo: exit %d: %s", code, stderr)
	}
	code, stdout, stderr := wicketIn(t, dir, "walk-forward", "sma_cross", "--series", "BTC-USD@1d", "--grid", "fast=5:20:5", "--grid", "slow=30,40,50,60", "--windows", "3", "--json")
	if code != 0 {
		t.Fatalf("walk-forward: exit %d: %s", code, stderr)
	}
	var res research.WalkForwardResult
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Windows) != 3 || res.RunID == "" {
		t.Fatalf("walk-forward: %d windows, run %q", len(res.Windows), res.RunID)
	}
	out := filepath.Join(t.TempDir(), "run.json")
	if code, _, stderr := wicketIn(t, dir, "research", "export", res.RunID, "--out", out); code != 0 {
		t.Fatalf("export: exit %d: %s", code, stderr)
	}
	var x research.RunExport
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &x); err != nil {
		t.Fatal(err)
	}
	winners := map[int]int{}
	for _, tr := range x.Trials {
		if tr.Window < 1 || len(tr.Blocks) == 0 {
			t.Fatalf("trial %d: window %d, %d blocks", tr.Seq, tr.Window, len(tr.Blocks))
		}
		if tr.Winner {
			winners[tr.Window]++
		}
	}
	if len(winners) != 3 || winners[1] != 1 || winners[2] != 1 || winners[3] != 1 {
		t.Fatalf("winners per window %v, want one in each of 3", winners)
	}
	cmd := exec.Command(py, filepath.Join("testdata", "audit_recompute.py"), out)
	cmd.Stderr = os.Stderr
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3 audit_recompute.py: %v", err)
	}
	var got struct {
		Windows []struct {
			Window   int
			Trials   int
			DSR, PBO float64
		}
	}
	if err := json.Unmarshal(b, &got); err != nil || len(got.Windows) != 3 {
		t.Fatalf("python said %s: %v", b, err)
	}
	for i, w := range got.Windows {
		rep := res.Windows[i]
		if rep.DeflatedSharpe == nil || rep.DeflatedSharpe.DSR == nil || rep.Overfitting == nil || rep.Overfitting.PBO == nil {
			t.Fatalf("window %d reports DSR %+v and PBO %+v", i+1, rep.DeflatedSharpe, rep.Overfitting)
		}
		if w.Window != i+1 || w.Trials != 16 || math.Abs(w.DSR-*rep.DeflatedSharpe.DSR) > 5.01e-5 || math.Abs(w.PBO-*rep.Overfitting.PBO) > 1e-6 {
			t.Errorf("window %d: python %+v, wicket DSR %v PBO %v", i+1, w, *rep.DeflatedSharpe.DSR, *rep.Overfitting.PBO)
		}
	}
	docs, err := os.ReadFile(filepath.Join("..", "..", "docs", "strategies.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, snippet, _ := strings.Cut(string(docs), "```python\nimport json, math, itertools")
	snippet, _, _ = strings.Cut(snippet, "```")
	cmd = exec.Command(py, "-c", "import json, math, itertools"+snippet)
	cmd.Dir, cmd.Stderr = filepath.Dir(out), os.Stderr
	fromDocs, err := cmd.Output()
	if err != nil {
		t.Fatalf("the docs' snippet on a walk-forward export: %v", err)
	}
	for _, w := range got.Windows {
		for _, line := range []string{fmt.Sprintf("deflated_sharpe window %d %v\n", w.Window, w.DSR), fmt.Sprintf("pbo window %d %v\n", w.Window, w.PBO)} {
			if !strings.Contains(string(fromDocs), line) {
				t.Errorf("the docs' snippet printed %q, want a line %q", fromDocs, line)
			}
		}
	}
}
