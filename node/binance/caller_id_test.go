package binance_test

import (
	"strings"
	"testing"

	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/binance"
	"wicket/node/command"
)

// TestCallerIDModify (issue 44, item 17c): an order placed with a caller's
// own client_order_id is modified (cancel-replace) again and again; each
// incarnation travels as <id>:<n>, reads back as the caller's id, and its
// fills are summed. An id too long for the suffix is refused with the
// reason; an id of the replacement form cannot be chosen.
func TestCallerIDModify(t *testing.T) {
	f, a := start(t)
	const mine = "my-order_1"
	o, err := a.Submit(ctx(t), node.OrderRequest{ClientOrderID: mine, Symbol: "BTCUSDT", Side: command.Buy, Type: command.Limit,
		TimeInForce: command.GTC, Quantity: testkit.D("0.02"), Price: testkit.D("59000.00")})
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range []string{"59100.00", "59200.00"} {
		rep, err := a.Replace(ctx(t), o, node.Replacement{Quantity: testkit.D("0.02"), Price: testkit.D(p)})
		if err != nil {
			t.Fatalf("modify %d: %v", i+1, err)
		}
		if rep.ClientOrderID != mine || !rep.Price.Equal(testkit.D(p)) || rep.State != node.VenueOpen {
			t.Errorf("modify %d: %+v", i+1, rep)
		}
		o = rep
	}
	orders := f.Orders()
	if got := orders[len(orders)-1].ClientOrderID; got != mine+":2" {
		t.Errorf("the venue holds the second replacement as %q, want %q", got, mine+":2")
	}
	got, err := a.Lookup(ctx(t), node.VenueOrder{Symbol: "BTCUSDT", ClientOrderID: mine})
	if err != nil || got.VenueOrderID != o.VenueOrderID || got.State != node.VenueOpen || got.ClientOrderID != mine {
		t.Errorf("lookup by the caller's id: %+v %v", got, err)
	}
	open, err := a.OpenOrders(ctx(t), []string{"BTCUSDT"})
	if err != nil || len(open) != 1 || open[0].ClientOrderID != mine {
		t.Errorf("open orders: %+v %v", open, err)
	}

	long := strings.Repeat("x", 35)
	lo, err := a.Submit(ctx(t), node.OrderRequest{ClientOrderID: long, Symbol: "BTCUSDT", Side: command.Buy, Type: command.Limit,
		TimeInForce: command.GTC, Quantity: testkit.D("0.02"), Price: testkit.D("59000.00")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Replace(ctx(t), lo, node.Replacement{Quantity: testkit.D("0.02"), Price: testkit.D("59100.00")}); err == nil ||
		!strings.Contains(err.Error(), "35 characters") {
		t.Errorf("a 35-character id's modify: %v", err)
	}
	if _, err := binance.ClientID("mine:1"); err == nil {
		t.Error("an id of the replacement form was accepted")
	}
}
