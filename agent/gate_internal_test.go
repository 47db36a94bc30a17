package agent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node/nodetest"
)

// TestPreviewExpiry uses an injected clock in-process: a token confirms at
// 59.999 s and is refused as expired at 60 s, with nothing sent.
func TestPreviewExpiry(t *testing.T) {
	n := nodetest.NewServer(t)
	clock := testkit.NewClock(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	recs := &recorder{}
	s, err := New(Options{Profile: ProfileFull, Now: clock.Now, NewID: uuid.NewString, Trace: recs},
		Backends{Config: project.Defaults(), Node: n.Client()})
	if err != nil {
		t.Fatal(err)
	}
	c := inProcessClient(t, s)
	ctx := context.Background()
	call := func(args string) (map[string]any, string, bool) {
		req := mcp.CallToolRequest{}
		req.Params.Name = "set_trading_state"
		req.Params.Arguments = json.RawMessage(args)
		res, err := c.CallTool(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		txt := res.Content[0].(mcp.TextContent).Text
		var m map[string]any
		_ = json.Unmarshal([]byte(txt), &m)
		return m, txt, res.IsError
	}
	preview := func() string {
		m, txt, isErr := call(`{"state":"reduce_only"}`)
		if isErr || m["status"] != "preview" {
			t.Fatalf("preview: %s", txt)
		}
		return m["preview_token"].(string)
	}

	tok := preview()
	clock.Advance(60 * time.Second)
	if _, txt, isErr := call(`{"state":"reduce_only","confirm":true,"preview_token":"` + tok + `"}`); !isErr || !strings.Contains(txt, "expired") {
		t.Fatalf("confirm at 60 s: %s", txt)
	}
	snap, err := n.Client().Snapshot(ctx, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if snap.TradingState != "active" {
		t.Fatalf("an expired token changed the trading state to %s", snap.TradingState)
	}

	tok = preview()
	clock.Advance(59999 * time.Millisecond)
	m, txt, isErr := call(`{"state":"reduce_only","confirm":true,"preview_token":"` + tok + `"}`)
	if isErr || m["status"] != "accepted" {
		t.Fatalf("confirm at 59.999 s: %s", txt)
	}
	if snap, _ = n.Client().Snapshot(ctx, "", 0); snap.TradingState != "reduce_only" {
		t.Fatalf("trading state %s after a confirmed write", snap.TradingState)
	}
	var verdicts []string
	for _, e := range recs.all() {
		verdicts = append(verdicts, e.Verdict.String())
	}
	if got := strings.Join(verdicts, " "); got != "preview refused preview ok" {
		t.Errorf("trace verdicts %q", got)
	}
}

// inProcessClient is an initialized mcp-go client talking to s in-process
// (no stdio): for tests that need an injected clock or a fake backend.
func inProcessClient(t *testing.T, s *Server) *client.Client {
	t.Helper()
	c, err := client.NewInProcessClient(s.mcp)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
