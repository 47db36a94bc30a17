package main

import (
	"context"
	"testing"
	"time"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/command"
	"wicket/node/nodetest"
)

// TestMCPWritesWithTheAgentKey: wicket mcp's node client signs its writes
// with the agent key when the project has one, so the node records them
// as the agent's; without one it writes with the control key.
func TestMCPWritesWithTheAgentKey(t *testing.T) {
	n := nodetest.NewServer(t)
	dir := tradeProject(t, n)
	p, _, err := openProjectAt(dir)
	if err != nil {
		t.Fatal(err)
	}
	buy := command.NewEnvelope(command.Command{Verb: command.SubmitOrder, Venue: "paper", Symbol: "BTC-USD", Side: command.Buy,
		Type: command.Market, Quantity: testkit.D("0.01")}, "")
	keyOf := func() string {
		t.Helper()
		c, err := mcpNodeClient(n.Addr, &p)
		if err != nil {
			t.Fatal(err)
		}
		out, err := nodetest.Send(context.Background(), c, buy, 5*time.Second)
		if err != nil || out.Status != node.Accepted {
			t.Fatalf("send: %+v %v", out, err)
		}
		entries := auditOf(t, n)
		return entries[len(entries)-1].KeyID
	}
	if k := keyOf(); k != node.KeyControl {
		t.Errorf("without an agent key wicket mcp wrote as %q", k)
	}
	t.Setenv(project.KeyAgent, n.AgentKey)
	if k := keyOf(); k != node.KeyAgent {
		t.Errorf("with the agent key wicket mcp wrote as %q", k)
	}
}
