package main

import (
	"bufio"
	"crypto/rand"
	"encoding/json"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"wicket/internal/project"
	"wicket/strategy/research"
)

// TestOptimizeKilledResumes: `wicket optimize` killed with SIGKILL after
// its second batch is recorded resumes from the ledger with --resume: the
// run ends at its budget, no trial repeated and none recorded lost, and
// the N of its deflated Sharpe ratio over the ledger is the ledger's
// count of trials on the series.
func TestOptimizeKilledResumes(t *testing.T) {
	bin, err := exec.LookPath("wicket")
	if err != nil {
		t.Fatalf("the wicket test command is not in PATH: %v", err)
	}
	dir := t.TempDir()
	if _, err := project.Init(dir, rand.Reader); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"data", "seed-demo"}, {"backtest", "--local", "rsi_reversion", "--series", "BTC-USD@1d"}} {
		if code, _, stderr := wicketIn(t, dir, args...); code != 0 {
			t.Fatalf("wicket %v: exit %d: %s", args, code, stderr)
		}
	}
	args := []string{"optimize", "sma_cross", "--series", "BTC-USD@1d", "--grid", "fast=2:40:2", "--grid", "slow=30:200:10",
		"--trials", "24", "--batch", "4", "--seed", "3"}
	cmd := exec.Command(bin, append([]string{"--project", dir}, args...)...)
	cmd.Env = append(os.Environ(), project.KeyLedger+"=")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() }) //nolint:errcheck // already dead is fine
	lines := bufio.NewScanner(stderr)
	var runID string
	var seen []string
	for batches := 0; batches < 2 && lines.Scan(); {
		line := lines.Text()
		seen = append(seen, line)
		if _, rest, ok := strings.Cut(line, "recorded: "); ok && strings.HasPrefix(line, "wicket optimize: batch ") {
			batches++
			runID = rest[strings.LastIndex(rest, " ")+1:]
		}
	}
	if runID == "" {
		t.Fatalf("no batch recorded; stderr:\n%s", strings.Join(seen, "\n"))
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, stderr) //nolint:errcheck // drain until the process is gone
	cmd.Wait()                     //nolint:errcheck // killed

	out := filepath.Join(t.TempDir(), "before.json")
	if code, _, e := wicketIn(t, dir, "research", "export", runID, "--out", out); code != 0 {
		t.Fatalf("export: exit %d: %s", code, e)
	}
	before := readExport(t, out)
	if len(before.Trials) < 8 || len(before.Trials) >= 24 {
		t.Fatalf("the killed run recorded %d trials", len(before.Trials))
	}

	code, stdout, e := wicketIn(t, dir, append(args[:len(args)-2], "--resume", runID, "--json")...)
	if code != 0 {
		t.Fatalf("resume: exit %d: %s", code, e)
	}
	var res research.OptimizeResult
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	if res.RunID != runID || res.Resumed != len(before.Trials) || res.Evaluated != 24 || res.Seed != 3 || res.DeflatedSharpe.Trials != 24 {
		t.Fatalf("resumed run %s: resumed %d of %d recorded, evaluated %d, seed %d, N %d", res.RunID, res.Resumed, len(before.Trials), res.Evaluated, res.Seed, res.DeflatedSharpe.Trials)
	}
	out = filepath.Join(t.TempDir(), "after.json")
	if code, _, e := wicketIn(t, dir, "research", "export", runID, "--out", out); code != 0 {
		t.Fatalf("export: exit %d: %s", code, e)
	}
	after := readExport(t, out)
	if len(after.Trials) != 24 {
		t.Fatalf("the run holds %d trials after the resume, want 24", len(after.Trials))
	}
	seenParams := map[string]bool{}
	for i, tr := range after.Trials {
		p := string(tr.Params)
		if seenParams[p] {
			t.Errorf("trial %s was run twice", p)
		}
		seenParams[p] = true
		if i < len(before.Trials) && p != string(before.Trials[i].Params) {
			t.Errorf("recorded trial %d changed: %s, was %s", i, p, before.Trials[i].Params)
		}
	}
	// The export holds what an outsider needs to recompute the figures.
	if py, err := exec.LookPath("python3"); err == nil {
		b, err := exec.Command(py, filepath.Join("testdata", "audit_recompute.py"), out).Output()
		if err != nil {
			t.Fatalf("python3 audit_recompute.py: %v", err)
		}
		var got map[string]float64
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("python said %s: %v", b, err)
		}
		d, ld, o := res.DeflatedSharpe, res.LedgerDeflatedSharpe, res.Overfitting
		if d.DSR == nil || ld == nil || ld.DSR == nil || o == nil || o.PBO == nil ||
			math.Abs(got["dsr"]-*d.DSR) > 5.01e-5 || math.Abs(got["ledger_dsr"]-*ld.DSR) > 5.01e-5 || math.Abs(got["pbo"]-*o.PBO) > 1e-5 {
			t.Errorf("python recomputed %v from the export; the run reported DSR %v, over the ledger %v, PBO %v", got, d.DSR, ld, o)
		}
	}
	// N over the ledger: this run's 24 and the earlier backtest.
	if d := res.LedgerDeflatedSharpe; d == nil || d.Trials != len(after.Ledger.Trials) || d.Trials != 25 {
		t.Errorf("deflated sharpe over the ledger %+v; the ledger counts %d trials on the series", d, len(after.Ledger.Trials))
	}
}

func readExport(t *testing.T, path string) research.RunExport {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var x research.RunExport
	if err := json.Unmarshal(b, &x); err != nil {
		t.Fatal(err)
	}
	return x
}

// TestOptimizeIntrabarFlag: `wicket optimize --intrabar` runs the trials
// under that rule, which the ledger records and the output names; a
// resume without it is refused, naming the rule the run ran under; an
// unknown rule is a usage error.
func TestOptimizeIntrabarFlag(t *testing.T) {
	dir := t.TempDir()
	if _, err := project.Init(dir, rand.Reader); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := wicketIn(t, dir, "data", "seed-demo"); code != 0 {
		t.Fatalf("seed-demo: exit %d: %s", code, stderr)
	}
	args := []string{"optimize", "sma_cross", "--series", "BTC-USD@1d", "--grid", "fast=2:20:2", "--trials", "2", "--batch", "2"}
	code, stdout, stderr := wicketIn(t, dir, append(args, "--intrabar", "pessimistic")...)
	if code != 0 || !strings.Contains(stdout, "intrabar pessimistic") {
		t.Fatalf("optimize --intrabar pessimistic: exit %d: %s\n%s", code, stdout, stderr)
	}
	_, runID, _ := strings.Cut(stdout, "recorded in the research ledger as run ")
	runID, _, _ = strings.Cut(runID, " ")
	code, stdout, stderr = wicketIn(t, dir, "research", "ledger", "--run", runID)
	if code != 0 || strings.Count(stdout, "intrabar=pessimistic") != 2 {
		t.Fatalf("research ledger --run %s: exit %d: %s\n%s", runID, code, stdout, stderr)
	}
	code, _, stderr = wicketIn(t, dir, append(args[:len(args)-4], "--trials", "4", "--resume", runID)...)
	if code != 2 || !strings.Contains(stderr, "intrabar pessimistic then, path now") {
		t.Fatalf("a resume under the path rule: exit %d: %s", code, stderr)
	}
	if code, _, stderr = wicketIn(t, dir, append(args, "--intrabar", "sideways")...); code != 2 || !strings.Contains(stderr, "sideways") {
		t.Fatalf("an unknown rule: exit %d: %s", code, stderr)
	}
}
