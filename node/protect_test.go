package node_test

import (
	"strings"
	"testing"

	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/command"
)

// TestMarkUnprotectedByCoverage (issue 44, item 17b): a position is
// flagged unless the protective orders that can fire cover all of it —
// by quantity, not by presence — and a stop the node holds on a disarmed
// venue, or one the mark is already through, covers nothing.
func TestMarkUnprotectedByCoverage(t *testing.T) {
	stop := func(id, side, qty, at string) node.Order {
		return node.Order{ID: id, Symbol: "BTC-USD", Side: command.Side(side), Type: command.Stop, Quantity: testkit.D(qty),
			StopPrice: testkit.D(at), Status: node.OrderOpen}
	}
	heldAll := func(node.Order) bool { return true }
	for _, tc := range []struct {
		name      string
		qty, mark string
		armed     bool
		held      func(node.Order) bool
		orders    []node.Order
		flagged   bool
		covered   string
		reason    []string
	}{
		{name: "a stop for 2 % of the position", qty: "1", mark: "100", armed: true, orders: []node.Order{stop("o1", "sell", "0.02", "90")},
			flagged: true, covered: "0.02", reason: []string{"cover 0.02 of 1 (2 %)"}},
		{name: "two stops covering it all", qty: "1", mark: "100", armed: true, orders: []node.Order{stop("o1", "sell", "0.4", "90"), stop("o2", "sell", "0.6", "85")},
			covered: "1"},
		{name: "a partly filled stop covers what it has left", qty: "1", mark: "100", armed: true,
			orders:  []node.Order{func() node.Order { o := stop("o1", "sell", "1", "90"); o.Filled = testkit.D("0.5"); return o }()},
			flagged: true, covered: "0.5", reason: []string{"cover 0.5 of 1 (50 %)"}},
		{name: "a short's buy stop", qty: "-2", mark: "100", armed: true, orders: []node.Order{stop("o1", "buy", "2", "110")}, covered: "2"},
		{name: "a stop on the wrong side covers nothing", qty: "-2", mark: "100", armed: true, orders: []node.Order{stop("o1", "sell", "2", "90")},
			flagged: true, reason: []string{"none was asked for"}},
		{name: "held by the node on a disarmed venue, the mark 3 % through it", qty: "1", mark: "97", held: heldAll,
			orders: []node.Order{stop("o1", "sell", "1", "100")}, flagged: true,
			reason: []string{"o1 stop sell is held by the node, which fires it only while v is armed, and v is disarmed"}},
		{name: "held by the node on an armed venue", qty: "1", mark: "101", armed: true, held: heldAll, orders: []node.Order{stop("o1", "sell", "1", "100")}, covered: "1"},
		{name: "at the venue, the venue disarmed", qty: "1", mark: "101", orders: []node.Order{stop("o1", "sell", "1", "100")}, covered: "1"},
		{name: "the mark 3 % through a stop that has not fired", qty: "1", mark: "97", armed: true, orders: []node.Order{stop("o1", "sell", "1", "100")},
			flagged: true, reason: []string{"the mark 97 is already through the stop 100 of o1 stop (3 %) and it has not fired"}},
		{name: "an inactive bracket leg covers nothing", qty: "1", mark: "100", armed: true,
			orders: []node.Order{func() node.Order { o := stop("o1", "sell", "1", "90"); o.Inactive = true; return o }()}, flagged: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := node.Venue{Name: "v", Armed: tc.armed, OpenOrders: tc.orders,
				Positions: []node.Position{{Symbol: "BTC-USD", Quantity: testkit.D(tc.qty), Mark: testkit.D(tc.mark)}}}
			v.MarkUnprotected(nil, tc.held)
			p := v.Positions[0]
			covered := tc.covered
			if covered == "" {
				covered = "0"
			}
			if p.Unprotected != tc.flagged || !p.Covered.Equal(testkit.D(covered)) {
				t.Errorf("unprotected %v covered %s, want %v %s: %q", p.Unprotected, p.Covered, tc.flagged, covered, p.UnprotectedReason)
			}
			for _, r := range tc.reason {
				if !strings.Contains(p.UnprotectedReason, r) {
					t.Errorf("reason %q does not say %q", p.UnprotectedReason, r)
				}
			}
		})
	}
}
