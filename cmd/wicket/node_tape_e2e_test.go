package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"io"
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
	dir := filepath.Join(t.TempDir(), "proj")
	p, err := project.Init(dir, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p.StrategiesDir(), "flip.star"), []byte(deployFlip), 0o644); err != nil {
		t.Fatal(err)
	}
	const series, warm, n = "BTC-USD@1m", 60, 240
	start := time.Date(2026, 3, 1, 23, 0, 0, 0, time.UTC)
	from := start.Add(warm * time.Minute)
	store, err := history.Open(p.HistoryPath())
	if err != nil {
		t.Fatal(err)
	}
	b := strategy.Bars{Series: series}
	px := 100.0
	for i := range warm + n {
		open, cl := px, px*(1+0.002*float64(i%3-1))
		b.Time = append(b.Time, start.Add(time.Duration(i)*time.Minute).Unix())
		b.Open, b.High, b.Low, b.Close, b.Volume = append(b.Open, open), append(b.High, max(open, cl)+0.05), append(b.Low, min(open, cl)-0.05), append(b.Close, cl), append(b.Volume, 1)
		px = cl
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := store.Append(ctx, series, b, history.AppendOptions{Source: "binance"}); err != nil {
		t.Fatal(err)
	}
	store.Close()

	cmd := exec.Command(builtWicket(t), "--project", dir, "node", "serve", "--listen", "127.0.0.1:0",
		"--replay", series, "--from", from.Format(time.RFC3339), "--speed", "max")
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
	var d deploy.Detail
	for { // a bounded poll of the node's answers (ctx), not a synchronisation
		if err := client.DeploymentsGet(ctx, "/"+url.PathEscape(dep.ID), nil, &d); err != nil {
			t.Fatal(err)
		}
		if !d.Deployment.LastBar.Before(last) {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the tape did not reach its end: the deployment's last bar %v", d.Deployment.LastBar)
		case <-time.After(20 * time.Millisecond):
		}
	}
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
