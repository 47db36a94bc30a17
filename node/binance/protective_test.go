package binance_test

import (
	"errors"
	"strings"
	"testing"

	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/binance"
	"wicket/node/command"
)

// TestLegAndFireIDsTravel: an oco leg's and a fired trigger's client order
// ids fit Binance's 36 characters and read back as the node's; a
// foreign id shaped like one is refused, and a leg cannot be replaced.
func TestLegAndFireIDsTravel(t *testing.T) {
	for _, suffix := range []string{node.StopLegSuffix, node.TakeProfitLegSuffix, node.FireSuffix} {
		v, err := binance.ClientID(cid + suffix)
		if err != nil || len(v) > 36 || binance.NodeID(v) != cid+suffix {
			t.Errorf("ClientID(%s) = %q %v; reads back as %q", cid+suffix, v, err, binance.NodeID(v))
		}
	}
	if _, err := binance.ClientID("wk0190f5a27c1e7b3a9d4e123456789abc-s"); err == nil {
		t.Error("a foreign id in the leg form was accepted")
	}
}

// TestHolds: what Binance spot holds natively, what the node holds, and
// what is refused with the form Binance can take.
func TestHolds(t *testing.T) {
	_, a := start(t)
	one := func(r node.OrderRequest) ([]node.Hold, error) {
		return a.Holds(node.GroupRequest{Legs: []node.OrderRequest{r}})
	}
	req := node.OrderRequest{Symbol: "BTCUSDT", Side: command.Sell, Quantity: testkit.D("0.01")}
	for typ, want := range map[command.OrderType]node.Hold{command.Market: node.HoldVenue, command.Limit: node.HoldVenue, command.StopLimit: node.HoldVenue, command.Stop: node.HoldNode} {
		r := req
		r.Type = typ
		if h, err := one(r); err != nil || h[0] != want {
			t.Errorf("%s: %v %v, want %s", typ, h, err, want)
		}
	}
	trail := req
	trail.Type, trail.TrailPercent = command.TrailingStop, testkit.D("1.5")
	if h, err := one(trail); err != nil || h[0] != node.HoldVenue {
		t.Errorf("a trailing stop of 1.5 %%: %v %v, want native", h, err)
	}
	for _, other := range []node.OrderRequest{{TrailAmount: testkit.D("100")}, {TrailPercent: testkit.D("0.05")}, {TrailPercent: testkit.D("1.234")}, {TrailPercent: testkit.D("25")}} {
		r := req
		r.Type, r.TrailAmount, r.TrailPercent = command.TrailingStop, other.TrailAmount, other.TrailPercent
		if h, err := one(r); err != nil || h[0] != node.HoldNode {
			t.Errorf("trailing %+v: %v %v, want held by the node (trailingDelta cannot carry it)", other, h, err)
		}
	}
	long := req
	long.Type, long.StopPrice, long.ClientOrderID = command.Stop, testkit.D("59000"), "a-client-order-id-of-33-characters"
	if _, err := one(long); err == nil || !strings.Contains(err.Error(), "cannot travel to binance") {
		t.Errorf("a held stop whose fire id cannot travel: %v", err)
	}
	if _, err := a.Submit(ctx(t), node.OrderRequest{ClientOrderID: "trail-by-amount", Symbol: "BTCUSDT", Side: command.Sell, Type: command.TrailingStop,
		Quantity: testkit.D("0.01"), TrailAmount: testkit.D("100")}); !errors.Is(err, node.ErrVenueRejected) || !strings.Contains(err.Error(), "give trail_percent in that range") {
		t.Errorf("a trailing stop by amount sent to binance: %v, want refused unsent with the range", err)
	}
	entry, take, stopLoss := req, req, req
	entry.Side, entry.Type = command.Buy, command.Market
	take.Type, take.Price, take.ClientOrderID = command.Limit, testkit.D("60600"), cid+node.TakeProfitLegSuffix
	stopLoss.Type, stopLoss.StopPrice, stopLoss.ClientOrderID = command.Stop, testkit.D("59400"), cid+node.StopLegSuffix
	bracket := node.GroupRequest{Class: node.GroupBracket, Legs: []node.OrderRequest{entry, take, stopLoss}}
	if h, err := a.Holds(bracket); err != nil || len(h) != 3 || h[0] != node.HoldVenue || h[1] != node.HoldAfterEntry || h[2] != node.HoldAfterEntry {
		t.Errorf("a bracket: %v %v, want the entry at the venue and its exits after it fills", h, err)
	}
	trailing := bracket
	trailing.Legs = []node.OrderRequest{entry, take, {Symbol: "BTCUSDT", Side: command.Sell, Type: command.TrailingStop, Quantity: testkit.D("0.01"), TrailPercent: testkit.D("1")}}
	if _, err := a.Holds(trailing); err == nil || !strings.Contains(err.Error(), "orderList/oco") {
		t.Errorf("a bracket with a trailing stop-loss: %v, want the oco form named", err)
	}
}

