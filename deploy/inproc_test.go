package deploy

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/node"
	"wicket/node/nodetest"
)

// TestDeployInProcess: deployments whose node connection is the node's
// in-process server.Local (as wicket node serve wires them) trade through
// the node's write path: an order fills and the node's audit trail names
// the control key and the deployment; an order the node's guardrail
// refuses (the venue's position limit, which two deployments together
// exceed) is refused in process too, booked rejected with the node's
// reason, and nothing reaches the venue.
func TestDeployInProcess(t *testing.T) {
	cfg := venueConfig()
	cfg.Venues[0].Marks = "binance"
	cfg.Guardrail.MaxPositionNotional = decimal.NewFromInt(800)
	g := newRig(t, nodetest.WithConfig(cfg))
	g.conn = g.ns.Local(node.KeyControl)
	g.restart()
	spec := Spec{Strategy: "flip.star", Source: flip, Capital: decimal.NewFromInt(1000), Warmup: 60}
	first, second := g.deploy(spec), g.deploy(spec)
	bars := path(100, 101)
	g.clk.Set(bars[1].Time.Add(time.Minute))
	g.mkt.set(decimal.NewFromFloat(bars[1].Close))
	g.ns.Tick(t, 1)
	for _, id := range []string{first.ID, second.ID} {
		if err := g.r.Step(ctxT(t), id, bars[1]); err != nil {
			t.Fatal(err)
		}
	}

	filled, refused := g.intents(first.ID), g.intents(second.ID)
	if len(filled) != 1 || filled[0].Status != IntentFilled {
		t.Fatalf("first deployment's intents: %+v, want one filled", filled)
	}
	if len(refused) != 1 || refused[0].Status != IntentRejected || !strings.Contains(refused[0].Note, "position_notional") {
		t.Fatalf("second deployment's intents: %+v, want one rejected by the node's position_notional", refused)
	}
	if n := g.nodeOrders(refused[0].ClientOrderID); n != 0 {
		t.Fatalf("the refused order reached the venue %d times", n)
	}
	audit := g.ns.Client(node.WithClock(g.clk.Now))
	for _, in := range []Intent{filled[0], refused[0]} {
		page, err := audit.Audit(context.Background(), node.AuditQuery{ClientOrderID: in.ClientOrderID})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Entries) != 1 {
			t.Fatalf("%s: %d audit entries, want 1", in.ClientOrderID, len(page.Entries))
		}
		e := page.Entries[0]
		if e.KeyID != node.KeyControl || !strings.Contains(e.Reason, "deployment "+in.Deployment) {
			t.Errorf("%s: audit entry by key %q with reason %q, want the control key and the deployment", in.ClientOrderID, e.KeyID, e.Reason)
		}
		want := node.Accepted
		if in.Status == IntentRejected {
			want = node.Rejected
		}
		if e.Outcome.Status != want {
			t.Errorf("%s: audit outcome %s, want %s", in.ClientOrderID, e.Outcome.Status, want)
		}
	}
}
