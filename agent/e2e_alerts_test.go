package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"wicket/node/alert"
	"wicket/node/nodetest"
)

// TestNodeAlertsReachTheSession: an alert the node raises (here a lost
// venue stream and a statement mismatch) reaches an MCP session that
// listens, as a notice of logger "alert", each once, and no link rides
// along.
func TestNodeAlertsReachTheSession(t *testing.T) {
	d := alert.NewDispatcher(alert.Options{})
	t.Cleanup(d.Close)
	n := nodetest.NewServer(t, nodetest.WithAlerts(d, nil))
	s := startMCP(t, nodeEnv(n), newProject(t), "--node", n.Addr)
	var got notes
	s.OnNotification(got.add)
	first, _ := alert.New(alert.StreamLost, "a1", time.Now(), "bn", "venue bn: its order stream is down")
	first.Link = "https://approve.example.test/a/secret"
	d.Raise(first)
	lvl := mcp.SetLevelRequest{}
	lvl.Params.Level = mcp.LoggingLevelInfo
	//lint:ignore SA1019 deprecated only from protocol 2026-07-28; this session speaks 2025-06-18, where it is current
	if err := s.SetLevel(context.Background(), lvl); err != nil {
		t.Fatal(err)
	}
	msg := got.wait(t, "notifications/message", "its order stream is down")
	b, _ := json.Marshal(msg.Params)
	if !strings.Contains(string(b), `"logger":"alert"`) || !strings.Contains(string(b), "stream_lost") || strings.Contains(string(b), "secret") {
		t.Errorf("alert notice %s", b)
	}
	second, _ := alert.New(alert.StatementMismatch, "a2", time.Now(), "bn", "statement of 2026-12-02: 2 mismatch(es)")
	d.Raise(second)
	got.wait(t, "notifications/message", "2 mismatch(es)")
	got.mu.Lock()
	defer got.mu.Unlock()
	heard := 0
	for _, x := range got.got {
		if b, _ := json.Marshal(x.Params); strings.Contains(string(b), "its order stream is down") {
			heard++
		}
	}
	if heard != 1 {
		t.Errorf("the stream alert was heard %d times", heard)
	}
}
