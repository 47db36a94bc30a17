package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wicket/internal/project"
	"wicket/strategy/backtest"
	"wicket/strategy/ledger"
	"wicket/strategy/provider/providertest"
	"wicket/strategy/research"
	"wicket/strategy/worker"
	"wicket/trace"
)

// The research, data, deployment, operator, cluster and demo commands'
// run functions, called with options and buffers as run_options_test.go
// calls the others.

// initProject makes a project in a temporary directory.
func initProject(t *testing.T) string {
	t.Helper()
	t.Setenv("WICKET_PROJECT", "")
	dir := filepath.Join(t.TempDir(), "proj")
	var out, errb bytes.Buffer
	if err := runInit(context.Background(), initOptions{dir: dir}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	return dir
}

// wantUsage fails unless err is a usage error whose message holds want.
func wantUsage(t *testing.T, what string, err error, want string) {
	t.Helper()
	var ue usageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), want) {
		t.Errorf("%s: got %v, want a usage error saying %q", what, err, want)
	}
}

func TestRunBacktestRefusals(t *testing.T) {
	dir := initProject(t)
	var out, errb bytes.Buffer
	run := func(o backtestOptions) error {
		if o.project == "" {
			o.project = dir
		}
		return runBacktest(context.Background(), o, &out, &errb)
	}
	wantUsage(t, "no strategy", run(backtestOptions{series: "BTC-USD@1h"}), "backtest needs --local NAME|FILE")
	wantUsage(t, "a bad series", run(backtestOptions{local: "sma_cross", series: "BTC-USD@7m"}), "--series: ")
	wantUsage(t, "a bad knob assignment", run(backtestOptions{local: "sma_cross", series: "BTC-USD@1h", params: []string{"fast"}}), "--param: ")
	for _, local := range []string{"no_such_strategy", filepath.Join(dir, "none.star")} {
		if err := run(backtestOptions{local: local, series: "BTC-USD@1h"}); err == nil || !strings.Contains(err.Error(), filepath.Base(local)) {
			t.Errorf("a missing strategy %s: %v", local, err)
		}
	}
	wantUsage(t, "a bad allowance", run(backtestOptions{local: "sma_cross", series: "BTC-USD@1h", allowance: []string{"max_nothing=1"}}), "--allowance: ")
	wantUsage(t, "a tear sheet of a series set", run(backtestOptions{local: "sma_cross", series: "BTC-USD@1d,ETH-USD@1d", report: "x.html"}),
		"--report draws one series' tear sheet")
	wantUsage(t, "a single-series flag on a portfolio run", run(backtestOptions{local: "sma_cross", set: map[string]bool{"plot": true}}),
		"--plot is for a single series")
	wantUsage(t, "a bad fill model", run(backtestOptions{local: "sma_cross", series: "BTC-USD@1h", fill: "whenever"}), "whenever")
	if out.Len() != 0 {
		t.Errorf("a refused backtest printed %q", out.String())
	}
}

// builtEngine is a research engine over a pool of the built wicket
// binary (the test binary is no worker), in place of the pool the command
// made, which starts no process until it is used.
func builtEngine(t *testing.T) researchEngine {
	bin := builtWicket(t)
	return func(p project.Project, cfg project.Config, _ *worker.Pool, rec research.Recorder) (*research.Local, func(), error) {
		pool, err := worker.NewPool(worker.Config{Size: 1, Command: []string{bin}, MemoryMiB: cfg.Research.WorkerMemoryMiB})
		if err != nil {
			return nil, nil, err
		}
		return localResearch(p, cfg, pool, rec), func() { pool.Close() }, nil
	}
}

