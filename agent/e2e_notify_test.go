package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"wicket/agent"
	"wicket/node/nodetest"
)

// notes collects a client's notifications.
type notes struct {
	mu  sync.Mutex
	got []mcp.JSONRPCNotification
}

func (n *notes) add(x mcp.JSONRPCNotification) { n.mu.Lock(); n.got = append(n.got, x); n.mu.Unlock() }

// wait returns the first notification with method whose params mention
// text, or fails.
func (n *notes) wait(t *testing.T, method, text string) mcp.JSONRPCNotification {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		n.mu.Lock()
		for _, x := range n.got {
			b, _ := json.Marshal(x.Params)
			if x.Method == method && strings.Contains(string(b), text) {
				n.mu.Unlock()
				return x
			}
		}
		n.mu.Unlock()
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no %s mentioning %q", method, text)
	return mcp.JSONRPCNotification{}
}

// TestSnapshotSubscriptionAndNodeLogs: a subscriber to
// wicket://node/snapshot hears notifications/resources/updated when an
// order changes the node, and a client that set a log level hears
// notifications/message when the node is lost.
func TestSnapshotSubscriptionAndNodeLogs(t *testing.T) {
	t.Run("stdio", func(t *testing.T) {
		n := nodetest.NewServer(t)
		subscriptionAndLogs(t, n, startMCP(t, nodeEnv(n), newProject(t), "--node", n.Addr))
	})
	t.Run("http", func(t *testing.T) {
		n := nodetest.NewServer(t)
		h := startHTTP(t, nodeEnv(n), newProject(t), "--no-auth", "--node", n.Addr)
		// Notifications outside a call arrive on the session's GET stream.
		//lint:ignore SA1019 deprecated only from protocol 2026-07-28; this session speaks 2025-06-18, where the GET stream is current
		subscriptionAndLogs(t, n, h.connect(t, "", transport.WithContinuousListening()))
	})
}

func subscriptionAndLogs(t *testing.T, n *nodetest.Server, s *session) {
	var got notes
	s.OnNotification(got.add)
	ctx := context.Background()
	sub := mcp.SubscribeRequest{}
	sub.Params.URI = "wicket://node/snapshot"
	//lint:ignore SA1019 deprecated only from protocol 2026-07-28; this session speaks 2025-06-18, where it is current
	if err := s.Subscribe(ctx, sub); err != nil {
		t.Fatal(err)
	}
	lvl := mcp.SetLevelRequest{}
	lvl.Params.Level = mcp.LoggingLevelInfo
	//lint:ignore SA1019 deprecated only from protocol 2026-07-28; this session speaks 2025-06-18, where it is current
	if err := s.SetLevel(ctx, lvl); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond) // the watch has seen the node once

	order := `"venue":"paper","symbol":"BTC-USD","side":"buy","type":"market","quantity":"0.1"`
	prev := object(t, s.call(t, "submit_order", "{"+order+"}"))
	done := object(t, s.call(t, "submit_order", "{"+order+`,"confirm":true,"preview_token":"`+prev["preview_token"].(string)+`"}`))
	if done["status"] != "accepted" {
		t.Fatalf("order: %v", done)
	}
	got.wait(t, string(mcp.MethodNotificationResourceUpdated), "wicket://node/snapshot")

	n.Close()
	msg := got.wait(t, "notifications/message", "unreachable")
	if b, _ := json.Marshal(msg.Params); !strings.Contains(string(b), `"level":"warning"`) {
		t.Errorf("node lost: %s", b)
	}
}

// TestHTTPGracefulShutdown: SIGTERM lets a call in flight finish and
// answer, then the server exits cleanly.
func TestHTTPGracefulShutdown(t *testing.T) {
	proj := newProject(t)
	runWicket(t, nil, "--project", proj, "data", "seed-demo")
	runWicket(t, nil, "--project", proj, "strategy", "new", "mine", "--from", "sma_cross_bar") // on_bar: slow enough to be in flight
	tok := addCaller(t, proj, "desk", agent.ProfileFull)
	h := startHTTP(t, nil, proj)
	s := h.connect(t, tok)
	type answer struct {
		res *mcp.CallToolResult
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		req := mcp.CallToolRequest{}
		req.Params.Name = "run_sweep"
		req.Params.Arguments = json.RawMessage(`{"name":"mine","series":"BTC-USD@1h","grid":{"fast":{"from":2,"to":11},"slow":{"from":32,"to":41}}}`)
		res, err := s.CallTool(context.Background(), req)
		ch <- answer{res, err}
	}()
	time.Sleep(500 * time.Millisecond)
	select {
	case a := <-ch:
		t.Fatalf("the sweep finished before SIGTERM (%v); give it a larger grid", a.err)
	default:
	}
	signalled := time.Now()
	if err := h.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case a := <-ch:
		if a.err != nil || a.res.IsError {
			t.Fatalf("the call in flight did not finish: %v %v", a.err, a.res)
		}
		if m := object(t, a.res); m["evaluated"] == nil || m["partial"] != false {
			t.Errorf("sweep answer: %v", m)
		}
		t.Logf("the sweep answered %v after SIGTERM", time.Since(signalled))
	case <-time.After(60 * time.Second):
		t.Fatal("the call in flight never answered")
	}
	exited := make(chan error, 1)
	go func() { exited <- h.cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Error("the server did not exit after SIGTERM")
	}
}

// TestLogLevelFilters: a client whose level is error does not hear the
// node-lost warning (the level filters notifications/message), on stdio
// and over HTTP; one at warning does.
func TestLogLevelFilters(t *testing.T) {
	for _, tr := range []string{"stdio", "http"} {
		t.Run(tr, func(t *testing.T) {
			n := nodetest.NewServer(t)
			open := func() *session {
				if tr == "stdio" {
					return startMCP(t, nodeEnv(n), newProject(t), "--node", n.Addr)
				}
				h := startHTTP(t, nodeEnv(n), newProject(t), "--no-auth", "--node", n.Addr)
				//lint:ignore SA1019 deprecated only from protocol 2026-07-28; this session speaks 2025-06-18, where the GET stream is current
				return h.connect(t, "", transport.WithContinuousListening())
			}
			quiet, loud := open(), open()
			var heardQuiet, heardLoud notes
			quiet.OnNotification(heardQuiet.add)
			loud.OnNotification(heardLoud.add)
			for s, level := range map[*session]mcp.LoggingLevel{quiet: mcp.LoggingLevelError, loud: mcp.LoggingLevelWarning} {
				lvl := mcp.SetLevelRequest{}
				lvl.Params.Level = level
				//lint:ignore SA1019 deprecated only from protocol 2026-07-28; this session speaks 2025-06-18, where it is current
				if err := s.SetLevel(context.Background(), lvl); err != nil {
					t.Fatal(err)
				}
			}
			time.Sleep(1500 * time.Millisecond) // both watches have seen the node
			n.Close()
			heardLoud.wait(t, "notifications/message", "unreachable")
			time.Sleep(1500 * time.Millisecond) // the quiet one polled as often
			heardQuiet.mu.Lock()
			defer heardQuiet.mu.Unlock()
			for _, x := range heardQuiet.got {
				if x.Method == "notifications/message" {
					b, _ := json.Marshal(x.Params)
					t.Errorf("a client at level error heard %s", b)
				}
			}
		})
	}
}
