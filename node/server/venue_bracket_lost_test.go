package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"wicket/node"
)

// TestBracketVenueBinanceLostEntryAnswer (issue 44, item 17c): a
// bracket's market entry whose answer is lost, which Binance has taken
// but not yet traded when the node reconciles, leaves the ticket pending
// — it said "accepted: open, 0 of 0.001 filled" — and settles it filled
// once the venue has traded it, with the exits sent once.
func TestBracketVenueBinanceLostEntryAnswer(t *testing.T) {
	vn := startVenueNode(t, bnVenue)
	vn.arm(t, "bn", time.Hour)
	vn.fake.QueueMarket(true)
	vn.fake.DropResponses("/api/v3/order", 1)
	out := sendAny(t, vn.c, bracketCmd("bn", "BTCUSDT", "0.001", "", "60600", "59400", "59300"))
	if len(out.OrderIDs) != 3 {
		t.Fatalf("bracket: %+v", out)
	}
	entry := out.OrderIDs[0]
	waitFor(t, "the entry found at the venue, taken and not traded", func() bool {
		st, _ := vn.nodeOrder(t, entry)
		return st == node.OrderOpen
	})
	ctx := context.Background()
	got, err := vn.c.Ticket(ctx, out.Ticket, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != node.Pending || strings.Contains(got.Detail, "0 of 0.001 filled") {
		t.Errorf("the ticket of an entry taken but not traded: %s %q", got.Status, got.Detail)
	}
	vn.fake.Cross()
	waitFor(t, "the entry filled and its exits placed", func() bool {
		st, _ := vn.nodeOrder(t, entry)
		x, _ := vn.nodeOrder(t, out.OrderIDs[2])
		return st == node.OrderFilled && x == node.OrderOpen
	})
	if got, err = vn.c.Ticket(ctx, out.Ticket, 0); err != nil || got.Status != node.Accepted || !strings.Contains(got.Detail, "is filled, 0.001 of 0.001 filled") {
		t.Errorf("the ticket once the entry traded: %+v %v", got, err)
	}
	if n := vn.fake.Requests("POST /api/v3/order"); n != 1 {
		t.Errorf("the entry reached binance %d times, want once", n)
	}
}
