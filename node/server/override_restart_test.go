package server_test

import (
	"context"
	"testing"

	"wicket/internal/project"
	"wicket/node"
	"wicket/node/command"
)

// TestOverrideOutlivesARestartUnlessUsed: the overrides are journaled. One
// granted and not yet used stands again after a restart on the same
// journal and lifts its check for its command once; one used before the
// restart stays used after it; one still waiting lapses after the restart
// at its own expiry on the node's clock.
func TestOverrideOutlivesARestartUnlessUsed(t *testing.T) {
	n, c, clk := riskNode(t, project.Risk{})
	ctx := context.Background()
	waiting := limitNear(t, c, command.Buy, "0.01", "0.85") // outside the 10% collar
	used := limitNear(t, c, command.Buy, "0.02", "0.85")
	lapsing := limitNear(t, c, command.Buy, "0.03", "0.85")
	for _, cmd := range []command.Command{waiting, used, lapsing} {
		rejected(t, c, cmd, "price_collar")
		if _, err := c.Override(ctx, "price_collar", node.PreviewHash(cmd), "", n.OperatorKey); err != nil {
			t.Fatal(err)
		}
	}
	accepted(t, c, used) // spends its override

	clk.Advance(node.OverrideLife / 2)
	n.Restart(t)
	rs, err := c.Risk(ctx)
	if err != nil {
		t.Fatal(err)
	}
	shown := 0
	for _, l := range rs.Limits {
		if l.Limit == "lifted once" {
			shown++
		}
	}
	if shown != 2 {
		t.Errorf("risk_status after the restart shows %d waiting overrides, want 2 (the unused ones): %+v", shown, rs.Limits)
	}
	rejected(t, c, used, "price_collar") // used before the restart: stays used
	accepted(t, c, waiting)
	rejected(t, c, waiting, "price_collar") // once

	clk.Advance(node.OverrideLife / 2) // the lapsing one's grant is 10 minutes old now
	n.Restart(t)
	rejected(t, c, lapsing, "price_collar")
}
