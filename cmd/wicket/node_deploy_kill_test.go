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

// deployNodeProc is a real `wicket node serve --bars tape` process.
type deployNodeProc struct {
	cmd  *exec.Cmd
	addr string
	done chan struct{}
}

// startTapeNode runs the built binary's node on the project at dir, its
// deployments reading their bars from the recorded tape, marks still.
func startTapeNode(t *testing.T, dir string) *deployNodeProc {
	t.Helper()
	cmd := exec.Command(builtWicket(t), "--project", dir, "node", "serve", "--listen", "127.0.0.1:0", "--tick", "0", "--bars", "tape")
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
	p := &deployNodeProc{cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	t.Cleanup(p.kill)
	lines := bufio.NewScanner(stderr)
	var seen []string
	for lines.Scan() {
		if addr, ok := strings.CutPrefix(lines.Text(), "wicket node: listening on "); ok {
			go io.Copy(io.Discard, stderr) //nolint:errcheck // keep the pipe drained
			p.addr = addr
			return p
		}
		seen = append(seen, lines.Text())
	}
	t.Fatalf("node exited without listening; stderr:\n%s", strings.Join(seen, "\n"))
	return nil
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *deployNodeProc) kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
}

// TestDeployNodeSurvivesSIGKILLLoop runs a paper deployment in auto mode
// on a real node whose bars come from the recorded tape (the test
// appends each bar to the history store, as wicket data record does),
// and SIGKILLs the node 32 times at varied points (right after a bar
// lands, while the bar is handled, after it was handled, with bars
// landing while the node is down), restarting it each time. At the end
// no order reached the venue twice or without an intent, every intent is
// settled (filled once at the node, or lapsed with nothing at the node),
// the deployment's position is its fills, and every bar of the tape is
// accounted for (decided, or recorded missed).
func TestDeployNodeSurvivesSIGKILLLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real node processes")
	}
	dir := filepath.Join(t.TempDir(), "proj")
	p, err := project.Init(dir, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p.StrategiesDir(), "flip.star"), []byte(deployFlip), 0o644); err != nil {
		t.Fatal(err)
	}
	secrets, err := p.Secrets(func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	observe, _, _ := secrets.Lookup(project.KeyObserve)
	control, _, _ := secrets.Lookup(project.KeyControl)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	proc := startTapeNode(t, dir)
	client := func() *node.Client {
		c, err := node.NewClient(proc.addr, observe, control)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	snap, err := client().Snapshot(ctx, "paper", 0)
	if err != nil {
		t.Fatal(err)
	}
	mark, ok := snap.Mark("paper", "BTC-USD")
	if !ok {
		t.Fatal("the paper venue has no BTC-USD mark")
	}
	px, _ := mark.Float64()

	// The tape: 30 bars of warm-up up to the last minute, then one bar per
	// step, alternately up and down around the (still) mark, so the flip
	// strategy changes its target at every bar.
	const series = "BTC-USD@1m"
	start := time.Now().UTC().Truncate(time.Minute).Add(-30 * time.Minute)
	next := 0
	// One writer holds the store open throughout, as wicket data record
	// does while it records.
	tape, err := history.Open(p.HistoryPath())
	if err != nil {
		t.Fatal(err)
	}
	defer tape.Close()
	appendBars := func(n int) time.Time {
		t.Helper()
		b := strategy.Bars{Series: series}
		for range n {
			open, cl := px*0.999, px*1.001
			if next%2 == 1 {
				open, cl = cl, open
			}
			b.Time = append(b.Time, start.Add(time.Duration(next)*time.Minute).Unix())
			b.Open, b.High, b.Low, b.Close, b.Volume = append(b.Open, open), append(b.High, px*1.002), append(b.Low, px*0.998), append(b.Close, cl), append(b.Volume, 1)
			next++
		}
		if err := tape.Append(ctx, series, b, history.AppendOptions{Source: "binance"}); err != nil {
			t.Fatal(err)
		}
		return start.Add(time.Duration(next-1) * time.Minute)
	}
	appendBars(30)

	var dep deploy.Deployment
	spec := deploy.Spec{Strategy: "flip.star", Source: deployFlip, Series: series, Venue: "paper", Mode: deploy.ModeAuto,
		Capital: decimal.NewFromInt(1000), Warmup: 20}
	awaitDeployments(ctx, t, client())
	if err := client().DeploymentsPost(ctx, "", spec, &dep); err != nil {
		t.Fatalf("deploy: %v", err)
	}
	detail := func() (deploy.Detail, error) {
		var d deploy.Detail
		err := client().DeploymentsGet(ctx, "/"+url.PathEscape(dep.ID), nil, &d)
		return d, err
	}
	// handled waits (a bounded poll of the node's answers) until the
	// deployment has handled the bar at bar.
	handled := func(bar time.Time) deploy.Detail {
		t.Helper()
		for range 2000 {
			d, err := detail()
			if err == nil && !d.Deployment.LastBar.Before(bar) && settledAt(d, bar) {
				return d
			}
			select {
			case <-ctx.Done():
				t.Fatalf("the deployment never handled the bar of %s", bar)
			case <-time.After(10 * time.Millisecond): // a poll interval, not a synchronisation
			}
		}
		t.Fatalf("the deployment never handled the bar of %s", bar)
		return deploy.Detail{}
	}

	const kills = 32
	for k := range kills {
		switch k % 4 {
		case 0: // the bar lands and the node dies at once: mid-poll, mid-evaluation or mid-send
			appendBars(1)
		case 1: // dies as soon as the bar's decision is visible, the order perhaps in flight
			bar := appendBars(1)
			for range 2000 {
				if d, err := detail(); err == nil && !d.Deployment.LastBar.Before(bar) {
					break
				}
				time.Sleep(2 * time.Millisecond) // a poll interval, not a synchronisation
			}
		case 2: // dies after the bar was handled and its order settled
			handled(appendBars(1))
		case 3: // dies while bars land: the next start finds several new bars
			appendBars(1)
			if _, err := detail(); err != nil {
				t.Fatal(err)
			}
			appendBars(2)
		}
		proc.kill()
		if k%4 == 3 {
			appendBars(1) // lands while the node is down
		}
		proc = startTapeNode(t, dir)
		// After the restart only the latest closed bar is evaluated.
		handled(start.Add(time.Duration(next-1) * time.Minute))
	}
	last := handled(appendBars(1))
	proc.kill()

	store, err := deploy.OpenStore(filepath.Join(p.StateDir(), "deployments.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	intents, err := store.Intents(dep.ID)
	if err != nil {
		t.Fatal(err)
	}
	decisions, err := store.Decisions(dep.ID)
	if err != nil {
		t.Fatal(err)
	}
	proc = startTapeNode(t, dir)
	audit := map[string]int{} // accepted orders at the node by client order id
	var after int64
	for range 1000 {
		page, err := client().Audit(ctx, node.AuditQuery{After: after, Limit: 500})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Entries {
			if e.Outcome.Status == node.Accepted && strings.HasPrefix(e.ClientOrderID, "wd-") {
				audit[e.ClientOrderID]++
			}
		}
		if !page.More {
			break
		}
		after = page.Next
	}

	seen := map[string]bool{}
	position := decimal.Zero
	filled := 0
	for _, in := range intents {
		if seen[in.ClientOrderID] {
			t.Errorf("client order id %s journaled twice", in.ClientOrderID)
		}
		seen[in.ClientOrderID] = true
		switch in.Status {
		case deploy.IntentFilled:
			filled++
			if audit[in.ClientOrderID] != 1 {
				t.Errorf("intent %s is filled but the node took it %d times", in.ClientOrderID, audit[in.ClientOrderID])
			}
			if in.Side == "buy" {
				position = position.Add(in.Filled)
			} else {
				position = position.Sub(in.Filled)
			}
		case deploy.IntentLapsed:
			if audit[in.ClientOrderID] != 0 {
				t.Errorf("intent %s lapsed but the node took it %d times", in.ClientOrderID, audit[in.ClientOrderID])
			}
		default:
			t.Errorf("intent %s is %s at the end (%s): every intent is filled or lapsed", in.ClientOrderID, in.Status, in.Note)
		}
	}
	for cid, n := range audit {
		if !seen[cid] {
			t.Errorf("the node took %s (%d times), which no intent journaled", cid, n)
		}
		if n > 1 {
			t.Errorf("the node took %s %d times", cid, n)
		}
	}
	if !last.Deployment.Position.Equal(position) {
		t.Errorf("deployment position %s, its fills add to %s", last.Deployment.Position, position)
	}
	bars := map[time.Time]string{}
	for _, dc := range decisions {
		if prev, ok := bars[dc.Bar]; ok && prev != deploy.DecisionMissed {
			t.Errorf("the bar of %s was decided twice (%s, then %s)", dc.Bar, prev, dc.Status)
		}
		bars[dc.Bar.UTC()] = dc.Status
	}
	for i := 30; i < next; i++ {
		at := start.Add(time.Duration(i) * time.Minute)
		if _, ok := bars[at]; !ok {
			t.Errorf("the tape's bar of %s is neither decided nor recorded missed", at)
		}
	}
	if filled < kills/2 {
		t.Errorf("only %d orders filled across %d kills: the loop did not exercise sending", filled, kills)
	}
	t.Logf("%d kills, %d bars, %d intents (%d filled), %d decisions, %d orders at the node", kills, next-30, len(intents), filled, len(decisions), len(audit))
}

// settledAt says whether d's intents of the bar at bar are all settled.
func settledAt(d deploy.Detail, bar time.Time) bool {
	for _, in := range d.Intents {
		if in.Bar.Equal(bar) && (in.Status == deploy.IntentSending || in.Status == deploy.IntentPending) {
			return false
		}
	}
	return true
}
