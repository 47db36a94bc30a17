package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/binance/binancefake"
	"wicket/node/command"
	"wicket/node/nodetest"
	"wicket/node/venuerig"
)

// TestArmingIsAudited: arming, disarming, a lapse and the disarm at a
// restart are rows of the audit trail, with who (the operator key for an
// arming, the control key for a disarm, or the node itself), the venue,
// its environment and until when; none is a command.
func TestArmingIsAudited(t *testing.T) {
	clk := testkit.NewClock(time.Now())
	vn := startVenueNode(t, func(f *binancefake.Fake) venuerig.Venue { return binanceVenue("bn", "testnet", true, f) }, nodetest.WithClock(clk.Now))
	vn.c = vn.srv.Client(node.WithClock(clk.Now))
	ctx := context.Background()

	armed := vn.arm(t, "bn", 2*time.Hour)
	if _, err := vn.c.Disarm(ctx, "bn"); err != nil {
		t.Fatal(err)
	}
	vn.arm(t, "bn", time.Hour)
	clk.Advance(61 * time.Minute)
	if out := send(t, vn.c, order("bn", "BTCUSDT", command.Buy, command.Market, "0.01", ""), ""); out.Code != "disarmed" {
		t.Fatalf("after the lapse: %s %s", out.Status, out.Code)
	}
	vn.arm(t, "bn", 8*time.Hour)
	vn.srv.Restart(t)
	vn.c = vn.srv.Client(node.WithClock(clk.Now))

	page, err := vn.c.Audit(ctx, node.AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var got []node.AuditEntry
	for _, e := range page.Entries {
		if e.Arming != nil {
			got = append(got, e)
		} else if e.Command.Verb == "" {
			t.Errorf("an audit entry with neither command nor arming: %+v", e)
		}
	}
	want := []struct {
		action node.ArmingAction
		key    string
		note   string
	}{
		{node.ArmingArm, node.KeyOperator, "armed by an operator"},
		{node.ArmingDisarm, node.KeyControl, "disarmed by an operator"},
		{node.ArmingArm, node.KeyOperator, "armed by an operator"},
		{node.ArmingLapse, node.KeyNode, "arming lapsed"},
		{node.ArmingArm, node.KeyOperator, "armed by an operator"},
		{node.ArmingLapse, node.KeyNode, "the node restarted"},
	}
	if len(got) != len(want) {
		t.Fatalf("%d arming entries, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		e := got[i]
		a := e.Arming
		if a.Action != w.action || e.KeyID != w.key || a.Venue != "bn" || a.Environment != "testnet" ||
			!strings.Contains(a.Note, w.note) || a.Until.IsZero() || e.Outcome.Status != node.Accepted || e.Ticket == "" {
			t.Errorf("arming entry %d = %+v %+v, want %s by %s (%q)", i, e, *a, w.action, w.key, w.note)
		}
	}
	if !got[0].Arming.Until.Equal(armed.ArmedUntil) || !got[1].Arming.Until.Equal(armed.ArmedUntil) {
		t.Errorf("until: arm %s, disarm %s; the node said %s", got[0].Arming.Until, got[1].Arming.Until, armed.ArmedUntil)
	}
	if lapse := got[3]; !lapse.Arming.Until.Equal(got[2].Arming.Until) {
		t.Errorf("the lapse ended the arming until %s, not the one until %s", lapse.Arming.Until, got[2].Arming.Until)
	}
	// An arming entry joins no order.
	if one, err := vn.c.Audit(ctx, node.AuditQuery{ClientOrderID: got[0].Ticket}); err != nil || len(one.Entries) != 0 {
		t.Errorf("arming entries by client order id: %+v %v", one.Entries, err)
	}
}
