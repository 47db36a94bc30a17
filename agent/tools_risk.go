package agent

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"wicket/node"
)

// risk_status, and the risk controls' notices on the listen streams.
//
// risk_status reads the node's risk controls (GET /v1/risk): every limit
// with its headroom, the throttles and their windows, the breakers, the
// kill switch and the dead man's switch. It is a read, served in the
// read-only profile too; no tool reaches the operator's acts (kill,
// resume-trading, heartbeat, reset-throttle), which need the operator key
// the agent's process never holds.

// riskReader is what risk_status needs of the node (*node.Client has it).
type riskReader interface {
	Risk(ctx context.Context) (node.RiskStatus, error)
}

func (tb *toolbox) riskTools() []*toolSpec {
	return []*toolSpec{{
		Name: "risk_status", Title: "Risk status", Ring: ringLiveRead,
		Hints:       hints{ReadOnly: true, Idempotent: false, OpenWorld: flag(true)},
		Description: "Reads the node's risk controls: limits with headroom, throttles, breakers, the kill and dead man's switches.",
		Output:      riskSchema,
		Handle:      tb.riskStatus,
	}}
}

// riskSchema is risk_status's outputSchema, derived from the node's type.
var riskSchema = outputSchemaFor[node.RiskStatus]()

func (tb *toolbox) riskStatus(ctx context.Context, c *call) *result {
	if r := tb.needNode(); r != nil {
		return r
	}
	if _, err := decodeArgs(c.args, &struct{}{}); err != nil {
		return failErr(err)
	}
	rr, has := tb.Node.(riskReader)
	if !has {
		return fail("this node connection cannot read the risk controls")
	}
	st, err := rr.Risk(ctx)
	if err != nil {
		return fail("cannot read the node's risk controls: %v", err)
	}
	return ok(st)
}

// riskSeen is what the node watch last saw of the kill switch and the dead
// man's switch, so a change is a notice on every listen stream (at the
// watch's pace: within a second).
type riskSeen struct {
	mu     sync.Mutex
	seen   bool
	killed bool
	lapsed bool
	losses map[string]bool // stream-loss notes already told
}

// notice announces a kill, its end, or the dead man's switch tripping,
// as snap shows them (and a kill already standing when first seen).
func (r *riskSeen) notice(s *Server, snap *node.Snapshot) {
	killed := snap.Kill != nil
	lapsed := snap.Heartbeat != nil && snap.Heartbeat.Lapsed
	r.mu.Lock()
	was, wasKilled, wasLapsed := r.seen, r.killed, r.lapsed
	r.seen, r.killed, r.lapsed = true, killed, lapsed
	r.mu.Unlock()
	switch {
	case killed && (!was || !wasKilled):
		s.announce(mcp.LoggingLevelAlert, "node", fmt.Sprintf("the node was killed by its operator at %s (%s): every working order canceled, deployments paused, every write refused until the operator resumes trading",
			snap.Kill.Since.UTC().Format(time.RFC3339), snap.Kill.Reason))
	case !killed && was && wasKilled:
		s.announce(mcp.LoggingLevelNotice, "node", fmt.Sprintf("the operator ended the kill: the node trades again (trading state %s)", snap.TradingState))
	}
	if lapsed && (!was || !wasLapsed) {
		s.announce(mcp.LoggingLevelAlert, "node", snap.Heartbeat.Note)
	}
	r.mu.Lock()
	var fresh []string
	now := map[string]bool{}
	for _, n := range snap.StreamLoss {
		now[n] = true
		if !r.losses[n] {
			fresh = append(fresh, n)
		}
	}
	r.losses = now
	r.mu.Unlock()
	for _, n := range fresh {
		s.announce(mcp.LoggingLevelAlert, "node", n)
	}
}
