package venuetest

import (
	"errors"
	"testing"

	"github.com/shopspring/decimal"

	"wicket/node"
	"wicket/node/command"
)

// levels are the protective behaviours' prices around the price px: a
// take-profit 2 % above, a stop 2 % below, and the stop's limit a fifth
// of a percent under it; whole units, so every venue's tick takes them.
func levels(px decimal.Decimal) (take, stop, stopLimit decimal.Decimal) {
	take = px.Mul(dec("1.02")).Floor()
	stop = px.Mul(dec("0.98")).Floor()
	return take, stop, stop.Sub(px.Div(dec("500")).Floor())
}

func oco(h Harness, id string) node.GroupRequest {
	sym, px, q := h.Protective()
	take, stop, lim := levels(px)
	return node.GroupRequest{Class: node.GroupOCO, Legs: []node.OrderRequest{
		{ClientOrderID: id, Symbol: sym, Side: command.Sell, Type: command.Limit, TimeInForce: command.GTC, Quantity: q, Price: take},
		{ClientOrderID: id + node.StopLegSuffix, Symbol: sym, Side: command.Sell, Type: command.StopLimit, TimeInForce: command.GTC, Quantity: q, StopPrice: stop, Price: lim},
	}}
}

func lookupOn(t *testing.T, a Exchange, symbol, id string) node.VenueOrder {
	t.Helper()
	o, err := a.Lookup(Ctx(t), node.VenueOrder{Symbol: symbol, ClientOrderID: id})
	if err != nil {
		t.Fatalf("lookup %s: %v", id, err)
	}
	return o
}

// stopLimit: a sell stop_limit rests untriggered above its stop, and once
// the price trades through the stop it works as its limit and fills there.
func stopLimit(t *testing.T, h Harness) {
	a := h.Adapter(t)
	sym, px, q := h.Protective()
	_, stop, lim := levels(px)
	id := ClientID()
	o := place(t, a, node.OrderRequest{ClientOrderID: id, Symbol: sym, Side: command.Sell, Type: command.StopLimit, TimeInForce: command.GTC,
		Quantity: q, StopPrice: stop, Price: lim})
	if o.State != node.VenueOpen || !o.Filled.IsZero() || o.ClientOrderID != id || o.VenueOrderID == "" {
		t.Fatalf("stop_limit answered %+v, want open and unfilled under %s", o, id)
	}
	got := lookupOn(t, a, sym, id)
	if got.Type != command.StopLimit || !got.StopPrice.Equal(stop) || !got.Price.Equal(lim) || got.State != node.VenueOpen {
		t.Errorf("the stop_limit reads back as %+v, want stop %s limit %s, open", got, stop, lim)
	}
	h.SetPrice(stop.Add(dec("1"))) // above the stop: nothing
	if got := lookupOn(t, a, sym, id); got.State != node.VenueOpen || !got.Filled.IsZero() {
		t.Errorf("above its stop the stop_limit is %+v", got)
	}
	h.SetPrice(stop.Add(lim).Div(dec("2"))) // through the stop, above the limit: it fills at its limit
	got = lookupOn(t, a, sym, id)
	if got.State != node.VenueFilled || !got.Filled.Equal(q) || !got.AveragePrice.Equal(lim) {
		t.Errorf("triggered, the stop_limit is %+v, want filled %s at %s", got, q, lim)
	}
	if f := fakeOrder(t, h, o.VenueOrderID); f.State != node.VenueFilled {
		t.Errorf("the fake holds the stop_limit as %+v", f)
	}
}

// ocoOneCancelsOther: an oco is one request; both legs rest under the
// node's ids (listed so by an adapter started afterwards too); when the
// take-profit fills, the venue cancels the stop.
func ocoOneCancelsOther(t *testing.T, h Harness) {
	a := h.Adapter(t)
	id := ClientID()
	g := oco(h, id)
	sym := g.Legs[0].Symbol
	before := h.Sent(OpGroup, "")
	legs, err := a.SubmitGroup(Ctx(t), g)
	if err != nil {
		t.Fatal(err)
	}
	if n := h.Sent(OpGroup, "") - before; n != 1 {
		t.Errorf("the oco took %d requests, want one", n)
	}
	if len(legs) != 2 || legs[0].ClientOrderID != id || legs[1].ClientOrderID != id+node.StopLegSuffix || legs[0].VenueOrderID == legs[1].VenueOrderID ||
		legs[0].State != node.VenueOpen || legs[1].State != node.VenueOpen {
		t.Fatalf("the oco answered %+v, want its two legs open under %s and %s", legs, id, id+node.StopLegSuffix)
	}
	open, err := h.Adapter(t).OpenOrders(Ctx(t), []string{sym})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for _, o := range open {
		ids[o.ClientOrderID] = o.VenueOrderID
	}
	if len(open) != 2 || ids[id] != legs[0].VenueOrderID || ids[id+node.StopLegSuffix] != legs[1].VenueOrderID {
		t.Errorf("an adapter started afterwards lists %+v, want both legs under the node's ids", open)
	}
	h.SetPrice(g.Legs[0].Price) // the take-profit fills
	if got := lookupOn(t, a, sym, id); got.State != node.VenueFilled || !got.AveragePrice.Equal(g.Legs[0].Price) {
		t.Errorf("the take-profit is %+v, want filled at %s", got, g.Legs[0].Price)
	}
	for who, a := range map[string]Exchange{"this adapter": a, "an adapter started afterwards": h.Adapter(t)} {
		if got := lookupOn(t, a, sym, id+node.StopLegSuffix); got.State != node.VenueCanceled || !got.Filled.IsZero() {
			t.Errorf("%s: after the take-profit filled the stop is %+v, want canceled", who, got)
		}
	}
	if f := fakeOrder(t, h, legs[1].VenueOrderID); f.State != node.VenueCanceled {
		t.Errorf("the fake holds the stop as %+v", f)
	}
}

