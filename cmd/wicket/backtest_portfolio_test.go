package main

import (
	"crypto/rand"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wicket/internal/project"
)

// TestBacktestPortfolio: a strategy that declares its universe runs
// without --series over the series it names (a pattern resolved against
// the store), on one account, and the ledger records the run under the
// universe's series; single-series flags and a strategy without a
// universe are usage errors.
func TestBacktestPortfolio(t *testing.T) {
	dir := t.TempDir()
	if _, err := project.Init(dir, rand.Reader); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := wicketIn(t, dir, "data", "seed-demo"); code != 0 {
		t.Fatalf("seed-demo: exit %d: %s", code, stderr)
	}
	code, stdout, stderr := wicketIn(t, dir, "backtest", "--local", "equal_weight", "--from", "2023-01-01", "--json")
	if code != 0 {
		t.Fatalf("backtest equal_weight: exit %d: %s", code, stderr)
	}
	var rep struct {
		Series    string   `json:"series"`
		Universe  []string `json:"universe"`
		Rebalance string   `json:"rebalance"`
		Metrics   struct {
			FinalEquity string   `json:"final_equity"`
			Sharpe      *float64 `json:"sharpe"`
			Trades      int      `json:"trades"`
		} `json:"metrics"`
		Assets []struct {
			Series string `json:"series"`
			Value  string `json:"value"`
		} `json:"assets"`
		LookaheadCheck string `json:"lookahead_check"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	if strings.Join(rep.Universe, ",") != "BTC-USD@1d,ETH-USD@1d,SOL-USD@1d" || rep.Series != "BTC-USD@1d,ETH-USD@1d,SOL-USD@1d" || rep.Rebalance != "weekly" {
		t.Errorf("universe %v (%q), rebalance %q", rep.Universe, rep.Series, rep.Rebalance)
	}
	if rep.Metrics.FinalEquity == "" || rep.Metrics.Sharpe == nil || len(rep.Assets) != 3 || !strings.HasPrefix(rep.LookaheadCheck, "passed") {
		t.Errorf("report %s", stdout)
	}
	if !strings.Contains(stderr, "recorded in the research ledger as run") {
		t.Errorf("not recorded: %s", stderr)
	}
	code, stdout, stderr = wicketIn(t, dir, "research", "ledger", "--series", "BTC-USD@1d,ETH-USD@1d,SOL-USD@1d", "--json")
	if code != 0 || !strings.Contains(stdout, `"equal_weight"`) {
		t.Errorf("ledger: exit %d: %s %s", code, stdout, stderr)
	}
	code, stdout, _ = wicketIn(t, dir, "backtest", "--local", "momentum_rotation", "--param", "lookback=30", "--param", "k=1")
	if code != 0 || !strings.Contains(stdout, "portfolio BTC-USD@1d,ETH-USD@1d,SOL-USD@1d") || !strings.Contains(stdout, "rebalance monthly") {
		t.Errorf("momentum_rotation text: exit %d: %s", code, stdout)
	}
	// An event-driven portfolio, from a file.
	file := filepath.Join(dir, "pair_bar.star")
	src := "\"\"\"Long the stronger of two assets.\"\"\"\nuniverse = [\"BTC-USD@1d\", \"ETH-USD@1d\"]\ndef setup(ctx):\n    ctx.mom = {a: ta.roc(ctx[a].close, 20) for a in ctx.assets}\ndef on_bar(ctx):\n    b, e = ctx.mom[\"BTC-USD@1d\"][0], ctx.mom[\"ETH-USD@1d\"][0]\n    if b == None or e == None:\n        return\n    ctx.target(\"BTC-USD\", 1 if b > e else 0)\n    ctx.target(\"ETH-USD\", 0 if b > e else 1)\n"
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = wicketIn(t, dir, "backtest", "--local", file, "--from", "2023-01-01", "--json")
	if code != 0 || !strings.Contains(stdout, `"lookahead_check":"passed (`) || !strings.Contains(stdout, `"series":"BTC-USD@1d,ETH-USD@1d"`) {
		t.Errorf("on_bar portfolio: exit %d: %.400s %s", code, stdout, stderr)
	}
	// Borrow is charged on a portfolio's shorts, and reported.
	code, stdout, stderr = wicketIn(t, dir, "backtest", "--local", "equal_weight", "--borrow-rate", "0.05", "--json")
	if code != 0 || !strings.Contains(stdout, `"borrow_paid":"0.00"`) {
		t.Errorf("borrow on a long-only portfolio: exit %d: %.600s %s", code, stdout, stderr)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"backtest", "--local", "sma_cross"}, "declares no universe"},
		{[]string{"backtest", "--local", "equal_weight", "--robustness"}, "--robustness is for a single series"},
		{[]string{"backtest", "--local", "equal_weight", "--param", "nope=1"}, "nope"},
		{[]string{"backtest", "--local", "equal_weight", "--leverage", "2"}, "one cash account sized by weights"},
	} {
		code, _, stderr := wicketIn(t, dir, c.args...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %s", c.args, code, stderr)
		}
	}
}
