package main

import (
	"crypto/rand"
	"encoding/json"
	"strings"
	"testing"

	"wicket/internal/project"
)

// TestSweepPortfolio: `wicket sweep NAME` without --series sweeps a
// strategy that declares its universe, each combination one portfolio
// run, and records every combination in the ledger under the universe's
// series; a strategy without a universe still needs --series.
func TestSweepPortfolio(t *testing.T) {
	dir := t.TempDir()
	if _, err := project.Init(dir, rand.Reader); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := wicketIn(t, dir, "data", "seed-demo"); code != 0 {
		t.Fatalf("seed-demo: exit %d: %s", code, stderr)
	}
	code, stdout, stderr := wicketIn(t, dir, "sweep", "momentum_rotation", "--grid", "lookback=30,60", "--grid", "k=1,2", "--from", "2023-01-01", "--json")
	if code != 0 {
		t.Fatalf("sweep momentum_rotation: exit %d: %s", code, stderr)
	}
	var res struct {
		Series         string `json:"series"`
		Combinations   int    `json:"combinations"`
		Evaluated      int    `json:"evaluated"`
		RunID          string `json:"run_id"`
		LookaheadCheck string `json:"lookahead_check"`
		Top            []struct {
			Params map[string]any `json:"params"`
		} `json:"top"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	const universe = "BTC-USD@1d,ETH-USD@1d,SOL-USD@1d"
	if res.Series != universe || res.Combinations != 4 || res.Evaluated != 4 || len(res.Top) != 4 || res.RunID == "" || !strings.HasPrefix(res.LookaheadCheck, "passed") {
		t.Fatalf("sweep: %.800s", stdout)
	}
	code, stdout, stderr = wicketIn(t, dir, "research", "ledger", "--series", universe, "--json")
	if code != 0 || strings.Count(stdout, `"kind":"sweep"`) != 4 {
		t.Errorf("ledger: exit %d, want 4 sweep rows: %.800s %s", code, stdout, stderr)
	}
	if code, _, stderr := wicketIn(t, dir, "sweep", "sma_cross", "--grid", "fast=5,10"); code == 0 || !strings.Contains(stderr, "declares no universe") {
		t.Errorf("sma_cross without --series: exit %d: %s", code, stderr)
	}
}
