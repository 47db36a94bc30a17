package server_test

import (
	"context"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/command"
	"wicket/node/nodetest"
	"wicket/node/server"
)

// envelopeOf is the risk status row of check on the agent at paper.
func envelopeOf(t *testing.T, c *node.Client, check string) (used, note string) {
	t.Helper()
	st, err := c.Risk(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range st.Limits {
		if l.Check == check && l.Scope == "agent on paper" {
			return l.Used, l.Note
		}
	}
	t.Fatalf("no %s in the risk status: %+v", check, st.Limits)
	return "", ""
}

// TestAgentEnvelopeHoldsTheAgentsWritesOnly: writes signed with the agent
// key are the agent's: an order past max_notional is refused, one that
// reduces passes, a person's (control key) order is not counted; once
// the agent's loss today passes max_daily_loss the next mark step closes
// the agent's position (not the person's), audited, and the agent's
// opening orders are refused; the book holds across a restart.
func TestAgentEnvelopeHoldsTheAgentsWritesOnly(t *testing.T) {
	cfg := project.Defaults()
	v := &cfg.Venues[0]
	v.Marks, v.Cash = "binance", decimal.NewFromInt(100000)
	cfg.Agent.Envelope = map[string]project.AgentEnvelope{"paper": {MaxNotional: testkit.D("1500"), MaxDailyLoss: testkit.D("50"), CloseOnBreach: true}}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	feed := &settablePrice{}
	feed.set("100")
	n := nodetest.NewServer(t, nodetest.WithConfig(cfg), nodetest.WithMarks(map[string]server.MarkFeed{"paper": feed}))
	agent, person := n.AgentClient(), n.Client()
	n.Tick(t, 1)
	buy := func(qty string) command.Command {
		return order("paper", "BTC-USD", command.Buy, command.Market, qty, "")
	}
	sell := func(qty string) command.Command {
		return order("paper", "BTC-USD", command.Sell, command.Market, qty, "")
	}

	accepted(t, agent, buy("10"))
	out := rejected(t, agent, buy("6"), "agent_envelope")
	if !strings.Contains(out.Reason, "past its envelope's max_notional 1500") || !strings.Contains(out.Reason, "16 BTC-USD after this order") {
		t.Errorf("past max_notional: %q", out.Reason)
	}
	// Its working orders count as filled: 10 held, 5 bid, 1 more is 16.
	rest := accepted(t, agent, order("paper", "BTC-USD", command.Buy, command.Limit, "5", "95"))
	out = rejected(t, agent, order("paper", "BTC-USD", command.Buy, command.Limit, "1", "95"), "agent_envelope")
	if !strings.Contains(out.Reason, "16 BTC-USD after this order with its working orders (buy 5, sell 0) filled") {
		t.Errorf("past max_notional with a working order: %q", out.Reason)
	}
	accepted(t, agent, command.Command{Verb: command.CancelOrder, Venue: "paper", ClientOrderID: rest.ClientOrderID})
	accepted(t, person, buy("6")) // a person's order: not the agent's
	accepted(t, agent, sell("2")) // reduces the agent's position
	if used, _ := envelopeOf(t, person, "agent_notional"); used != "800.00" {
		t.Errorf("the agent holds %s, want 800.00 (8 at 100)", used)
	}

	feed.set("97") // the agent's 8 lose 24 and its fees: within 50
	n.Tick(t, 1)
	if _, note := envelopeOf(t, person, "agent_daily_loss"); strings.Contains(note, "breached") {
		t.Fatalf("breached within the limit: %s", note)
	}
	n.Restart(t) // the book is rebuilt from the journal
	agent, person = n.AgentClient(), n.Client()
	if used, _ := envelopeOf(t, person, "agent_notional"); used != "776.00" {
		t.Errorf("after a restart the agent holds %s, want 776.00 (8 at 97)", used)
	}

	feed.set("90") // the agent's 8 lose 80: past 50
	n.Tick(t, 2)   // the breach closes; the close fills at the next step at the latest
	if pos := snapshot(t, person).Position("paper", "BTC-USD"); !pos.Equal(testkit.D("6")) {
		t.Errorf("after close_on_breach the account holds %s, want the person's 6", pos)
	}
	if used, note := envelopeOf(t, person, "agent_notional"); used != "0.00" {
		t.Errorf("after close_on_breach the agent holds %s (%s)", used, note)
	}
	out = rejected(t, agent, buy("1"), "agent_envelope")
	if !strings.Contains(out.Reason, "at or past its envelope's max_daily_loss 50") {
		t.Errorf("an opening order past the loss: %q", out.Reason)
	}
	accepted(t, person, buy("1")) // the person still trades

	page, err := person.Audit(context.Background(), node.AuditQuery{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	breaches := 0
	for _, e := range page.Entries {
		if e.Arming != nil && e.Arming.Action == node.ArmingEnvelope {
			breaches++
			if !strings.Contains(e.Arming.Note, "close_on_breach closes its positions: sell 8 BTC-USD") || e.KeyID != node.KeyNode {
				t.Errorf("the breach's audit: %s %q", e.KeyID, e.Arming.Note)
			}
		}
	}
	if breaches != 1 {
		t.Errorf("%d audit entries of the breach, want 1", breaches)
	}
}
