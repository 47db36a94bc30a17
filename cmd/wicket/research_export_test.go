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