// TestRunSweepAndTheLedger sweeps a template over the demo series, then
// lists, verifies and exports the run the research ledger recorded.
func TestRunSweepAndTheLedger(t *testing.T) {
	dir := initProject(t)
	ctx := context.Background()
	var out, errb bytes.Buffer
	if err := runDataSeedDemo(ctx, dataSeedDemoOptions{project: dir}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	o := sweepOptions{research: researchOptions{
		project: dir, strategy: "sma_cross", series: "BTC-USD@1d", from: "2023-01-01", grid: []string{"fast=5,10", "slow=30"},
		engine: builtEngine(t),
	}}
	o.research.grid = nil
	wantUsage(t, "no grid", runSweep(ctx, o, &out, &errb), "sweep needs at least one --grid")
	o.research.grid = []string{"fast=5,10", "fast=20"}
	wantUsage(t, "a knob twice", runSweep(ctx, o, &out, &errb), "--grid: knob fast is given twice")
	o.research.grid = []string{"fast=5,10", "slow=30"}

	out.Reset()
	o.json = true
	if err := runSweep(ctx, o, &out, &errb); err != nil {
		t.Fatalf("sweep: %v\n%s", err, errb.String())
	}
	var res research.SweepResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("sweep --json: %v\n%s", err, out.String())
	}
	if res.Combinations != 2 || res.Evaluated != 2 || res.Series != "BTC-USD@1d" || res.RunID == "" || len(res.Top) != 2 {
		t.Fatalf("sweep result: %d combinations, %d evaluated, series %s, run %q, %d top", res.Combinations, res.Evaluated, res.Series, res.RunID, len(res.Top))
	}

	out.Reset()
	lo := researchLedgerOptions{project: dir, filter: ledger.Filter{Limit: 10}, json: true, now: time.Now}
	if err := runResearchLedger(ctx, lo, &out, &errb); err != nil {
		t.Fatal(err)
	}
	var rows []ledger.Row
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var r ledger.Row
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("ledger --json line %q: %v", line, err)
		}
		rows = append(rows, r)
	}
	if len(rows) != 2 || rows[0].RunID != res.RunID || rows[0].Kind != ledger.KindSweep || rows[0].Who.Surface != ledger.SurfaceCLI {
		t.Fatalf("ledger rows: %+v", rows)
	}
	lo.filter.Kind = "nope"
	wantUsage(t, "an unknown kind", runResearchLedger(ctx, lo, &out, &errb), `--kind "nope" is not one of`)
	lo.filter.Kind, lo.filter.Limit = "", 0
	wantUsage(t, "a zero limit", runResearchLedger(ctx, lo, &out, &errb), "--limit 0")

	out.Reset()
	if err := runResearchVerify(ctx, researchVerifyOptions{project: dir}, &out, &errb); err != nil || !strings.Contains(out.String(), "research ledger intact: 2 rows") {
		t.Fatalf("verify: %v\n%s", err, out.String())
	}

	file := filepath.Join(t.TempDir(), "run.json")
	eo := researchExportOptions{project: dir, run: res.RunID, out: file}
	if err := runResearchExport(ctx, eo, &out, &errb); err != nil {
		t.Fatal(err)
	}
	var x research.RunExport
	if b, err := os.ReadFile(file); err != nil || json.Unmarshal(b, &x) != nil || x.RunID != res.RunID || len(x.Trials) != 2 {
		t.Fatalf("export: %v, run %q, %d trials", err, x.RunID, len(x.Trials))
	}
	if err := runResearchExport(ctx, eo, &out, &errb); err == nil || !strings.Contains(err.Error(), "never overwritten") {
		t.Errorf("an export over an existing file: %v", err)
	}
	eo.out = ""
	wantUsage(t, "an empty --out", runResearchExport(ctx, eo, &out, &errb), "--out is empty")
}

func TestRunResearchLedgerWithoutOne(t *testing.T) {
	dir := initProject(t)
	var out, errb bytes.Buffer
	err := runResearchVerify(context.Background(), researchVerifyOptions{project: dir}, &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "no research ledger in this project yet") {
		t.Errorf("verify without a ledger: %v", err)
	}
}

