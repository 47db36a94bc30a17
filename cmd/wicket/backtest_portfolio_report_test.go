package main

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wicket/internal/project"
)

// TestBacktestPortfolioReport: `wicket backtest --report FILE` on a
// portfolio strategy writes its tear sheet (the weights, each asset's
// contribution and the turnover beside the equity), and refuses to
// overwrite it without --force.
func TestBacktestPortfolioReport(t *testing.T) {
	dir := t.TempDir()
	if _, err := project.Init(dir, rand.Reader); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := wicketIn(t, dir, "data", "seed-demo"); code != 0 {
		t.Fatalf("seed-demo: exit %d: %s", code, stderr)
	}
	sheet := filepath.Join(dir, "sheet.html")
	args := []string{"backtest", "--local", "equal_weight", "--from", "2023-01-01", "--report", sheet}
	code, _, stderr := wicketIn(t, dir, args...)
	if code != 0 || !strings.Contains(stderr, "tear sheet written to") {
		t.Fatalf("backtest --report: exit %d: %s", code, stderr)
	}
	page, err := os.ReadFile(sheet)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"equity", "drawdown", "weights", "contribution", "turnover"} {
		if !strings.Contains(string(page), `data-chart="`+name+`"`) {
			t.Errorf("the sheet has no %s chart", name)
		}
	}
	if !strings.Contains(string(page), "equal_weight.star on BTC-USD@1d,ETH-USD@1d,SOL-USD@1d") {
		t.Errorf("the sheet's title names neither the strategy nor the universe")
	}
	if code, _, stderr := wicketIn(t, dir, args...); code == 0 || !strings.Contains(stderr, "already exists") {
		t.Errorf("--report over an existing file: exit %d: %s", code, stderr)
	}
}
