package agent

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/mcp"

	"wicket/internal/project"
	"wicket/node/nodetest"
)

// TestNodeSnapshotEvents: events: 0 gives an empty list (the output schema
// declares an array, so never null), and a positive count bounds the list.
func TestNodeSnapshotEvents(t *testing.T) {
	n := nodetest.NewServer(t)
	s, err := New(Options{Profile: ProfileFull, NewID: uuid.NewString}, Backends{Config: project.Defaults(), Node: n.Client()})
	if err != nil {
		t.Fatal(err)
	}
	c := inProcessClient(t, s)
	ctx := context.Background()
	for _, tc := range []struct {
		args string
		max  int
	}{{`{"events":0}`, 0}, {`{"events":1}`, 1}, {`{}`, defaultSnapshotEvents}} {
		req := mcp.CallToolRequest{}
		req.Params.Name = "node_snapshot"
		req.Params.Arguments = json.RawMessage(tc.args)
		res, err := c.CallTool(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		txt := res.Content[0].(mcp.TextContent).Text
		raw, _ := json.Marshal(res.StructuredContent) // the text is a summary (compact.go)
		var snap struct {
			Events *[]json.RawMessage `json:"events"`
		}
		if res.IsError || json.Unmarshal(raw, &snap) != nil {
			t.Fatalf("node_snapshot %s: %s", tc.args, txt)
		}
		if snap.Events == nil || len(*snap.Events) > tc.max {
			t.Errorf("node_snapshot %s: events %v, want a list of at most %d: %.300s", tc.args, snap.Events, tc.max, txt)
		}
	}
}
