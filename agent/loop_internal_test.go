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

	"wicket/agent/budget"
	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node/nodetest"
)

// stateWriter previews and confirms set_trading_state through c; it
// returns the confirm's text and whether it was an error.
func stateWriter(t *testing.T, c *client.Client) func(state string) (string, bool) {
	return func(state string) (string, bool) {
		t.Helper()
		call := func(args string) (string, bool) {
			req := mcp.CallToolRequest{}
			req.Params.Name = "set_trading_state"
			req.Params.Arguments = json.RawMessage(args)
			res, err := c.CallTool(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			return res.Content[0].(mcp.TextContent).Text, res.IsError
		}
		txt, isErr := call(`{"state":"` + state + `"}`)
		var m map[string]any
		if isErr || json.Unmarshal([]byte(txt), &m) != nil {
			t.Fatalf("preview: %s", txt)
		}
		return call(`{"state":"` + state + `","confirm":true,"preview_token":"` + m["preview_token"].(string) + `"}`)
	}
}

// TestBudgetsArePerSession: each server session owns its budget (over
// HTTP every caller's session is a Server of its own), and the per-minute
// window reads the injected clock.
func TestBudgetsArePerSession(t *testing.T) {
	n := nodetest.NewServer(t)
	clock := testkit.NewClock(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	mk := func() func(string) (string, bool) {
		s, err := New(Options{Profile: ProfileFull, Now: clock.Now, NewID: uuid.NewString,
			Loop: Loop{Budget: budget.Limits{MaxWrites: 3, MaxPerMinute: 2}}},
			Backends{Config: project.Defaults(), Node: n.Client()})
		if err != nil {
			t.Fatal(err)
		}
		return stateWriter(t, inProcessClient(t, s))
	}
	a, b := mk(), mk()
	for i, st := range []string{"reduce_only", "active"} {
		if txt, isErr := a(st); isErr {
			t.Fatalf("session A write %d: %s", i+1, txt)
		}
	}
	txt, isErr := a("reduce_only")
	if !isErr || !strings.HasPrefix(txt, "REFUSED [budget] max-writes-per-minute: 2 of 2") || !strings.Contains(txt, "next one fits in 1m0s") {
		t.Fatalf("session A third write in the minute: %s", txt)
	}
	// Session B is untouched by A's spending.
	if txt, isErr := b("reduce_only"); isErr {
		t.Fatalf("session B: %s", txt)
	}
	clock.Advance(time.Minute)
	if txt, isErr := a("active"); isErr {
		t.Fatalf("session A after the minute: %s", txt)
	}
	if txt, isErr := a("reduce_only"); !isErr || !strings.HasPrefix(txt, "REFUSED [budget] max-writes: 3 of 3") {
		t.Fatalf("session A fourth write: %s", txt)
	}
}
