package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wicket/deploy"
	"wicket/node/nodetest"
	"wicket/strategy/backtest"
	"wicket/strategy/scriptapi"
	"wicket/strategy/worker"
)

const deployFlip = `"""Long on up bars."""
def signals(bars):
    return {"long": bars.close > bars.open, "exit": bars.close < bars.open, "size": 0.5}
`

// deployNode is a node running deployments (a real runner over a worker
// pool and a journal), and a project whose keys are the node's.
func deployNode(t *testing.T) (*nodetest.Server, string) {
	t.Helper()
	h := deploy.NewHandler()
	n := nodetest.NewServer(t, nodetest.WithDeployments(h))
	proj := tradeProject(t, n)
	if err := os.WriteFile(filepath.Join(proj, "strategies", "flip.star"), []byte(deployFlip), 0o644); err != nil {
		t.Fatal(err)
	}
	pool, err := worker.NewPool(worker.Config{Size: 1, Command: []string{builtWicket(t)}}) // the test binary is no worker
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pool.Close() })
	store, err := deploy.OpenStore(filepath.Join(t.TempDir(), "deployments.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	r, err := deploy.New(context.Background(), deploy.Config{Project: n.Config, Store: store, Node: n.Client(), Strategies: pool})
	if err != nil {
		t.Fatal(err)
	}
	h.Attach(r)
	return n, proj
}

// TestDeployCLI: wicket deploy previews and deploys nothing from a pipe
// without --yes; with --yes it deploys; a bad venue is refused with the
// fix; node deployments lists it (and --json); stop-deployment stops it.
func TestDeployCLI(t *testing.T) {
	n, proj := deployNode(t)
	base := []string{"--project", proj}
	args := append(append([]string{}, base...), "deploy", "flip", "--series", "BTC-USD@1m", "--venue", "paper", "--capital", "1000",
		"--max-orders-per-day", "10", "--warmup", "20", "--addr", n.Addr)
	code, stdout, stderr := wicket(t, args...)
	if code != 0 || !strings.Contains(stdout, "strategy     flip.star sha256 ") || !strings.Contains(stdout, "max orders per day 10") ||
		!strings.Contains(stderr, "nothing was deployed: run the same command with --yes") {
		t.Fatalf("preview: code %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, _ = wicket(t, append(append([]string{}, base...), "node", "deployments", "--addr", n.Addr)...)
	if code != 0 || !strings.Contains(stdout, "no deployments") {
		t.Fatalf("a preview deployed: %s", stdout)
	}
	bad := append(append([]string{}, args...), "--venue", "kraken", "--yes")
	if code, _, stderr := wicket(t, bad...); code != 1 || !strings.Contains(stderr, `no venue "kraken" on this node: use one of paper`) {
		t.Fatalf("bad venue: code %d %s", code, stderr)
	}
	code, stdout, stderr = wicket(t, append(args, "--yes")...)
	if code != 0 || !strings.Contains(stdout, "deployed dep-") {
		t.Fatalf("deploy --yes: code %d\n%s\n%s", code, stdout, stderr)
	}
	id := strings.Fields(stdout[strings.Index(stdout, "deployed dep-"):])[1]
	code, stdout, _ = wicket(t, append(append([]string{}, base...), "node", "deployments", "--json", "--addr", n.Addr)...)
	var list struct {
		Deployments []deploy.Deployment `json:"deployments"`
	}
	if err := json.Unmarshal([]byte(stdout), &list); code != 0 || err != nil || len(list.Deployments) != 1 || list.Deployments[0].ID != id ||
		list.Deployments[0].Mode != deploy.ModePropose || list.Deployments[0].Allowance.MaxOrdersPerDay != 10 {
		t.Fatalf("deployments --json: %v %s", err, stdout)
	}
	code, stdout, stderr = wicket(t, append(append([]string{}, base...), "node", "stop-deployment", id, "--addr", n.Addr)...)
	if code != 0 || !strings.Contains(stdout, id+" is stopped") {
		t.Fatalf("stop: code %d %s %s", code, stdout, stderr)
	}
	if code, _, stderr := wicket(t, append(append([]string{}, base...), "node", "resume", id, "--addr", n.Addr)...); code != 1 || !strings.Contains(stderr, "interactive terminal") {
		t.Fatalf("resume from a pipe: code %d %s", code, stderr)
	}
}

// TestDeployPrintsPreview: wicket deploy's printed preview carries the
// checks' findings: the start-point verdict, the lookahead verdict, the
// backtest's figures and the breaker that tripped in it.
func TestDeployPrintsPreview(t *testing.T) {
	ret, sharpe, dd := 0.125, 1.5, 0.04
	d := deploy.Deployment{Strategy: "flip.star", Series: "BTC-USD@1m", Venue: "paper", Preview: &deploy.Preview{
		StartPoint: &scriptapi.StartPoint{Verdict: "passed: a warm-up of 80 bars is enough"},
		Lookahead:  "passed (36 prefixes)",
		Backtest: &deploy.BacktestSummary{From: "2025-12-02", TotalReturn: &ret, Sharpe: &sharpe, MaxDrawdown: &dd, Trades: 7,
			Breaker: &backtest.Breaker{Name: "max_daily_loss", Reason: "equity fell"}},
	}}
	var b strings.Builder
	printDeployment(&b, d)
	for _, want := range []string{"start point  passed: a warm-up of 80 bars", "lookahead    passed (36 prefixes)",
		"backtest     since 2025-12-02 under the allowance: total return 12.50%, sharpe 1.50, max drawdown 4.00%, 7 trades",
		"breaker      max_daily_loss tripped at"} {
		if !strings.Contains(b.String(), want) {
			t.Fatalf("preview lacks %q:\n%s", want, b.String())
		}
	}
}
