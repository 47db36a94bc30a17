package paper

import (
	"testing"
	"time"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/command"
)

// TestStaleMarksNeverTriggerStops: a resting stop on a fed venue is not
// triggered by a mark older than max_mark_age, and is by a fresh one.
func TestStaleMarksNeverTriggerStops(t *testing.T) {
	v := New(project.Venue{Name: "fed", Kind: "paper", Marks: "binance", MaxMarkAge: 5 * time.Second, Currency: "USD",
		Cash: testkit.D("10000"), Symbols: []string{"X"}, QuantityDecimals: 4, PriceDecimals: 2})
	h := &harness{t: t, v: v}
	h.emit(node.Event{Kind: node.EventVenueOpened, Venue: "fed", Cash: testkit.D("10000")})
	now := t0
	v.SetMarkAt("X", testkit.D("100"), now)
	v.Place(node.Order{ID: "s1", Symbol: "X", Side: command.Sell, Type: command.Stop, StopPrice: testkit.D("95"), Quantity: testkit.D("1"), TimeInForce: command.GTC}, now, h.emit)
	if o, _ := v.Order("s1"); o.Status != node.OrderOpen {
		t.Fatalf("the stop does not rest: %+v", o)
	}
	allow := func(node.Order) bool { return true }
	// The feed's last price is through the stop but 10 s old.
	v.SetMarkAt("X", testkit.D("90"), now)
	now = now.Add(10 * time.Second)
	v.Match(now, allow, h.emit)
	if o, _ := v.Order("s1"); o.Status != node.OrderOpen {
		t.Fatalf("a 10s-old mark triggered the stop: %+v", o)
	}
	v.SetMarkAt("X", testkit.D("90"), now)
	v.Match(now, allow, h.emit)
	if o, _ := v.Order("s1"); o.Status != node.OrderFilled {
		t.Fatalf("a fresh mark through the stop did not fill it: %+v", o)
	}
}
