package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/deploy"
	"wicket/internal/project"
	"wicket/node"
	"wicket/strategy"
	"wicket/strategy/history"
)

// tapeProject is a new project with strategy file name holding source,
// and the bars of each series in its history store.
func tapeProject(t *testing.T, name, source string, series ...strategy.Bars) (string, project.Project) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "proj")
	p, err := project.Init(dir, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p.StrategiesDir(), name), []byte(source), 0o644); err != nil {
		t.Fatal(err)
	}
	store, err := history.Open(p.HistoryPath())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	for _, b := range series {
		if err := store.Append(context.Background(), b.Series, b, history.AppendOptions{Source: "binance"}); err != nil {
			t.Fatal(err)
		}
	}
	return dir, p
}

// tapeNode starts the built binary's node of the project in dir with
// args after `node serve --listen 127.0.0.1:0`, and returns a client of
// it holding the project's keys; the node is killed when the test ends.
func tapeNode(t *testing.T, dir string, p project.Project, args ...string) *node.Client {
	t.Helper()
	cmd := exec.Command(builtWicket(t), append([]string{"--project", dir, "node", "serve", "--listen", "127.0.0.1:0"}, args...)...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "WICKET_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
	lines := bufio.NewScanner(stderr)
	var addr string
	var seen []string
	for addr == "" && lines.Scan() {
		if a, ok := strings.CutPrefix(lines.Text(), "wicket node: listening on "); ok {
			addr = a
			go io.Copy(io.Discard, stderr) //nolint:errcheck // keep the pipe drained
		}
		seen = append(seen, lines.Text())
	}
	if addr == "" {
		t.Fatalf("node exited without listening; stderr:\n%s", strings.Join(seen, "\n"))
	}
	secrets, err := p.Secrets(func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	observe, _, _ := secrets.Lookup(project.KeyObserve)
	control, _, _ := secrets.Lookup(project.KeyControl)
	client, err := node.NewClient(addr, observe, control)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	awaitDeployments(ctx, t, client)
	return client
}

// tapeDone polls the node's answers (bounded by ctx; not a
// synchronisation) until deployment id has handled the bar of last, and
// returns its detail.
func tapeDone(ctx context.Context, t *testing.T, client *node.Client, id string, last time.Time) deploy.Detail {
	t.Helper()
	var d deploy.Detail
	for {
		if err := client.DeploymentsGet(ctx, "/"+url.PathEscape(id), nil, &d); err != nil {
			t.Fatal(err)
		}
		if !d.Deployment.LastBar.Before(last) {
			return d
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the tape did not reach its end: the deployment's last bar %v", d.Deployment.LastBar)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// TestNodeServeTapeFromSpeedMax runs the built binary's node on a
// recorded tape's clock (--replay BTC-USD@1m --from T --speed max) with
// 60 bars before T in the history store and 240 after: a deployment made
// over the node's signed API (signed on the wall clock) warms up from the
// bars before T, then decides every bar of the tape, none missed, its
// orders filled on paper, and the node's clock ends at the last bar's
// close.
func TestNodeServeTapeFromSpeedMax(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real node process")
	}
	const series, warm, n = "BTC-USD@1m", 60, 240
	start := time.Date(2026, 3, 1, 23, 0, 0, 0, time.UTC)
	from := start.Add(warm * time.Minute)
	b := strategy.Bars{Series: series}
	px := 100.0
	for i := range warm + n {
		open, cl := px, px*(1+0.002*float64(i%3-1))
		b.Time = append(b.Time, start.Add(time.Duration(i)*time.Minute).Unix())
		b.Open, b.High, b.Low, b.Close, b.Volume = append(b.Open, open), append(b.High, max(open, cl)+0.05), append(b.Low, min(open, cl)-0.05), append(b.Close, cl), append(b.Volume, 1)
		px = cl
	}
	dir, p := tapeProject(t, "flip.star", deployFlip, b)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client := tapeNode(t, dir, p, "--replay", series, "--from", from.Format(time.RFC3339), "--speed", "max")
	snap, err := client.Snapshot(ctx, "paper", 0)
	if err != nil {
		t.Fatal(err)
	}
	if !snap.Time.Equal(from) {
		t.Fatalf("before its first deployment the node's clock reads %v, want the tape's start %v", snap.Time, from)
	}
	var dep deploy.Deployment
	spec := deploy.Spec{Strategy: "flip.star", Source: deployFlip, Series: series, Venue: "paper", Mode: deploy.ModeAuto,
		Capital: decimal.NewFromInt(1000), Warmup: 20}
	if err := client.DeploymentsPost(ctx, "", spec, &dep); err != nil {
		t.Fatalf("deploy: %v", err)
	}
	last := start.Add((warm + n - 1) * time.Minute)
	d := tapeDone(ctx, t, client, dep.ID, last)
	decided := 0
	for _, dc := range d.Decisions {
		if dc.Status == deploy.DecisionDecided {
			decided++
		}
	}
	filled := 0
	for _, in := range d.Intents {
		if in.Status == deploy.IntentFilled {
			filled++
		}
	}
	if d.Deployment.Missed != 0 || decided != len(d.Decisions) || filled < 10 {
		t.Fatalf("after the tape: %d missed, %d of the latest %d decisions decided, %d orders filled", d.Deployment.Missed, decided, len(d.Decisions), filled)
	}
	if snap, err = client.Snapshot(ctx, "paper", 0); err != nil || !snap.Time.Equal(last.Add(time.Minute)) {
		t.Fatalf("after the tape the node's clock reads %v (%v), want the last bar's close %v", snap.Time, err, last.Add(time.Minute))
	}
}

// tapeRotation is a top-1 momentum rotation over three assets.
const tapeRotation = `"""Top-1 momentum rotation over three assets."""
universe = ["BTC-USD@1m", "ETH-USD@1m", "SOL-USD@1m"]
rebalance = "drift:0.05"

def signals(u):
    mom = {a: ta.roc(u[a].close, 10) for a in u.assets}
    top = u.top(mom, 1)
    return {a: top[a] * 0.9 for a in u.assets}
`

// TestNodeServeTapeReplaysAPortfolio runs the built binary's node on the
// recorded tapes of a three-asset universe, given as --replay BTC-USD@1m
// --replay ETH-USD@1m,SOL-USD@1m (the flag repeated and a comma list),
// from T at --speed max, with 40 bars of each before T and 300 calendar
// bars after, SOL missing one in 17. A portfolio deployment made over the
// node's signed API warms up from the bars before T, then decides every
// calendar bar of the tape, none missed; its orders fill on paper; and
// the node's tracking report replays each decision through the backtest's
// decision function as equal.
func TestNodeServeTapeReplaysAPortfolio(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real node process")
	}
	const warm, n = 40, 300
	start := time.Date(2026, 3, 1, 23, 0, 0, 0, time.UTC)
	from := start.Add(warm * time.Minute)
	walk := func(series string, seed uint64, p0 float64, skip func(i int) bool) strategy.Bars {
		b := strategy.Bars{Series: series}
		x, px := seed, p0
		next := func() float64 { x ^= x << 13; x ^= x >> 7; x ^= x << 17; return (float64(x%2001) - 1000) / 1000 }
		for i := range warm + n {
			open := math.Round(px*(1+next()*0.001)*100) / 100
			cl := math.Round(open*(1+next()*0.006)*100) / 100
			if skip != nil && skip(i) {
				continue
			}
			b.Time = append(b.Time, start.Add(time.Duration(i)*time.Minute).Unix())
			b.Open, b.High, b.Low, b.Close, b.Volume = append(b.Open, open), append(b.High, max(open, cl)+0.05), append(b.Low, min(open, cl)-0.05), append(b.Close, cl), append(b.Volume, 1)
			px = cl
		}
		return b
	}
	sol := walk("SOL-USD@1m", 13, 20, func(i int) bool { return i > warm && i%17 == 0 })
	dir, p := tapeProject(t, "rotation.star", tapeRotation, walk("BTC-USD@1m", 7, 100, nil), walk("ETH-USD@1m", 11, 40, nil), sol)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	client := tapeNode(t, dir, p, "--replay", "BTC-USD@1m", "--replay", "ETH-USD@1m,SOL-USD@1m", "--from", from.Format(time.RFC3339), "--speed", "max")
	var dep deploy.Deployment
	spec := deploy.Spec{Strategy: "rotation.star", Source: tapeRotation, Venue: "paper", Mode: deploy.ModeAuto,
		Capital: decimal.NewFromInt(10000), Warmup: 30}
	if err := client.DeploymentsPost(ctx, "", spec, &dep); err != nil {
		t.Fatalf("deploy: %v", err)
	}
	if len(dep.Legs) != 3 {
		t.Fatalf("deployed %+v: want one deployment over the three legs", dep)
	}
	last := start.Add((warm + n - 1) * time.Minute)
	d := tapeDone(ctx, t, client, dep.ID, last)
	var rep deploy.Report
	if err := client.DeploymentsGet(ctx, "/"+url.PathEscape(dep.ID)+"/report", nil, &rep); err != nil {
		t.Fatal(err)
	}
	filled, solFilled := 0, 0
	for _, in := range d.Intents {
		if in.Status == deploy.IntentFilled {
			filled++
			if in.N == 2 {
				solFilled++
			}
		}
	}
	if d.Deployment.Missed != 0 || rep.Replayed != n || rep.Equal != n || len(rep.Diverged) != 0 || filled < 10 {
		t.Fatalf("after the tape: %d calendar bars missed, %d decisions replayed, %d equal, %d diverged (of %d calendar bars); %d of the latest orders filled",
			d.Deployment.Missed, rep.Replayed, rep.Equal, len(rep.Diverged), n, filled)
	}
	t.Logf("%d calendar bars decided (SOL missing %d), %d of the latest %d orders filled (%d of SOL)", rep.Replayed, warm+n-sol.Len(), filled, len(d.Intents), solFilled)
}

// awaitDeployments returns once the node's deployments service answers:
// `wicket node serve` listens first and starts its deployment runner
// beside it, answering deployments_starting until then (bounded by ctx).
func awaitDeployments(ctx context.Context, t *testing.T, client *node.Client) {
	t.Helper()
	for {
		var list json.RawMessage // the answer's shape is the service's; here only whether it answers
		err := client.DeploymentsGet(ctx, "", nil, &list)
		var ne *node.Error
		if !errors.As(err, &ne) || ne.Code != "deployments_starting" {
			if err != nil {
				t.Fatalf("deployments: %v", err)
			}
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the node's deployments never started: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