// TestTrailingDeltaAndOrderList: a trailing stop travels as STOP_LOSS with
// trailingDelta in basis points and follows the price; an oco is one
// orderList/oco request, never POST /api/v3/order; a plain stop is never
// sent.
func TestTrailingDeltaAndOrderList(t *testing.T) {
	f, a := start(t)
	o, err := a.Submit(ctx(t), node.OrderRequest{ClientOrderID: cid, Symbol: "BTCUSDT", Side: command.Sell, Type: command.TrailingStop,
		Quantity: testkit.D("0.01"), TrailPercent: testkit.D("1")})
	if err != nil || o.State != node.VenueOpen {
		t.Fatalf("trailing stop: %+v %v", o, err)
	}
	held := f.Orders()[0]
	if held.Type != "STOP_LOSS" || held.TrailingDelta != 100 || !held.StopPrice.Equal(testkit.D("59400")) {
		t.Fatalf("the fake holds %+v, want STOP_LOSS trailingDelta 100, stop 59400", held)
	}
	f.SetPrice("BTCUSDT", "61000.00") // the stop follows to 60390
	f.SetPrice("BTCUSDT", "60500.00")
	if got, _ := a.Lookup(ctx(t), node.VenueOrder{Symbol: "BTCUSDT", ClientOrderID: cid}); got.State != node.VenueOpen || !got.StopPrice.Equal(testkit.D("60390")) {
		t.Errorf("after 61000 the trailing stop is %+v, want open at 60390", got)
	}
	f.SetPrice("BTCUSDT", "60300.00")
	if got, _ := a.Lookup(ctx(t), node.VenueOrder{Symbol: "BTCUSDT", ClientOrderID: cid}); got.State != node.VenueFilled || !got.AveragePrice.Equal(testkit.D("60300")) {
		t.Errorf("through its stop the trailing stop is %+v, want filled at 60300", got)
	}
	if _, err := a.Submit(ctx(t), node.OrderRequest{ClientOrderID: "plain-stop", Symbol: "BTCUSDT", Side: command.Sell, Type: command.Stop,
		Quantity: testkit.D("0.01"), StopPrice: testkit.D("59000")}); !errors.Is(err, node.ErrVenueRejected) {
		t.Errorf("a plain stop sent to binance: %v, want refused unsent", err)
	}
	before := f.Requests("POST /api/v3/order")
	legs, err := a.SubmitGroup(ctx(t), node.GroupRequest{Class: node.GroupOCO, Legs: []node.OrderRequest{
		{ClientOrderID: "oco-1", Symbol: "BTCUSDT", Side: command.Buy, Type: command.Limit, Quantity: testkit.D("0.01"), Price: testkit.D("59000")},
		{ClientOrderID: "oco-1" + node.StopLegSuffix, Symbol: "BTCUSDT", Side: command.Buy, Type: command.Stop, Quantity: testkit.D("0.01"), StopPrice: testkit.D("61000")},
	}})
	if err != nil || len(legs) != 2 {
		t.Fatalf("buy oco: %+v %v", legs, err)
	}
	if n := f.Requests("POST /api/v3/orderList/oco"); n != 1 || f.Requests("POST /api/v3/order") != before {
		t.Errorf("the oco took %d orderList requests and %d order requests", n, f.Requests("POST /api/v3/order")-before)
	}
	byID := map[string]string{}
	for _, o := range f.Orders() {
		byID[o.ClientOrderID] = o.Type
	}
	if byID["oco-1"] != "LIMIT_MAKER" || byID["oco-1-stop"] != "STOP_LOSS" {
		t.Errorf("the fake holds the legs as %v, want LIMIT_MAKER and STOP_LOSS", byID)
	}
	// A stop leg on the wrong side of the price is Binance's refusal, nothing placed.
	_, err = a.SubmitGroup(ctx(t), node.GroupRequest{Class: node.GroupOCO, Legs: []node.OrderRequest{
		{ClientOrderID: "oco-2", Symbol: "BTCUSDT", Side: command.Sell, Type: command.Limit, Quantity: testkit.D("0.01"), Price: testkit.D("61000")},
		{ClientOrderID: "oco-2" + node.StopLegSuffix, Symbol: "BTCUSDT", Side: command.Sell, Type: command.Stop, Quantity: testkit.D("0.01"), StopPrice: testkit.D("62000")},
	}})
	if !errors.Is(err, node.ErrVenueRejected) || !strings.Contains(err.Error(), "trigger immediately") {
		t.Errorf("a wrong-side oco: %v", err)
	}
}
