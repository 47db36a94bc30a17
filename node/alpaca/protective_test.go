package alpaca_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/command"
)

// TestGroupsAreOneOrderWithOrderClass: an oco and a bracket are each one
// POST /v2/orders with its order_class; Alpaca names the children, and the
// adapter answers (and lists, after a restart) them under the node's leg
// ids. A bracket's exits wait for its entry, then one cancels the other.
func TestGroupsAreOneOrderWithOrderClass(t *testing.T) {
	f, another := startWith(t, 2*time.Second)
	a := another()
	legs, err := a.SubmitGroup(ctx(t), node.GroupRequest{Class: node.GroupOCO, Legs: []node.OrderRequest{
		{ClientOrderID: cid, Symbol: "SPY", Side: command.Sell, Type: command.Limit, Quantity: testkit.D("2"), Price: testkit.D("510")},
		{ClientOrderID: cid + node.StopLegSuffix, Symbol: "SPY", Side: command.Sell, Type: command.Stop, Quantity: testkit.D("2"), StopPrice: testkit.D("490")},
	}})
	if err != nil || len(legs) != 2 || legs[1].ClientOrderID != cid+node.StopLegSuffix || legs[1].Type != command.Stop || !legs[1].StopPrice.Equal(testkit.D("490")) {
		t.Fatalf("oco: %+v %v", legs, err)
	}
	if n := f.Requests("POST /v2/orders"); n != 1 {
		t.Errorf("the oco took %d requests", n)
	}
	orders := f.Orders()
	if len(orders) != 2 || orders[0].Class != "oco" || orders[1].Parent != orders[0].ID || orders[0].ClientOrderID != cid {
		t.Errorf("alpaca holds %+v, want one oco with its stop child", orders)
	}

	entry := "wk-0190f5a2-7c1e-7b3a-9d4e-0000000000b1"
	legs, err = a.SubmitGroup(ctx(t), node.GroupRequest{Class: node.GroupBracket, Legs: []node.OrderRequest{
		{ClientOrderID: entry, Symbol: "SPY", Side: command.Buy, Type: command.Limit, TimeInForce: command.GTC, Quantity: testkit.D("3"), Price: testkit.D("499")},
		{ClientOrderID: entry + node.TakeProfitLegSuffix, Symbol: "SPY", Side: command.Sell, Type: command.Limit, Quantity: testkit.D("3"), Price: testkit.D("520")},
		{ClientOrderID: entry + node.StopLegSuffix, Symbol: "SPY", Side: command.Sell, Type: command.StopLimit, Quantity: testkit.D("3"), StopPrice: testkit.D("480"), Price: testkit.D("479")},
	}})
	if err != nil || len(legs) != 3 || legs[1].ClientOrderID != entry+node.TakeProfitLegSuffix || legs[2].ClientOrderID != entry+node.StopLegSuffix ||
		!legs[1].Price.Equal(testkit.D("520")) || !legs[2].StopPrice.Equal(testkit.D("480")) {
		t.Fatalf("bracket: %+v %v", legs, err)
	}
	if n := f.Requests("POST /v2/orders"); n != 2 {
		t.Errorf("the bracket took %d requests", n-1)
	}
	// Restarted, the adapter lists every open leg under the node's ids.
	b := another()
	open, err := b.OpenOrders(ctx(t), []string{"SPY"})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, o := range open {
		names[o.ClientOrderID] = true
	}
	for _, id := range []string{cid, cid + node.StopLegSuffix, entry, entry + node.TakeProfitLegSuffix, entry + node.StopLegSuffix} {
		if !names[id] {
			t.Errorf("after a restart the open orders %v lack %s", names, id)
		}
	}
	f.SetPrice("SPY", "499") // the entry fills; its exits go live
	f.SetPrice("SPY", "520") // the take-profit fills, the stop-loss is canceled
	for id, want := range map[string]node.VenueState{entry: node.VenueFilled, entry + node.TakeProfitLegSuffix: node.VenueFilled, entry + node.StopLegSuffix: node.VenueCanceled,
		cid: node.VenueFilled, cid + node.StopLegSuffix: node.VenueCanceled} {
		if got, err := b.Lookup(ctx(t), node.VenueOrder{ClientOrderID: id}); err != nil || got.State != want {
			t.Errorf("%s: %+v %v, want %s", id, got, err, want)
		}
	}
}

// TestAlpacaRefusals: Alpaca refuses a trailing stop inside a bracket, and
// stops and groups on crypto pairs; the adapter says so at check time
// (Holds) and sends nothing.
func TestAlpacaRefusals(t *testing.T) {
	f, a := start(t, 2*time.Second)
	bracket := node.GroupRequest{Class: node.GroupBracket, Legs: []node.OrderRequest{
		{ClientOrderID: cid, Symbol: "SPY", Side: command.Buy, Type: command.Market, Quantity: testkit.D("1")},
		{ClientOrderID: cid + node.TakeProfitLegSuffix, Symbol: "SPY", Side: command.Sell, Type: command.Limit, Quantity: testkit.D("1"), Price: testkit.D("520")},
		{ClientOrderID: cid + node.StopLegSuffix, Symbol: "SPY", Side: command.Sell, Type: command.TrailingStop, Quantity: testkit.D("1"), TrailPercent: testkit.D("2")},
	}}
	if _, err := a.Holds(bracket); err == nil || !strings.Contains(err.Error(), "refuses a trailing stop inside a bracket") {
		t.Errorf("trailing stop in a bracket: %v", err)
	}
	if _, err := a.SubmitGroup(ctx(t), bracket); !errors.Is(err, node.ErrVenueRejected) || f.Requests("POST /v2/orders") != 0 {
		t.Errorf("trailing stop in a bracket sent: %v, %d requests", err, f.Requests("POST /v2/orders"))
	}
	crypto := node.OrderRequest{Symbol: "BTC-USD", Side: command.Sell, Type: command.Stop, Quantity: testkit.D("0.01"), StopPrice: testkit.D("59000")}
	if _, err := a.Holds(node.GroupRequest{Legs: []node.OrderRequest{crypto}}); err == nil || !strings.Contains(err.Error(), "use a stop_limit") {
		t.Errorf("a crypto stop: %v", err)
	}
	crypto.Type, crypto.Price = command.StopLimit, testkit.D("58900")
	if h, err := a.Holds(node.GroupRequest{Legs: []node.OrderRequest{crypto}}); err != nil || h[0] != node.HoldVenue {
		t.Errorf("a crypto stop_limit: %v %v, want native", h, err)
	}
	// A trailing stop by percent on a stock is native and follows the price.
	o, err := a.Submit(ctx(t), node.OrderRequest{ClientOrderID: cid, Symbol: "SPY", Side: command.Sell, Type: command.TrailingStop, Quantity: testkit.D("1"), TrailPercent: testkit.D("2")})
	if err != nil || o.Type != command.TrailingStop || !o.StopPrice.Equal(testkit.D("490")) {
		t.Fatalf("trailing stop: %+v %v", o, err)
	}
	f.SetPrice("SPY", "510")
	f.SetPrice("SPY", "499.5")
	if got, _ := a.Lookup(ctx(t), node.VenueOrder{ClientOrderID: cid}); got.State != node.VenueFilled || !got.AveragePrice.Equal(testkit.D("499.5")) {
		t.Errorf("the trailing stop after 510 then 499.5: %+v, want filled at 499.5 (stop 499.8)", got)
	}
}
