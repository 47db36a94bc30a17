package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/deploy"
	"wicket/node/nodetest"
	"wicket/strategy/backtest"
	"wicket/strategy/scriptapi"
	"wicket/strategy/worker"
	"wicket/trace"
)

const deployFlip = `"""Long on up bars."""
def signals(bars):
    return {"long": bars.close > bars.open, "exit": bars.close < bars.open, "size": 0.5}
`

// deployNode is a node running deployments (a real runner over a worker
// pool and a journal), and a project whose keys are the node's.
func deployNode(t *testing.T) (*nodetest.Server, string) {
	t.Helper()
	n, proj, _ := deployNodeRunner(t)
	return n, proj
}

// deployNodeRunner is deployNode with its runner.
func deployNodeRunner(t *testing.T) (*nodetest.Server, string, *deploy.Runner) {
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
	return n, proj, r
}

// TestDeployCLI: wicket deploy previews and deploys nothing from a pipe
// without --yes; with --yes it deploys; a bad venue is refused with the
// fix; node deployments lists it (and --json); stop-deployment stops it
// (--json prints the stopped deployment; stopping it again says so).
func TestDeployCLI(t *testing.T) {
	n, proj := deployNode(t)
	base := []string{"--project", proj}
	args := append(append([]string{}, base...), "deploy", "flip", "--series", "BTC-USD@1m", "--venue", "paper", "--capital", "1000",
		"--max-orders-per-day", "10", "--max-tracking-gap", "150bps", "--warmup", "20", "--addr", n.Addr)
	code, stdout, stderr := wicket(t, args...)
	if code != 0 || !strings.Contains(stdout, "strategy     flip.star sha256 ") || !strings.Contains(stdout, "max orders per day 10") ||
		!strings.Contains(stdout, "max tracking gap 150bps") ||
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
		list.Deployments[0].Mode != deploy.ModePropose || list.Deployments[0].Allowance.MaxOrdersPerDay != 10 ||
		list.Deployments[0].Allowance.MaxTrackingGap == nil || list.Deployments[0].Allowance.MaxTrackingGap.String() != "150bps" {
		t.Fatalf("deployments --json: %v %s", err, stdout)
	}
	code, stdout, stderr = wicket(t, append(append([]string{}, base...), "node", "stop-deployment", id, "--addr", n.Addr, "--reason", "drill", "--json")...)
	if d, err := decodeJSON[deploy.Deployment](stdout); code != 0 || err != nil || d.ID != id || d.State != deploy.StateStopped || !strings.Contains(d.Reason, "drill") {
		t.Fatalf("stop --json: code %d %v %s %s", code, err, stdout, stderr)
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
	d := deploy.Deployment{Strategy: "flip.star", Series: "BTC-USD@1m", Venue: "paper", Params: map[string]any{"slow": 20.0, "fast": 5.0, "kind": "ema"}, Preview: &deploy.Preview{
		StartPoint: &scriptapi.StartPoint{Verdict: "passed: a warm-up of 80 bars is enough"},
		Lookahead:  "passed (36 prefixes)",
		Backtest: &deploy.BacktestSummary{From: "2025-12-02", TotalReturn: &ret, Sharpe: &sharpe, MaxDrawdown: &dd, Trades: 7,
			Breaker: &backtest.Breaker{Name: "max_daily_loss", Reason: "equity fell"}},
		Plan: &deploy.PlanStatus{Status: deploy.PlanPassed, Name: "trend", Criteria: []string{"oos_sharpe>=1"}, Note: "plan trend passed every criterion on its holdout (oos_sharpe>=1 passed)"},
	}, ID: "dep-1", PlanOverride: "armed at 2026-01-02T00:00:00Z by the operator's signed override", ArmedUntil: time.Date(2026, 1, 2, 8, 0, 0, 0, time.UTC)}
	var b strings.Builder
	printDeployment(&b, d)
	if strings.Contains(b.String(), "map[") {
		t.Fatalf("knobs printed as a Go map:\n%s", b.String())
	}
	for _, want := range []string{"knobs        fast=5, kind=\"ema\", slow=20\n", "start point  passed: a warm-up of 80 bars", "lookahead    passed (36 prefixes)",
		"backtest     since 2025-12-02 under the allowance: total return 12.50%, sharpe 1.50, max drawdown 4.00%, 7 trades",
		"breaker      max_daily_loss tripped at",
		"plan         trend (passed): oos_sharpe>=1; plan trend passed every criterion on its holdout (oos_sharpe>=1 passed)\n",
		"plan override armed at 2026-01-02T00:00:00Z by the operator's signed override\n"} {
		if !strings.Contains(b.String(), want) {
			t.Fatalf("preview lacks %q:\n%s", want, b.String())
		}
	}
}

// TestTraceShowDeployment: wicket trace show dep-... --node lists the
// deployment's orders with the node's audit of each, and the trace's
// calls that named the deployment; without --node it says to add it.
func TestTraceShowDeployment(t *testing.T) {
	n, proj, r := deployNodeRunner(t)
	ctx := context.Background()
	d, err := r.Create(ctx, deploy.Spec{Strategy: "flip.star", Source: deployFlip, Series: "BTC-USD@1m", Venue: "paper", Mode: deploy.ModeAuto,
		Capital: decimal.NewFromInt(1000)})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := n.Client().Snapshot(ctx, "paper", 0)
	if err != nil {
		t.Fatal(err)
	}
	mark, _ := snap.Mark("paper", "BTC-USD")
	px, _ := mark.Float64()
	at := time.Now().UTC().Truncate(time.Minute).Add(-time.Minute)
	if err := r.Step(ctx, d.ID, deploy.Bar{Time: at, Open: px * 0.99, High: px, Low: px * 0.99, Close: px, Volume: 1}); err != nil {
		t.Fatal(err)
	}
	got, _ := r.Get(d.ID)
	if got.Position.IsZero() {
		t.Fatal("the deployment did not trade")
	}
	dir := t.TempDir()
	w, err := trace.Open(dir, trace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(trace.Entry{Session: "0198f0a2-7c1e-7a00-9a51-5b0c3d2e1f00", Seq: 4, Tool: "deployment_report", Profile: "full", Verdict: trace.OK,
		Args: []byte(`{"id":"` + d.ID + `"}`)})
	w.Write(trace.Entry{Session: "0198f0a2-7c1e-7a00-9a51-5b0c3d2e1f00", Seq: 5, Tool: "deployment_report", Profile: "full", Verdict: trace.OK,
		Args: []byte(`{"id":"dep-other"}`)})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := wicket(t, "--project", proj, "trace", "show", d.ID, "--dir", dir, "--node", n.Addr)
	cid := deploy.ClientOrderID(d.ID, at, 0)
	if code != 0 || !strings.Contains(stdout, "deployment  "+d.ID) || !strings.Contains(stdout, cid) || !strings.Contains(stdout, "filled") ||
		!strings.Contains(stdout, "1 audit entry") || !strings.Contains(stdout, "deployment_report") || strings.Contains(stdout, "dep-other") {
		t.Fatalf("trace show %s: code %d\n%s\n%s", d.ID, code, stdout, stderr)
	}
	if code, _, stderr := wicket(t, "--project", proj, "trace", "show", d.ID, "--dir", dir); code != 2 || !strings.Contains(stderr, "add --node HOST:PORT") {
		t.Fatalf("without --node: code %d %s", code, stderr)
	}
}

// TestApproveProposalShowsPrices: approve-proposal shows the order (side,
// quantity, symbol, venue), the bar's close it was sized at and the price
// now, and says an approval sizes it again at that price.
func TestApproveProposalShowsPrices(t *testing.T) {
	d := deploy.Deployment{ID: "dep-1", Strategy: "flip.star", Series: "BTC-USD@1m", Symbol: "BTC-USD", Venue: "paper"}
	p := deploy.Proposal{ClientOrderID: "wd-1", Bar: time.Date(2026, 3, 2, 0, 1, 0, 0, time.UTC), Side: "buy", Quantity: decimal.NewFromInt(30),
		Target: 0.5, BarClose: decimal.NewFromInt(100)}
	var b strings.Builder
	describeProposal(&b, d, p, decimal.NewFromInt(120))
	for _, want := range []string{"buy 30 BTC-USD at market on venue paper", "closed at 100", "price now    120 (20.00% from the bar's close)", "sized again at the price then"} {
		if !strings.Contains(b.String(), want) {
			t.Fatalf("approve-proposal shows:\n%s\nwithout %q", b.String(), want)
		}
	}
	b.Reset()
	describeProposal(&b, d, p, decimal.Decimal{})
	if !strings.Contains(b.String(), "an approval sends nothing") {
		t.Fatalf("without a price: %s", b.String())
	}
}

// TestPrintExitReplay: the report's text shows each live exit against the
// replay's and the replay's exits that did not fill live.
func TestPrintExitReplay(t *testing.T) {
	at := time.Date(2026, 3, 2, 0, 5, 0, 0, time.UTC)
	x := &deploy.ExitReplay{Live: 1, Replayed: 2, Equal: 1, FinalEquity: "9943.39",
		Fills:      []deploy.ExitTrack{{Bar: at, Exit: "stop_loss", Live: decimal.RequireFromString("99.6"), Replay: decimal.RequireFromString("99.6")}},
		MissedLive: []deploy.ExitTrack{{Bar: at.Add(time.Minute), Exit: "take_profit", Replay: decimal.RequireFromString("101")}}}
	var b strings.Builder
	printExitReplay(&b, x)
	for _, want := range []string{"exits        1 filled live, 2 in the replay, 1 equal", "exit         stop_loss on the bar of 2026-03-02T00:05:00Z: live 99.6, replay 99.6",
		"EXIT MISSED  take_profit on the bar of 2026-03-02T00:06:00Z at 101"} {
		if !strings.Contains(b.String(), want) {
			t.Fatalf("report text lacks %q:\n%s", want, b.String())
		}
	}
}