// TestRunDataFetchAgainstAFake fetches a day of hourly bars from a fake
// Binance, then again (nothing new), and refuses bad requests first.
func TestRunDataFetchAgainstAFake(t *testing.T) {
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	f := providertest.NewBinance(nil, map[string]providertest.Gen{"BTCUSDT": {Start: t0, End: t0.Add(24 * time.Hour), Step: time.Hour}})
	defer f.Close()
	dir := recordProject(t, "binance", f.URL)
	ctx := context.Background()
	var out, errb bytes.Buffer
	o := dataFetchOptions{project: dir, from: "2024-01-01", to: "2024-01-01T23:00:00Z", now: time.Now}
	wantUsage(t, "no series", runDataFetch(ctx, o, &out, &errb), "data fetch needs at least one series")
	o.args = []string{"BTC-USD@7m"}
	wantUsage(t, "a bad series", runDataFetch(ctx, o, &out, &errb), "7m")
	o.args, o.from = []string{"BTC-USD@1h"}, "2024-02-01"
	wantUsage(t, "--to before --from", runDataFetch(ctx, o, &out, &errb), "is before --from")
	fo := dataFetchOptions{project: dir, args: []string{"BTC-USD"}, provider: "alpaca", funding: true, now: time.Now}
	wantUsage(t, "funding from alpaca", runDataFetch(ctx, fo, &out, &errb), "has no funding rates")

	o.from = "2024-01-01"
	if err := runDataFetch(ctx, o, &out, &errb); err != nil {
		t.Fatalf("fetch: %v\n%s", err, errb.String())
	}
	if want := "BTC-USD@1h: added 24 bars from binance BTCUSDT (2024-01-01T00:00:00Z to 2024-01-01T23:00:00Z)"; !strings.Contains(out.String(), want) {
		t.Errorf("fetch printed %q, want %q", out.String(), want)
	}
	out.Reset()
	o.from = ""
	if err := runDataFetch(ctx, o, &out, &errb); err != nil || !strings.Contains(out.String(), "BTC-USD@1h: up to date from binance BTCUSDT") {
		t.Errorf("a second fetch: %v %q", err, out.String())
	}
}

// TestRunDeployAndTheDeploymentCommands deploys to a node with
// deployments, lists, shows and stops the deployment, and sees the
// operator's commands refuse a pipe.
func TestRunDeployAndTheDeploymentCommands(t *testing.T) {
	n, proj := deployNode(t)
	ctx := context.Background()
	var out, errb bytes.Buffer
	o := deployOptions{
		project: proj, addr: n.Addr, name: "flip", series: "BTC-USD@1m", venue: "paper", mode: "propose", capital: "1000",
		allowance: map[string]string{backtest.AllowMaxOrdersPerDay: "10"}, warmup: 20, stdin: strings.NewReader(""),
	}
	o.capital = "lots"
	wantUsage(t, "a bad capital", runDeploy(ctx, o, &out, &errb), `--capital "lots"`)
	o.capital, o.venue = "1000", ""
	wantUsage(t, "no venue", runDeploy(ctx, o, &out, &errb), "deploy needs --series SYMBOL@GRAN and --venue VENUE")
	o.venue = "paper"
	out.Reset()
	if err := runDeploy(ctx, o, &out, &errb); err != nil || !strings.Contains(out.String(), "max orders per day 10") ||
		!strings.Contains(errb.String(), "nothing was deployed: run the same command with --yes") {
		t.Fatalf("preview from a pipe: %v\n%s\n%s", err, out.String(), errb.String())
	}
	out.Reset()
	o.yes = true
	if err := runDeploy(ctx, o, &out, &errb); err != nil || !strings.Contains(out.String(), "deployed dep-") {
		t.Fatalf("deploy with yes: %v\n%s", err, out.String())
	}
	id := strings.Fields(out.String()[strings.Index(out.String(), "deployed dep-"):])[1]

	do := nodeDeploymentsOptions{project: proj, addr: n.Addr}
	out.Reset()
	if err := runNodeDeployments(ctx, do, &out, &errb); err != nil || !strings.HasPrefix(out.String(), id+"  ") {
		t.Fatalf("deployments: %v\n%s", err, out.String())
	}
	do.report = true
	wantUsage(t, "a report of no deployment", runNodeDeployments(ctx, do, &out, &errb), "--report takes the deployment ID")
	do.report, do.id = false, id
	out.Reset()
	if err := runNodeDeployments(ctx, do, &out, &errb); err != nil || !strings.Contains(out.String(), "deployment   "+id) {
		t.Fatalf("deployments ID: %v\n%s", err, out.String())
	}

	ao := nodeDeploymentActOptions{project: proj, addr: n.Addr, id: id}
	out.Reset()
	if err := runNodeStopDeployment(ctx, ao, &out, &errb); err != nil || !strings.Contains(out.String(), id+" is stopped") {
		t.Fatalf("stop: %v\n%s", err, out.String())
	}
	ao.act, ao.verb, ao.stdin = "resume", "resume", strings.NewReader(id+"\n")
	if err := runOperatorDeploymentAct(ctx, ao, &out, &errb); err == nil || !strings.Contains(err.Error(), "wicket node resume needs an interactive terminal") {
		t.Errorf("resume from a pipe: %v", err)
	}
}

