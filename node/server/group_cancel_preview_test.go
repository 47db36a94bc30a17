package server_test

import (
	"context"
	"strings"
	"testing"

	"wicket/internal/project"
	"wicket/node"
	"wicket/node/command"
	"wicket/node/guardrail"
	"wicket/node/nodetest"
)

// TestGroupCancelPreviewAgreesWithTheNode (issue 44, item 14): a
// cancel_order naming a market bracket by its group id (its filled
// entry's) or by the bracket's client order id is one the node accepts,
// so the client-side guardrail passes it and the preview does not say it
// is expected to be rejected; a cancel naming no order still fails it.
func TestGroupCancelPreviewAgreesWithTheNode(t *testing.T) {
	srv := nodetest.NewServer(t)
	c := srv.Client()
	ctx := context.Background()
	g := guardrail.New(project.Defaults())
	br := bracket(command.Buy, "1", "", "105", "95")
	br.ClientOrderID = "grp-1"
	mk := accepted(t, c, br)
	newID := func() string { return "0190a8c4-0000-7000-8000-000000000001" }
	for _, cx := range []command.Command{
		{Verb: command.CancelOrder, Venue: "paper", OrderID: mk.OrderID},
		{Verb: command.CancelOrder, Venue: "paper", ClientOrderID: "grp-1"},
	} {
		p := node.NewPreview(ctx, c, g, cx, "group cancel", newID)
		for _, n := range p.Notes {
			if strings.Contains(n, "expected to reject") {
				t.Errorf("cancel %s%s: the preview says %q", cx.OrderID, cx.ClientOrderID, n)
			}
		}
		said := ""
		for _, ck := range p.Guardrail.Checks {
			said += ck.Detail + "; "
		}
		if !p.Guardrail.OK || p.DryRun == nil || !p.DryRun.WouldAccept || !strings.Contains(said, "group "+mk.OrderID) {
			t.Errorf("cancel %s%s: guardrail %s (%s), dry run %+v", cx.OrderID, cx.ClientOrderID, p.Guardrail.Summary(), said, p.DryRun)
		}
	}
	out := accepted(t, c, command.Command{Verb: command.CancelOrder, Venue: "paper", ClientOrderID: "grp-1"})
	if len(out.Canceled) != 2 {
		t.Errorf("the node's cancel of the group: %+v", out)
	}
	p := node.NewPreview(ctx, c, g, command.Command{Verb: command.CancelOrder, Venue: "paper", OrderID: mk.OrderID}, "", newID)
	if p.Guardrail.OK {
		t.Errorf("a cancel of a group with no open leg passed the guardrail: %s", p.Guardrail.Summary())
	}
}