// ocoGroupCancel: canceling one leg of an oco cancels the group at the
// venue; canceling the other leg then is refused or not found, never a
// second success.
func ocoGroupCancel(t *testing.T, h Harness) {
	a := h.Adapter(t)
	g := oco(h, ClientID())
	legs, err := a.SubmitGroup(Ctx(t), g)
	if err != nil || len(legs) != 2 {
		t.Fatalf("oco: %+v %v", legs, err)
	}
	c, err := a.Cancel(Ctx(t), legs[0])
	if err != nil || c.State != node.VenueCanceled {
		t.Fatalf("cancel of the take-profit: %+v %v", c, err)
	}
	for _, l := range legs {
		if f := fakeOrder(t, h, l.VenueOrderID); f.State != node.VenueCanceled {
			t.Errorf("leg %s at the fake: %+v, want canceled", l.ClientOrderID, f)
		}
		if got := lookupOn(t, a, g.Legs[0].Symbol, l.ClientOrderID); got.State != node.VenueCanceled {
			t.Errorf("leg %s reads back as %+v", l.ClientOrderID, got)
		}
	}
	if open, err := a.OpenOrders(Ctx(t), []string{g.Legs[0].Symbol}); err != nil || len(open) != 0 {
		t.Errorf("open orders after the group cancel: %+v %v", open, err)
	}
	if _, err := a.Cancel(Ctx(t), legs[1]); !errors.Is(err, node.ErrVenueRejected) && !errors.Is(err, node.ErrVenueNotFound) {
		t.Errorf("a cancel of the canceled stop: %v, want ErrVenueRejected or ErrVenueNotFound", err)
	}
}

// stopLimitReplace: a resting stop_limit's stop and limit move by the
// venue's replace (one request), under the same node id; the old levels
// no longer trigger it, the new ones fill it at the new limit.
func stopLimitReplace(t *testing.T, h Harness) {
	a := h.Adapter(t)
	sym, px, q := h.Protective()
	_, stop, lim := levels(px)
	id := ClientID()
	o := place(t, a, node.OrderRequest{ClientOrderID: id, Symbol: sym, Side: command.Sell, Type: command.StopLimit, TimeInForce: command.GTC,
		Quantity: q, StopPrice: stop, Price: lim})
	o.StopPrice, o.Price = stop, lim // the node names the order with its own levels
	gap := stop.Sub(lim)
	newStop, newLim := stop.Sub(gap.Mul(dec("5"))), lim.Sub(gap.Mul(dec("5")))
	before := h.Sent(OpReplace, o.VenueOrderID)
	rep, err := a.Replace(Ctx(t), o, node.Replacement{StopPrice: newStop, Price: newLim})
	if err != nil {
		t.Fatalf("replace of the stop_limit: %v", err)
	}
	if n := h.Sent(OpReplace, o.VenueOrderID) - before; n != 1 {
		t.Errorf("the replace took %d requests, want one", n)
	}
	if rep.ClientOrderID != id || rep.VenueOrderID == o.VenueOrderID || rep.State != node.VenueOpen || rep.Type != command.StopLimit {
		t.Fatalf("the replace answered %+v, want a new open stop_limit under %s", rep, id)
	}
	got := lookupOn(t, a, sym, id)
	if !got.StopPrice.Equal(newStop) || !got.Price.Equal(newLim) || got.VenueOrderID != rep.VenueOrderID {
		t.Errorf("the replaced stop_limit reads back as %+v, want stop %s limit %s", got, newStop, newLim)
	}
	h.SetPrice(stop.Add(lim).Div(dec("2"))) // through the old stop only: nothing
	if got := lookupOn(t, a, sym, id); got.State != node.VenueOpen || !got.Filled.IsZero() {
		t.Errorf("through its old stop the replaced stop_limit is %+v", got)
	}
	h.SetPrice(newStop.Add(newLim).Div(dec("2"))) // through the new stop, above the new limit
	if got := lookupOn(t, a, sym, id); got.State != node.VenueFilled || !got.AveragePrice.Equal(newLim) {
		t.Errorf("through its new stop the stop_limit is %+v, want filled at %s", got, newLim)
	}
}