// TestRunOperatorCommandsRefuseAPipe: approve and clear-breaker do
// nothing, not even open the project, without a terminal.
func TestRunOperatorCommandsRefuseAPipe(t *testing.T) {
	ctx := context.Background()
	none := filepath.Join(t.TempDir(), "no-project")
	var out, errb bytes.Buffer
	err := runApprove(ctx, approveOptions{project: none, stdin: strings.NewReader("y\n"), now: time.Now}, &out, &errb)
	wantUsage(t, "approve from a pipe", err, "wicket approve needs an interactive terminal")
	err = runNodeClearBreaker(ctx, nodeArmOptions{project: none, name: "paper", stdin: strings.NewReader("paper\n")}, &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "wicket node clear-breaker needs an interactive terminal") {
		t.Errorf("clear-breaker from a pipe: %v", err)
	}
	err = runOperatorDeploymentAct(ctx, nodeDeploymentActOptions{project: none, id: "x", act: "approve", verb: "approve-proposal", stdin: strings.NewReader("x\n")}, &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "wicket node approve-proposal needs an interactive terminal") {
		t.Errorf("approve-proposal from a pipe: %v", err)
	}
	if out.Len() != 0 {
		t.Errorf("a refused operator command printed %q", out.String())
	}
}

func TestRunClusterWorkerOptions(t *testing.T) {
	dir := initProject(t)
	ctx := context.Background()
	var out, errb bytes.Buffer
	o := clusterWorkerOptions{project: dir}
	wantUsage(t, "no cluster", runClusterWorker(ctx, o, &out, &errb), "worker needs --cluster URL")
	o.cluster = clusterFlags{urlSet: true}
	wantUsage(t, "an empty --cluster", runClusterWorker(ctx, o, &out, &errb), "--cluster needs a URL")
	o.cluster = clusterFlags{url: "http://127.0.0.1:4222", urlSet: true}
	wantUsage(t, "an http cluster", runClusterWorker(ctx, o, &out, &errb), "http://127.0.0.1:4222")
	o.cluster = clusterFlags{url: "nats://cluster.example:4222", urlSet: true}
	wantUsage(t, "a remote cluster in the clear", runClusterWorker(ctx, o, &out, &errb), "pass --insecure-cluster to allow it")
	o.cluster = clusterFlags{url: "nats://127.0.0.1:4222", urlSet: true, caSet: true}
	wantUsage(t, "an empty --cluster-ca", runClusterWorker(ctx, o, &out, &errb), "--cluster-ca needs the PEM file")
	o.cluster.caSet = false
	o.workers, o.workersSet = 0, true
	wantUsage(t, "no workers", runClusterWorker(ctx, o, &out, &errb), "--workers 0 must be at least 1")
}

