package main

import (
	"crypto/rand"
	"encoding/json"
	"strings"
	"testing"

	"wicket/internal/project"
)

// TestWalkForwardPortfolio: `wicket walk-forward NAME` without --series
// walks a strategy that declares its universe forward over the
// universe's calendar, each window's winner trading out of sample from
// the window's start; the table names the universe.
func TestWalkForwardPortfolio(t *testing.T) {
	dir := t.TempDir()
	if _, err := project.Init(dir, rand.Reader); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := wicketIn(t, dir, "data", "seed-demo"); code != 0 {
		t.Fatalf("seed-demo: exit %d: %s", code, stderr)
	}
	args := []string{"walk-forward", "momentum_rotation", "--grid", "lookback=10,20", "--grid", "k=1,2", "--from", "2022-01-01", "--windows", "3"}
	code, stdout, stderr := wicketIn(t, dir, append(args, "--json")...)
	if code != 0 {
		t.Fatalf("walk-forward momentum_rotation: exit %d: %s", code, stderr)
	}
	var res struct {
		Series  string `json:"series"`
		Windows []struct {
			OutOfSample struct {
				From string `json:"from"`
			} `json:"out_of_sample"`
			Metrics struct {
				Start string `json:"start"`
			} `json:"out_of_sample_metrics"`
			DeflatedSharpe *struct {
				Trials int `json:"trials"`
			} `json:"deflated_sharpe"`
		} `json:"windows"`
		OutOfSample    *struct{ Bars int } `json:"out_of_sample"`
		RunID          string              `json:"run_id"`
		LookaheadCheck string              `json:"lookahead_check"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	const universe = "BTC-USD@1d,ETH-USD@1d,SOL-USD@1d"
	if res.Series != universe || len(res.Windows) != 3 || res.OutOfSample == nil || res.OutOfSample.Bars == 0 || res.RunID == "" || !strings.HasPrefix(res.LookaheadCheck, "passed") {
		t.Fatalf("walk-forward: %.800s", stdout)
	}
	for k, w := range res.Windows {
		if w.Metrics.Start != w.OutOfSample.From || w.DeflatedSharpe == nil || w.DeflatedSharpe.Trials != 4 {
			t.Errorf("window %d: traded from %s, out of sample from %s; deflated Sharpe %+v", k+1, w.Metrics.Start, w.OutOfSample.From, w.DeflatedSharpe)
		}
	}
	code, stdout, stderr = wicketIn(t, dir, args...)
	if code != 0 || !strings.Contains(stdout, "momentum_rotation on "+universe+": 3 rolling windows") || !strings.Contains(stdout, "stitched out-of-sample") {
		t.Errorf("text: exit %d: %s %s", code, stdout, stderr)
	}
	if code, _, stderr := wicketIn(t, dir, "walk-forward", "sma_cross", "--grid", "fast=5,10"); code == 0 || !strings.Contains(stderr, "declares no universe") {
		t.Errorf("sma_cross without --series: exit %d: %s", code, stderr)
	}
}
