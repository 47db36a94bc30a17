package main

import (
	"crypto/rand"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wicket/internal/project"
	"wicket/strategy/tearsheet"
)

// TestBacktestReport: --report writes the run's tear sheet, one
// self-contained page with every chart, showing the run's own figures;
// a series set is refused before anything runs.
func TestBacktestReport(t *testing.T) {
	dir := t.TempDir()
	if _, err := project.Init(dir, rand.Reader); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := wicketIn(t, dir, "data", "seed-demo"); code != 0 {
		t.Fatalf("seed-demo: exit %d: %s", code, stderr)
	}
	sheet := filepath.Join(dir, "sheet.html")
	run := []string{"backtest", "--local", "sma_cross", "--series", "BTC-USD@1d", "--from", "2022-01-01", "--robustness", "--mc-paths", "200"}
	code, _, stderr := wicketIn(t, dir, append(run, "--report", sheet)...)
	if code != 0 {
		t.Fatalf("backtest --report: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "tear sheet written to "+sheet) {
		t.Errorf("stderr does not say where the tear sheet went: %s", stderr)
	}
	b, err := os.ReadFile(sheet)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	if !strings.HasPrefix(page, "<!DOCTYPE html>") || !strings.Contains(page, tearsheet.CSP) {
		t.Fatalf("not a tear sheet with its CSP: %.200s", page)
	}
	for _, chart := range []string{"equity", "drawdown", "monthly-returns", "rolling-sharpe", "trade-distribution", "monte-carlo"} {
		if !strings.Contains(page, `<svg data-chart="`+chart+`"`) {
			t.Errorf("the tear sheet has no %s chart", chart)
		}
	}
	if !strings.Contains(page, "<h1>sma_cross.star on BTC-USD@1d</h1>") {
		t.Error("the tear sheet does not name the strategy and series")
	}

	code, stdout, stderr := wicketIn(t, dir, append(run, "--json")...)
	if code != 0 {
		t.Fatalf("backtest --json: exit %d: %s", code, stderr)
	}
	var report struct {
		Metrics struct {
			FinalEquity string `json:"final_equity"`
			FeesPaid    string `json:"fees_paid"`
		} `json:"metrics"`
	}
	if err := json.Unmarshal([]byte(stdout), &report); err != nil {
		t.Fatal(err)
	}
	for _, money := range []string{report.Metrics.FinalEquity, report.Metrics.FeesPaid} {
		if money == "" || !strings.Contains(page, ">"+money+"<") {
			t.Errorf("the tear sheet does not show %q from the run's report", money)
		}
	}

	other := filepath.Join(dir, "seriesset.html")
	code, _, stderr = wicketIn(t, dir, "backtest", "--local", "sma_cross", "--series", "BTC-USD@1d,ETH-USD@1d", "--report", other)
	if code != exitUsage || !strings.Contains(stderr, "--report draws one series' tear sheet") {
		t.Errorf("a series set with --report: exit %d, %s", code, stderr)
	}
	if _, err := os.Stat(other); !os.IsNotExist(err) {
		t.Errorf("a refused --report left a file: %v", err)
	}
}