// TestRunDemoHonoursItsContext: a demo whose context has ended stops
// before its node starts and removes its temporary project; with keep it
// leaves it and says where.
func TestRunDemoHonoursItsContext(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb bytes.Buffer
	o := demoOptions{timeout: time.Minute, exe: filepath.Join(tmp, "no-wicket")}
	if err := runDemo(ctx, o, &out, &errb); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled demo: %v\n%s", err, out.String())
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("the cancelled demo left %v", left)
	}
	o.keep = true
	if err := runDemo(ctx, o, &out, &errb); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled demo with keep: %v", err)
	}
	left, _ := os.ReadDir(tmp)
	if len(left) != 1 || !strings.Contains(errb.String(), "demo project kept at "+filepath.Join(tmp, left[0].Name())) {
		t.Errorf("keep: left %v, stderr %q", left, errb.String())
	}
}

// TestRunServeNodeRefusals: node serve checks its options before it
// opens anything beyond the project.
func TestRunServeNodeRefusals(t *testing.T) {
	dir := initProject(t)
	var out, errb bytes.Buffer
	o := nodeOptions{project: dir, tick: -time.Second, bars: barsMarks}
	wantUsage(t, "a negative tick", runServeNode(context.Background(), o, &out, &errb), "--tick -1s is negative")
	o.tick, o.bars = 0, "ticker"
	wantUsage(t, "an unknown bar source", runServeNode(context.Background(), o, &out, &errb), `--bars "ticker": give marks or tape`)
	if out.Len()+errb.Len() != 0 {
		t.Errorf("a refused node serve wrote %q %q", out.String(), errb.String())
	}
}

// TestRunTraceCommands lists, counts and shows a trace directory's entries
// through the trace run functions, the clock of --since injected, and
// refuses bad filters first.
func TestRunTraceCommands(t *testing.T) {
	dir := t.TempDir()
	at := time.Date(2026, 5, 2, 0, 0, 0, 0, time.UTC)
	w, err := trace.Open(dir, trace.Options{Now: func() time.Time { return at }})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(trace.Entry{Session: "s1", Seq: 1, Tool: "list_strategies", Verdict: trace.OK})
	w.Write(trace.Entry{Session: "s1", Seq: 2, Tool: "submit_order", Write: true, Verdict: trace.Refused, Error: "over the notional cap"})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var out, errb bytes.Buffer
	o := traceCommandOptions{dir: dir, now: func() time.Time { return at.Add(time.Hour) }}
	o.limit = -1
	wantUsage(t, "a negative limit", runTraceList(ctx, o, &out, &errb), "--limit must be 0 (all) or more")
	o.limit, o.verdict = 0, "maybe"
	wantUsage(t, "an unknown verdict", runTraceList(ctx, o, &out, &errb), `unknown verdict "maybe"`)
	o.verdict, o.since, o.until = "", "1h", "2h"
	wantUsage(t, "since after until", runTraceStats(ctx, o, &out, &errb), "--since 1h is not before --until 2h")

	o.until, o.verdict = "", "refused"
	if err := runTraceList(ctx, o, &out, &errb); err != nil || !strings.Contains(out.String(), "submit_order") || strings.Contains(out.String(), "list_strategies") {
		t.Fatalf("list --verdict refused --since 1h: %v\n%s", err, out.String())
	}
	out.Reset()
	o.since = "30m" // after both entries by the injected clock
	if err := runTraceList(ctx, o, &out, &errb); err != nil || strings.Contains(out.String(), "submit_order") {
		t.Errorf("list --since 30m: %v\n%s", err, out.String())
	}
	out.Reset()
	o.since, o.verdict, o.arg = "", "", "2"
	if err := runTraceShow(ctx, o, &out, &errb); err != nil || !strings.Contains(out.String(), "over the notional cap") {
		t.Errorf("show 2: %v\n%s", err, out.String())
	}
}
