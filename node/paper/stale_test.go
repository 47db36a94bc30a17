package paper

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/command"
)

// TestStaleMarksNeverFill: on a venue fed by real marks with max_mark_age
// 5s, a market order against a mark older than that is canceled with the
// mark's age and the bound; a marketable limit order rests, and a resting
// one waits through a crossing stale mark until a fresh one arrives. The
// clock is the test's: it advances by hand.
func TestStaleMarksNeverFill(t *testing.T) {
	v := New(project.Venue{Name: "fed", Kind: "paper", Marks: "binance", MaxMarkAge: 5 * time.Second, Currency: "USD",
		Cash: testkit.D("10000"), Symbols: []string{"X"}, QuantityDecimals: 4, PriceDecimals: 2})
	h := &harness{t: t, v: v}
	h.emit(node.Event{Kind: node.EventVenueOpened, Venue: "fed", Cash: testkit.D("10000")})
	now := t0
	place := func(typ command.OrderType, tif command.TimeInForce, price string) node.Order {
		t.Helper()
		h.n++
		o := node.Order{ID: fmt.Sprintf("o%d", h.n), Symbol: "X", Side: command.Buy, Type: typ, Quantity: testkit.D("1"), TimeInForce: tif}
		if price != "" {
			o.Price = testkit.D(price)
		}
		v.Place(o, now, h.emit)
		got, _ := v.Order(o.ID)
		return got
	}

	// A mark of unknown time (the start or a journaled price) never fills.
	v.SetMark("X", testkit.D("100"))
	o := place(command.Market, "", "")
	if o.Status != node.OrderCanceled || !strings.Contains(o.Note, "not filled: the mark of X on fed has not come from its feed in this run") {
		t.Fatalf("market order on a start mark: %+v", o)
	}

	// Fresh: at the bound exactly it still fills.
	v.SetMarkAt("X", testkit.D("100"), now)
	now = now.Add(5 * time.Second)
	if o := place(command.Market, "", ""); o.Status != node.OrderFilled || !o.AveragePrice.Equal(testkit.D("100")) {
		t.Fatalf("market order on a 5s-old mark: %+v", o)
	}

	// The feed dies: 43 s later the mark is stale and nothing fills.
	now = now.Add(38 * time.Second)
	o = place(command.Market, "", "")
	if o.Status != node.OrderCanceled || o.Note != "not filled: the mark of X on fed is 43s old, older than its max_mark_age 5s" {
		t.Fatalf("market order on a 43s-old mark: %+v", o)
	}
	if err := v.FreshMark("X", now); err == nil {
		t.Error("FreshMark says a 43s-old mark is fresh")
	}
	// A limit ioc that would cross is canceled too; a gtc one rests.
	if o := place(command.Limit, command.IOC, "101"); o.Status != node.OrderCanceled || !strings.Contains(o.Note, "43s old") {
		t.Errorf("marketable ioc limit on a stale mark: %+v", o)
	}
	rest := place(command.Limit, command.GTC, "101")
	if rest.Status != node.OrderOpen {
		t.Fatalf("marketable gtc limit on a stale mark: %+v", rest)
	}
	// A stale mark that crosses (the held price, at its old time) triggers nothing.
	v.SetMarkAt("X", testkit.D("99"), now.Add(-time.Minute))
	v.Match(now, func(node.Order) bool { return true }, h.emit)
	if got, _ := v.Order(rest.ID); got.Status != node.OrderOpen {
		t.Fatalf("a stale crossing mark filled the resting order: %+v", got)
	}
	if !v.Position("X").Equal(testkit.D("1")) {
		t.Errorf("position %s after stale marks, want only the one fresh fill", v.Position("X"))
	}

	// A fresh mark arrives: the resting order fills at its limit.
	v.SetMarkAt("X", testkit.D("99"), now.Add(-time.Second))
	v.Match(now, func(node.Order) bool { return true }, h.emit)
	if got, _ := v.Order(rest.ID); got.Status != node.OrderFilled || !got.AveragePrice.Equal(testkit.D("101")) {
		t.Errorf("resting order after a fresh mark: %+v", got)
	}
}

// TestSimulatedMarksHaveNoAgeBound: a venue without max_mark_age (the walk
// or a replay) fills against a mark of any age.
func TestSimulatedMarksHaveNoAgeBound(t *testing.T) {
	h := newHarness(t, 0, 0) // SetMark: a mark of unknown time
	if err := h.v.FreshMark("X", t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if o := h.place(command.Buy, command.Market, "1", ""); o.Status != node.OrderFilled {
		t.Errorf("market order on a simulated venue: %+v", o)
	}
}
