package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/nodetest"
)

// heartbeatNode is a paper node with [risk] heartbeat 15m on a stepping
// clock, and a client on the same clock.
func heartbeatNode(t *testing.T, every time.Duration) (*nodetest.Server, *node.Client, *testkit.Clock) {
	t.Helper()
	cfg := project.Defaults()
	cfg.Risk.Heartbeat = every
	clk := testkit.NewClock(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	n := nodetest.NewServer(t, nodetest.WithConfig(cfg), nodetest.WithClock(clk.Now))
	return n, n.Client(node.WithClock(clk.Now)), clk
}

func heartbeatOf(t *testing.T, c *node.Client) node.HeartbeatState {
	t.Helper()
	s, err := c.Snapshot(context.Background(), "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if s.Heartbeat == nil {
		t.Fatal("no heartbeat in the snapshot")
	}
	return *s.Heartbeat
}

// TestApproveTerminalRenewsTheHeartbeat: an open wicket approve terminal
// renews the node's dead man's switch with heartbeats signed by the
// operator key, one as it opens and then every third of the heartbeat,
// for an hour of the node's clock; once it closes the switch lapses
// after the heartbeat. A terminal holding another key renews nothing.
func TestApproveTerminalRenewsTheHeartbeat(t *testing.T) {
	n, c, clk := heartbeatNode(t, 15*time.Minute)
	var out bytes.Buffer
	b := &beater{node: c, key: n.OperatorKey, now: clk.Now, out: &out}
	ctx := context.Background()
	clk.Advance(time.Minute)
	beats := 0
	for range 60 {
		last := heartbeatOf(t, c).Last
		if !b.step(ctx) {
			t.Fatalf("the beater stopped: %s", out.String())
		}
		h := heartbeatOf(t, c)
		if h.Last.After(last) {
			beats++
			if !h.Last.Equal(clk.Now()) {
				t.Fatalf("a heartbeat at %s, the clock at %s", h.Last, clk.Now())
			}
		}
		n.Tick(t, 1)
		if h := heartbeatOf(t, c); h.Lapsed || clk.Now().Sub(h.Last) > 5*time.Minute {
			t.Fatalf("at %s with the terminal open: %+v", clk.Now(), h)
		}
		clk.Advance(time.Minute)
	}
	if beats != 12 { // at minutes 1, 6, ... 56
		t.Errorf("%d heartbeats in an hour, want 12 (every 5m)", beats)
	}
	if !strings.Contains(out.String(), "heartbeat 15m0s) is renewed, signed with the operator key, while this terminal is open") ||
		strings.Count(out.String(), "\n") != 1 {
		t.Errorf("the terminal said %q", out.String())
	}

	// Closed: nothing renews it.
	clk.Advance(15 * time.Minute)
	n.Tick(t, 1)
	if h := heartbeatOf(t, c); !h.Lapsed {
		t.Fatalf("15m after the terminal closed: %+v", h)
	}

	// Another key: refused by the node, said once, nothing renewed.
	n2, c2, clk2 := heartbeatNode(t, 15*time.Minute)
	out.Reset()
	forged := &beater{node: c2, key: testkit.Key(t), now: clk2.Now, out: &out}
	for range 20 {
		if !forged.step(ctx) {
			t.Fatal("the beater with a forged key stopped")
		}
		clk2.Advance(time.Minute)
	}
	n2.Tick(t, 1)
	if h := heartbeatOf(t, c2); !h.Lapsed || !h.Last.Equal(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)) {
		t.Errorf("a forged terminal's heartbeats: %+v", h)
	}
	if strings.Count(out.String(), "bad_operator_signature") != 1 {
		t.Errorf("the forged terminal said %q", out.String())
	}
}

// TestApproveTerminalWithoutASwitchSaysNothing: a node without [risk]
// heartbeat stops the beater at once, silently.
func TestApproveTerminalWithoutASwitchSaysNothing(t *testing.T) {
	n, c, clk := heartbeatNode(t, 0)
	var out bytes.Buffer
	b := &beater{node: c, key: n.OperatorKey, now: clk.Now, out: &out}
	if b.step(context.Background()) || out.Len() > 0 {
		t.Fatalf("a node without a dead man's switch: go on, said %q", out.String())
	}
}

// TestApproveSessionBeatsWhileOpen: the approve session starts its
// beater as it opens and stops it when the operator quits.
func TestApproveSessionBeatsWhileOpen(t *testing.T) {
	n, c, clk := heartbeatNode(t, 15*time.Minute)
	dir, err := os.MkdirTemp("", "apphb")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	clk.Advance(time.Minute)
	in := make(chan string)
	out := &lockedWriter{w: &bytes.Buffer{}}
	ticks := make(chan time.Time)
	a := &approver{dir: dir, key: n.OperatorKey, in: in, out: out, poll: time.Hour, now: clk.Now,
		beat: &beater{node: c, key: n.OperatorKey, now: clk.Now, ticks: ticks, out: out}}
	done := make(chan error, 1)
	go func() { done <- a.run(context.Background()) }()
	testkit.WaitFor(t, "the heartbeat of the opening terminal", 10*time.Second, func() (bool, string) {
		h := heartbeatOf(t, c)
		return h.Last.Equal(clk.Now()), h.Last.String()
	})
	in <- "q"
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	select {
	case ticks <- time.Time{}:
		t.Fatal("the beater still runs after the session quit")
	default:
	}
}
