package deploy

import (
	"context"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/nodetest"
)

// TestAgentEnvelopeHoldsTheAgentsDeployments: a deployment created with
// the agent key is the agent's at the node: its orders are held to the
// agent's envelope ([agent.envelope.paper] max_notional) and refused
// past it; the same strategy deployed with the control key trades.
func TestAgentEnvelopeHoldsTheAgentsDeployments(t *testing.T) {
	cfg := venueConfig()
	cfg.Venues[0].Marks = "binance"
	cfg.Agent.Envelope = map[string]project.AgentEnvelope{"paper": {MaxNotional: testkit.D("10")}}
	h := NewHandler()
	g := newRig(t, nodetest.WithConfig(cfg), nodetest.WithDeployments(h))
	h.Attach(g.r)
	spec := Spec{Strategy: "sma_half.star", Source: smaHalf, Series: symbol + "@1m", Venue: "paper", Mode: ModeAuto,
		Capital: decimal.NewFromInt(10000), Warmup: 40}
	var agents Deployment
	if err := g.ns.AgentClient(node.WithClock(g.clk.Now)).DeploymentsPost(context.Background(), "", spec, &agents); err != nil || agents.CreatedBy != node.KeyAgent {
		t.Fatalf("create with the agent key: %+v %v", agents, err)
	}
	persons := g.deploy(Spec{})
	bars := path(vee()...)
	traded := -1
	for i := range bars {
		g.step(agents.ID, bars, i)
		g.step(persons.ID, bars, i)
		if len(g.intents(persons.ID)) > 0 {
			traded = i
			break
		}
	}
	if traded < 0 {
		t.Fatal("the fixture never traded")
	}
	if in := g.intents(persons.ID); in[0].Status != IntentFilled {
		t.Fatalf("the person's deployment: %+v", in[0])
	}
	in := g.intents(agents.ID)
	if len(in) != 1 || in[0].Status != IntentRejected || !strings.Contains(in[0].Note, "past its envelope's max_notional 10") {
		t.Fatalf("the agent's deployment: %+v", in)
	}
}
