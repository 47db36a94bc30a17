package agent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"wicket/internal/project"
	"wicket/node/command"
	"wicket/node/nodetest"
)

// TestOrdersBelongToTheirCaller is issue 44's item 8: any session of the
// HTTP server could modify another session's bracket legs. A caller
// modifies and cancels only the orders it placed; the operator's own
// tools (the node client, wicket trade) are not scoped.
func TestOrdersBelongToTheirCaller(t *testing.T) {
	n := nodetest.NewServer(t)
	owners := newOrderOwners() // as NewHTTP shares it among its sessions
	session := func(caller string) *client.Client {
		s, err := New(Options{Profile: ProfileFull, NewID: uuid.NewString, Caller: caller, owners: owners},
			Backends{Config: project.Defaults(), Node: n.Client()})
		if err != nil {
			t.Fatal(err)
		}
		return inProcessClient(t, s)
	}
	alice, bob := session("alice"), session("bob")
	call := func(c *client.Client, tool, args string) (map[string]any, string, bool) {
		t.Helper()
		req := mcp.CallToolRequest{}
		req.Params.Name = tool
		req.Params.Arguments = json.RawMessage(args)
		res, err := c.CallTool(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		txt := res.Content[0].(mcp.TextContent).Text
		var m map[string]any
		_ = json.Unmarshal([]byte(txt), &m)
		return m, txt, res.IsError
	}
	write := func(c *client.Client, tool, args string) (map[string]any, string, bool) {
		t.Helper()
		m, txt, isErr := call(c, tool, args)
		if isErr || m["status"] != "preview" {
			return m, txt, isErr
		}
		return call(c, tool, strings.TrimSuffix(args, "}")+`,"confirm":true,"preview_token":"`+m["preview_token"].(string)+`"}`)
	}
	placed, txt, isErr := write(alice, "submit_order", `{"venue":"paper","symbol":"BTC-USD","side":"buy","type":"bracket","quantity":"1","price":"99","take_profit":"104","stop_price":"96"}`)
	if isErr || placed["status"] != "accepted" {
		t.Fatalf("alice's bracket: %s", txt)
	}
	entry := placed["order_id"].(string)
	snap, err := n.Client().Snapshot(context.Background(), "paper", 0)
	if err != nil {
		t.Fatal(err)
	}
	var stop string
	for _, v := range snap.Venues {
		for _, o := range v.OpenOrders {
			if o.Parent == entry && strings.HasSuffix(o.ClientOrderID, command.StopLegSuffix) {
				stop = o.ID
			}
		}
	}
	if stop == "" {
		t.Fatalf("no stop leg of %s in %+v", entry, snap.Venues)
	}
	for _, tc := range []struct{ tool, args string }{
		{"modify", `{"venue":"paper","order_id":"` + stop + `","stop_price":"90"}`},
		{"cancel_order", `{"venue":"paper","order_id":"` + stop + `"}`},
		{"cancel_order", `{"venue":"paper","order_id":"` + entry + `"}`},
		{"cancel_order", `{"venue":"paper","client_order_id":"` + placed["client_order_id"].(string) + command.StopLegSuffix + `"}`},
	} {
		if _, txt, isErr := call(bob, tc.tool, tc.args); !isErr || !strings.Contains(txt, "placed by another caller's session") {
			t.Errorf("bob's %s %s: %s; want a refusal", tc.tool, tc.args, txt)
		}
	}
	if m, txt, isErr := write(alice, "modify", `{"venue":"paper","order_id":"`+stop+`","stop_price":"90"}`); isErr || m["status"] != "accepted" {
		t.Errorf("alice modifies her own stop leg: %s", txt)
	}
	// Still hers after her own write.
	if _, txt, isErr := call(bob, "modify", `{"venue":"paper","order_id":"`+stop+`","stop_price":"91"}`); !isErr || !strings.Contains(txt, "another caller") {
		t.Errorf("bob after alice's modify: %s", txt)
	}
	mine, txt, isErr := write(bob, "submit_order", `{"venue":"paper","symbol":"BTC-USD","side":"buy","type":"limit","quantity":"1","price":"98"}`)
	if isErr || mine["status"] != "accepted" {
		t.Fatalf("bob's order: %s", txt)
	}
	if m, txt, isErr := write(bob, "cancel_order", `{"venue":"paper","order_id":"`+mine["order_id"].(string)+`"}`); isErr || m["status"] != "accepted" {
		t.Errorf("bob cancels his own order: %s", txt)
	}
}
