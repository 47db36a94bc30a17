package deploy

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"wicket/node"
	"wicket/node/nodetest"
)

// TestKillPausesEveryDeploymentAndNothingIsSentAfter: three deployments
// (two auto, one propose) trade on a node that mounts their surface; the
// operator's kill pauses all three through it (named in the kill's
// report) and no order is sent after it, whatever the bars say.
func TestKillPausesEveryDeploymentAndNothingIsSentAfter(t *testing.T) {
	h := NewHandler()
	g := newRig(t, nodetest.WithDeployments(h))
	h.Attach(g.r)
	a, b := g.deploy(Spec{}), g.deploy(Spec{})
	p := g.deploy(Spec{Mode: ModePropose})
	bars := path(vee()...)
	for i := range 40 {
		g.step(a.ID, bars, i)
		g.step(b.ID, bars, i)
		g.step(p.ID, bars, i)
	}
	before := len(g.intents(a.ID)) + len(g.intents(b.ID))
	rep, err := g.ns.Client(node.WithClock(g.clk.Now)).Kill(context.Background(), false, "test", g.ns.OperatorKey)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{a.ID, b.ID, p.ID}
	slices.Sort(want)
	if !slices.Equal(rep.Paused, want) {
		t.Fatalf("the kill paused %v, want %v", rep.Paused, want)
	}
	for _, id := range want {
		if d, _ := g.r.Get(id); d.State != StatePaused || !strings.Contains(d.Reason, "killed by an operator") {
			t.Errorf("%s: %s (%s)", id, d.State, d.Reason)
		}
	}
	for i := 40; i < len(bars); i++ {
		g.step(a.ID, bars, i)
		g.step(b.ID, bars, i)
	}
	if after := len(g.intents(a.ID)) + len(g.intents(b.ID)); after != before {
		t.Fatalf("%d intents after the kill, %d before", after, before)
	}
}

// TestDeadMansSwitchPausesAutoDeploymentsOnly: without an operator's
// heartbeat for [risk] heartbeat, the node's next mark step pauses the
// auto deployment and leaves the propose one (a person approves each of
// its orders) running.
func TestDeadMansSwitchPausesAutoDeploymentsOnly(t *testing.T) {
	cfg := venueConfig()
	cfg.Venues[0].Marks = "binance"
	cfg.Risk.Heartbeat = 2 * time.Minute
	h := NewHandler()
	g := newRig(t, nodetest.WithConfig(cfg), nodetest.WithDeployments(h))
	h.Attach(g.r)
	auto := g.deploy(Spec{})
	prop := g.deploy(Spec{Mode: ModePropose})
	g.clk.Advance(3 * time.Minute)
	g.ns.Tick(t, 1) // returns once the switch has paused what it pauses
	if d, _ := g.r.Get(auto.ID); d.State != StatePaused || !strings.Contains(d.Reason, "dead man's switch") {
		t.Fatalf("the auto deployment is %s (%s) after the heartbeat lapsed", d.State, d.Reason)
	}
	if d, _ := g.r.Get(prop.ID); d.State != StateRunning {
		t.Fatalf("the propose deployment is %s", d.State)
	}
	s, err := g.ns.Client(node.WithClock(g.clk.Now)).Snapshot(context.Background(), "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if s.Heartbeat == nil || !s.Heartbeat.Lapsed {
		t.Fatalf("snapshot heartbeat %+v", s.Heartbeat)
	}
}

// TestPauseAllByVenue: a stream loss pauses the auto deployments of its
// venue only.
func TestPauseAllByVenue(t *testing.T) {
	g := newRig(t)
	d := g.deploy(Spec{})
	if got := g.r.PauseAll("stream loss", true, "elsewhere"); len(got) != 0 {
		t.Fatalf("another venue's loss paused %v", got)
	}
	got := g.r.PauseAll("stream loss", true, "paper")
	if len(got) != 1 || got[0].ID != d.ID || got[0].Venue != "paper" {
		t.Fatalf("paper's loss paused %+v", got)
	}
	if dep, _ := g.r.Get(d.ID); dep.State != StatePaused || dep.Reason != "stream loss" {
		t.Fatalf("%s (%s)", dep.State, dep.Reason)
	}
}
