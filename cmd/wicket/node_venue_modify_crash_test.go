package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/command"
	"wicket/node/nodetest"
)

// TestVenueModifySurvivesSIGKILL kills the node with SIGKILL while Binance
// has done a modify (cancel-replace) whose answer has not reached the node;
// the restarted node knows the modify's ticket and settles it from the
// venue (the order replaced), never sending the modify again.
func TestVenueModifySurvivesSIGKILL(t *testing.T) {
	vp, proc, c := startArmedVenueNode(t)
	ctx := context.Background()
	lim, err := nodetest.Send(ctx, c, command.NewEnvelope(command.Command{Verb: command.SubmitOrder, Venue: "bn", Symbol: "BTCUSDT",
		Side: command.Buy, Type: command.Limit, Quantity: testkit.D("0.02"), Price: testkit.D("59000")}, "resting"), 10*time.Second)
	if err != nil || lim.Order == nil || lim.Order.Status != node.OrderOpen {
		t.Fatalf("resting order: %+v, %v", lim, err)
	}
	held, release := vp.fake.HoldResponses("/api/v3/order/cancelReplace")
	defer release()
	ticket, err := c.Submit(ctx, command.NewEnvelope(command.Command{Verb: command.Modify, Venue: "bn", OrderID: lim.OrderID,
		Price: testkit.D("59500")}, "cut off by a crash"))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-held:
	case <-time.After(15 * time.Second):
		t.Fatal("the modify never reached the venue")
	}
	kill(t, proc) // SIGKILL, the answer still held back
	release()

	_, c, log := vp.start(t)
	var out node.Outcome
	eventually(t, "the modify's ticket settled", log, func() bool {
		if out, err = c.Ticket(ctx, ticket, 0); err != nil {
			t.Fatalf("the modify's ticket after the crash: %v\n%s", err, log.String())
		}
		return out.Status != node.Pending
	})
	if out.Status != node.Accepted || out.Verb != command.Modify || out.Order == nil || !out.Order.Price.Equal(testkit.D("59500")) ||
		out.Order.VenueOrderID == lim.Order.VenueOrderID || !strings.Contains(out.Detail, "settled by reconciliation") {
		t.Errorf("the modify's ticket settled as %+v", out)
	}
	page, err := c.Audit(ctx, node.AuditQuery{ClientOrderID: lim.ClientOrderID})
	if err != nil || len(page.Entries) != 2 || page.Entries[1].Ticket != ticket || page.Entries[1].Outcome.Status != node.Accepted {
		t.Errorf("audit of the order after the crash: %+v, %v", page.Entries, err)
	}
	if n := vp.fake.Requests("POST /api/v3/order/cancelReplace"); n != 1 {
		t.Errorf("the modify reached the venue %d times, want once", n)
	}
}
