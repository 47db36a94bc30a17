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

// snapshotArgs are node_snapshot's arguments, declared once (see declare.go).
type snapshotArgs struct {
	Venue  string `json:"venue" desc:"only this venue; omit for all"`
	Events int    `json:"events" arg:"default=$defaultSnapshotEvents,min=0,max=200" desc:"recent events to include"`
}

func (tb *toolbox) nodeTools() []*toolSpec {
	return []*toolSpec{{
		Name: "node_snapshot", Title: "Node snapshot", Ring: ringLiveRead,
		Hints:       hints{ReadOnly: true, Idempotent: false, OpenWorld: flag(true)},
		Description: "Reads the trading node: state, venues (live is real money), cash, equity, positions, orders, deployments, events.",
		Params:      paramsOf[snapshotArgs](),
		Output:      snapshotOutput, // tools_deploy.go: with the deployments
		Handle:      tb.nodeSnapshot,
	}}
}

func (tb *toolbox) nodeSnapshot(ctx context.Context, c *call) *result {
	if r := tb.needNode(); r != nil {
		return r
	}
	var in snapshotArgs
	if _, err := decodeArgs(c.args, &in); err != nil {
		return failErr(err)
	}
	venue, events := in.Venue, in.Events
	if venue != "" {
		if err := project.ValidName("venue", venue); err != nil {
			return failErr(err)
		}
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
	ans := tb.withDeployments(ctx, snap) // tools_deploy.go
	out, err := compactSnapshot(ans)     // compact.go
	if err != nil {
		return fail("cannot encode the snapshot: %v", err)
	}
	r := ok(out)
	r.summary = snapshotSummary(snap, len(ans.Deployments))
	return r
}
