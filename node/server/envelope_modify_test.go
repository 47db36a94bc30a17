package server_test

import (
	"context"
	"testing"

	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/command"
	"wicket/node/nodetest"
	"wicket/node/server"
)

// TestAgentEnvelopeChecksAModifyThatRaises: a modify of the agent's
// resting order that raises its quantity past max_notional is refused
// (agent_envelope) with the very detail a new order of that size gets,
// whoever sends it (the fills would be the agent's); a modify that lowers
// it passes, and one that raises it within the envelope passes too.
func TestAgentEnvelopeChecksAModifyThatRaises(t *testing.T) {
	cfg := project.Defaults()
	v := &cfg.Venues[0]
	v.Marks, v.Cash = "binance", decimal.NewFromInt(100000)
	cfg.Agent.Envelope = map[string]project.AgentEnvelope{"paper": {MaxNotional: testkit.D("1500")}}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	feed := &settablePrice{}
	feed.set("100")
	n := nodetest.NewServer(t, nodetest.WithConfig(cfg), nodetest.WithMarks(map[string]server.MarkFeed{"paper": feed}))
	agent, person := n.AgentClient(), n.Client()
	n.Tick(t, 1)

	fresh := rejected(t, agent, order("paper", "BTC-USD", command.Buy, command.Limit, "16", "95"), "agent_envelope")
	rest := accepted(t, agent, order("paper", "BTC-USD", command.Buy, command.Limit, "10", "95"))
	modify := func(qty, price string) command.Command {
		c := command.Command{Verb: command.Modify, Venue: "paper", ClientOrderID: rest.ClientOrderID}
		if qty != "" {
			c.Quantity = testkit.D(qty)
		}
		if price != "" {
			c.Price = testkit.D(price)
		}
		return c
	}
	out := rejected(t, agent, modify("16", ""), "agent_envelope")
	if out.Reason != fresh.Reason {
		t.Errorf("a modify to 16 is refused with\n%q\nwant the new order's\n%q", out.Reason, fresh.Reason)
	}
	if out := rejected(t, person, modify("16", ""), "agent_envelope"); out.Reason != fresh.Reason {
		t.Errorf("a person's modify of the agent's order: %q", out.Reason)
	}
	accepted(t, agent, modify("8", ""))    // lowers it
	accepted(t, agent, modify("15", "96")) // raises it to 1500 at the mark: within
	accepted(t, agent, modify("", "97"))   // a dearer limit: still 15 at the mark, within
	out = rejected(t, agent, modify("15.1", ""), "agent_envelope")
	if want := "the agent would hold 1510.00 on paper (its positions at the marks, 15.1 BTC-USD after this order), past its envelope's max_notional 1500"; out.Reason != want {
		t.Errorf("a modify to 15.1: %q, want %q", out.Reason, want)
	}
}

// TestAgentEnvelopeJudgesTheDryRun: the agent's dry run (the preview an
// agent is shown before it confirms) is refused by its envelope exactly
// as its write would be, a modify that raises included; a person's dry run
// of the same new order, which is not the agent's, passes.
func TestAgentEnvelopeJudgesTheDryRun(t *testing.T) {
	cfg := project.Defaults()
	v := &cfg.Venues[0]
	v.Marks, v.Cash = "binance", decimal.NewFromInt(100000)
	cfg.Agent.Envelope = map[string]project.AgentEnvelope{"paper": {MaxNotional: testkit.D("1500")}}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	feed := &settablePrice{}
	feed.set("100")
	n := nodetest.NewServer(t, nodetest.WithConfig(cfg), nodetest.WithMarks(map[string]server.MarkFeed{"paper": feed}))
	agent, person := n.AgentClient(), n.Client()
	n.Tick(t, 1)
	dry := func(c *node.Client, cmd command.Command) node.Verdict {
		t.Helper()
		v, err := c.DryRun(context.Background(), command.NewEnvelope(cmd, ""))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	big := order("paper", "BTC-USD", command.Buy, command.Limit, "16", "95")
	fresh := rejected(t, agent, big, "agent_envelope")
	if v := dry(agent, big); v.WouldAccept || v.Code != "agent_envelope" || v.Reason != fresh.Reason {
		t.Errorf("the agent's dry run of 16: accept %v %s %q, want refused as its write: %q", v.WouldAccept, v.Code, v.Reason, fresh.Reason)
	}
	if v := dry(person, big); !v.WouldAccept {
		t.Errorf("a person's dry run of 16 (not the agent's order): %s %q", v.Code, v.Reason)
	}
	rest := accepted(t, agent, order("paper", "BTC-USD", command.Buy, command.Limit, "10", "95"))
	raise := command.Command{Verb: command.Modify, Venue: "paper", ClientOrderID: rest.ClientOrderID, Quantity: testkit.D("16")}
	if v := dry(agent, raise); v.WouldAccept || v.Code != "agent_envelope" {
		t.Errorf("the agent's dry run of a modify to 16: accept %v %s %q", v.WouldAccept, v.Code, v.Reason)
	}
	lower := command.Command{Verb: command.Modify, Venue: "paper", ClientOrderID: rest.ClientOrderID, Quantity: testkit.D("8")}
	if v := dry(agent, lower); !v.WouldAccept {
		t.Errorf("the agent's dry run of a modify to 8: %s %q", v.Code, v.Reason)
	}
}
