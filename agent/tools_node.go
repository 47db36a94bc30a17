package agent

import (
	"context"
	"errors"

	"wicket/internal/project"
	"wicket/node"
)

// errNoNode is what node tools answer when the server was started without
// --node.
var errNoNode = errors.New("no node is configured for this server. The operator starts one with " +
	"`wicket node serve` (it listens on the [node] address of wicket.toml) and restarts `wicket mcp` with --node HOST:PORT")

// needNode returns the error result node tools give when they cannot reach
// a node at all, or nil.
func (tb *toolbox) needNode() *result {
	switch {
	case tb.NodeErr != nil:
		return failErr(tb.NodeErr)
	case tb.Node == nil:
		return failErr(errNoNode)
	}
	return nil
}

func (tb *toolbox) nodeTools() []*ToolSpec {
	return []*ToolSpec{{
		Name: "node_snapshot", Title: "Node snapshot", Ring: RingLiveRead,
		Hints:       Hints{ReadOnly: true, Idempotent: false, OpenWorld: flag(true)},
		Description: "Reads the trading node: trading state, each venue's kind, environment (paper, testnet, or live: real money), armed state and mark source, cash, equity and marks, positions, open orders and recent events.",
		Params: []Param{
			{Name: "venue", Type: "string", Description: "only this venue; omit for all"},
			{Name: "events", Type: "integer", Description: "how many recent events to include", Default: 20, Min: num(0), Max: num(200)},
		},
		Output: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"time":          map[string]any{"type": "string"},
				"trading_state": map[string]any{"type": "string"},
				"venues":        map[string]any{"type": "array"},
				"events":        map[string]any{"type": "array"},
			},
			"required": []string{"trading_state", "venues"},
		},
		Handle: tb.nodeSnapshot,
	}}
}

func (tb *toolbox) nodeSnapshot(ctx context.Context, c *call) *result {
	if r := tb.needNode(); r != nil {
		return r
	}
	venue, err := c.args.str("venue", "")
	if err != nil {
		return failErr(err)
	}
	if venue != "" {
		if err := project.ValidName("venue", venue); err != nil {
			return failErr(err)
		}
	}
	events, err := c.args.integer("events", 20, 0, 200)
	if err != nil {
		return failErr(err)
	}
	snap, err := tb.Node.Snapshot(ctx, venue, events)
	if err != nil {
		return fail("cannot read the node: %v", err)
	}
	if snap.Events == nil {
		snap.Events = []node.Event{} // the output schema declares an array: none is [], never null
	}
	for _, v := range snap.Venues {
		tb.venues.set(v)
	}
	return ok(snap)
}
