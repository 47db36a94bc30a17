package alpaca

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"wicket/node"
	"wicket/node/command"

	alp "github.com/alpacahq/alpaca-trade-api-go/v3/alpaca"
	"github.com/shopspring/decimal"
)

// Submit places an order: market, limit, stop, stop_limit or
// trailing_stop (trail_price or trail_percent), each Alpaca's own type.
// Stock market orders are day orders (Alpaca's rule for fractional and
// market orders); crypto keeps gtc/ioc.
func (a *Adapter) Submit(_ context.Context, r node.OrderRequest) (node.VenueOrder, error) {
	o, err := a.c.PlaceOrder(a.placeRequest(r))
	if err != nil {
		return node.VenueOrder{}, a.classify(err)
	}
	return a.fromOrder(o), nil
}

func ptr(d decimal.Decimal) *decimal.Decimal { return &d }

// placeRequest is Alpaca's form of one order.
func (a *Adapter) placeRequest(r node.OrderRequest) alp.PlaceOrderRequest {
	req := alp.PlaceOrderRequest{Symbol: a.venueSymbol(r.Symbol), Qty: ptr(r.Quantity), Side: alp.Side(r.Side), ClientOrderID: r.ClientOrderID,
		TimeInForce: a.tif(r.Symbol, r.Type, r.TimeInForce), Type: alp.Market}
	switch r.Type {
	case command.Limit:
		req.Type, req.LimitPrice = alp.Limit, ptr(r.Price)
	case command.Stop:
		req.Type, req.StopPrice = alp.Stop, ptr(r.StopPrice)
	case command.StopLimit:
		req.Type, req.StopPrice, req.LimitPrice = alp.StopLimit, ptr(r.StopPrice), ptr(r.Price)
	case command.TrailingStop:
		req.Type = alp.TrailingStop
		if r.TrailPercent.IsPositive() {
			req.TrailPercent = ptr(r.TrailPercent)
		} else {
			req.TrailPrice = ptr(r.TrailAmount)
		}
	}
	return req
}

// Holds says Alpaca holds every order type natively (Trading API
// "Orders": stop, stop_limit, trailing_stop; order_class oco and
// bracket), except what Alpaca refuses: crypto pairs take market, limit
// and stop_limit only, and a bracket's stop-loss is a stop or stop_limit,
// never a trailing stop.
func (a *Adapter) Holds(g node.GroupRequest) ([]node.Hold, error) {
	out := make([]node.Hold, len(g.Legs))
	for i, l := range g.Legs {
		out[i] = node.HoldVenue
		a.mu.Lock()
		crypto := a.crypto[l.Symbol]
		a.mu.Unlock()
		switch {
		case crypto && g.Class == node.GroupBracket:
			return nil, fmt.Errorf("alpaca has no bracket on crypto pairs such as %s (it takes market, limit and stop_limit orders there): submit the entry, then a stop_limit (stop_price and limit_price) once it fills", l.Symbol)
		case crypto && (g.Class != "" || l.Type == command.Stop || l.Type == command.TrailingStop):
			what := string(l.Type)
			if g.Class != "" {
				what = "an " + g.Class
			}
			return nil, fmt.Errorf("alpaca takes market, limit and stop_limit orders on crypto pairs such as %s, not %s: use a stop_limit (stop_price and limit_price) to protect it", l.Symbol, what)
		case g.Class == node.GroupBracket && l.Type == command.TrailingStop:
			return nil, errors.New("alpaca refuses a trailing stop inside a bracket: give the bracket's stop_loss a stop_price (and optionally a limit_price), or place the trailing_stop on its own once the entry fills")
		}
	}
	return out, nil
}

// SubmitGroup places linked legs as one Alpaca order with an
// order_class: oco (the take-profit limit, with take_profit.limit_price
// and stop_loss.stop_price / limit_price), or bracket (the entry, with
// take_profit and stop_loss). Alpaca names the child legs itself; the
// adapter maps them to the node's leg ids (the group's client order id
// with node.StopLegSuffix or node.TakeProfitLegSuffix). The answer lists
// the legs in the request's order.
func (a *Adapter) SubmitGroup(_ context.Context, g node.GroupRequest) ([]node.VenueOrder, error) {
	if _, err := a.Holds(g); err != nil {
		return nil, &node.VenueError{Kind: node.ErrVenueRejected, Venue: a.name, Message: err.Error() + "; nothing was sent"}
	}
	var req alp.PlaceOrderRequest
	switch {
	case g.Class == node.GroupOCO && len(g.Legs) == 2:
		tp, sl := g.Legs[0], g.Legs[1]
		req = alp.PlaceOrderRequest{Symbol: a.venueSymbol(tp.Symbol), Qty: ptr(tp.Quantity), Side: alp.Side(tp.Side), ClientOrderID: tp.ClientOrderID,
			Type: alp.Limit, TimeInForce: alp.GTC, OrderClass: alp.OCO, TakeProfit: &alp.TakeProfit{LimitPrice: ptr(tp.Price)}, StopLoss: stopLoss(sl)}
	case g.Class == node.GroupBracket && len(g.Legs) == 3:
		req = a.placeRequest(g.Legs[0])
		req.OrderClass, req.TakeProfit, req.StopLoss = alp.Bracket, &alp.TakeProfit{LimitPrice: ptr(g.Legs[1].Price)}, stopLoss(g.Legs[2])
		if req.TimeInForce == alp.IOC {
			req.TimeInForce = alp.GTC
		}
	default:
		return nil, &node.VenueError{Kind: node.ErrVenueRejected, Venue: a.name, Message: fmt.Sprintf("a %q group of %d legs is not an alpaca order class; nothing was sent", g.Class, len(g.Legs))}
	}
	o, err := a.c.PlaceOrder(req)
	if err != nil {
		return nil, a.classify(err)
	}
	return a.legsOf(o, g)
}

func stopLoss(l node.OrderRequest) *alp.StopLoss {
	sl := &alp.StopLoss{StopPrice: ptr(l.StopPrice)}
	if l.Type == command.StopLimit {
		sl.LimitPrice = ptr(l.Price)
	}
	return sl
}

// legsOf lists an order_class order's legs in the request's order: the
// parent first, then each child by its role (a limit is the take-profit,
// a stop the stop-loss), remembering the children's node ids.
func (a *Adapter) legsOf(o *alp.Order, g node.GroupRequest) ([]node.VenueOrder, error) {
	out := []node.VenueOrder{a.fromOrder(o)}
	for _, want := range g.Legs[1:] {
		i := slices.IndexFunc(o.Legs, func(l alp.Order) bool { return roleSuffix(l.Type) == roleOf(want, g) })
		if i < 0 {
			return nil, &node.VenueError{Kind: node.ErrVenueUnknown, Venue: a.name,
				Message: fmt.Sprintf("alpaca answered order %s without its %s leg; the node reads the legs back by client order id", o.ID, want.Type)}
		}
		a.nameLeg(o.Legs[i].ID, want.ClientOrderID)
		out = append(out, a.fromOrder(&o.Legs[i]))
	}
	return out, nil
}

// roleOf is the suffix of a group's leg by its place in the request.
func roleOf(l node.OrderRequest, g node.GroupRequest) string {
	if l.Type == command.Limit && g.Class == node.GroupBracket {
		return node.TakeProfitLegSuffix
	}
	if l.Type == command.Limit {
		return ""
	}
	return node.StopLegSuffix
}

// roleSuffix is the node's suffix for a child leg of Alpaca's type.
func roleSuffix(t alp.OrderType) string {
	if t == alp.Limit {
		return node.TakeProfitLegSuffix
	}
	return node.StopLegSuffix
}

func (a *Adapter) nameLeg(venueID, nodeID string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.legs[venueID] = nodeID
}

func (a *Adapter) legName(venueID string) (string, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	id, ok := a.legs[venueID]
	return id, ok
}

// adoptLegs names the children of a parent Alpaca lists with its legs
// (nested), by their roles: after a restart the adapter has no memory of
// them, and Alpaca's own client ids for them are not the node's. An oco's
// parent is its take-profit, so its one child is the stop.
func (a *Adapter) adoptLegs(o *alp.Order) {
	parent := NodeID(o.ClientOrderID)
	for i := range o.Legs {
		l := &o.Legs[i]
		if _, known := a.legName(l.ID); !known {
			suffix := roleSuffix(l.Type)
			if o.OrderClass == alp.OCO {
				suffix = node.StopLegSuffix
			}
			a.nameLeg(l.ID, parent+suffix)
		}
	}
}

func (a *Adapter) tif(symbol string, typ command.OrderType, t command.TimeInForce) alp.TimeInForce {
	a.mu.Lock()
	crypto := a.crypto[symbol]
	a.mu.Unlock()
	switch {
	case typ == command.Market && !crypto:
		return alp.Day
	case t == command.IOC:
		return alp.IOC
	}
	return alp.GTC
}

// Cancel asks Alpaca to cancel an order (DELETE answers 204; the order's
// state is then read back).
func (a *Adapter) Cancel(ctx context.Context, o node.VenueOrder) (node.VenueOrder, error) {
	id := o.VenueOrderID
	if id == "" {
		cur, err := a.Lookup(ctx, o)
		if err != nil {
			return node.VenueOrder{}, err
		}
		id = cur.VenueOrderID
	}
	if err := a.c.CancelOrder(id); err != nil {
		return node.VenueOrder{}, a.classify(err)
	}
	o.VenueOrderID = id
	return a.Lookup(ctx, o)
}

// Replace is Alpaca's replace (PATCH /v2/orders/{id}): a new order for
// the rest (qty less what filled) under the client id with the next .rN,
// carrying what changes — a limit's limit_price, a stop's stop_price, a
// stop_limit's stop_price and limit_price, a trailing stop's trail (in
// its own kind: trail_price or trail_percent). The answer counts the old
// order's fills.
func (a *Adapter) Replace(_ context.Context, o node.VenueOrder, r node.Replacement) (node.VenueOrder, error) {
	qty := r.Quantity
	if qty.IsZero() {
		qty = o.Quantity
	}
	rest := qty.Sub(o.Filled)
	if !rest.IsPositive() {
		return node.VenueOrder{}, &node.VenueError{Kind: node.ErrVenueRejected, Venue: a.name,
			Message: fmt.Sprintf("new quantity %s is not above the filled %s", qty, o.Filled)}
	}
	req := alp.ReplaceOrderRequest{Qty: &rest}
	or := func(d, otherwise decimal.Decimal) *decimal.Decimal {
		if d.IsZero() {
			return &otherwise
		}
		return &d
	}
	switch o.Type {
	case command.Limit:
		req.LimitPrice = or(r.Price, o.Price)
	case command.Stop:
		req.StopPrice = or(r.StopPrice, o.StopPrice)
	case command.StopLimit:
		req.StopPrice, req.LimitPrice = or(r.StopPrice, o.StopPrice), or(r.Price, o.Price)
	case command.TrailingStop:
		switch {
		case r.TrailAmount.IsPositive() && o.TrailPercent.IsPositive(), r.TrailPercent.IsPositive() && o.TrailAmount.IsPositive():
			return node.VenueOrder{}, &node.VenueError{Kind: node.ErrVenueRejected, Venue: a.name,
				Message: "alpaca replaces a trailing stop's trail in its own kind (trail_price or trail_percent): give the kind it was placed with, or cancel it and submit a new one; nothing was sent"}
		case r.TrailAmount.IsPositive():
			req.Trail = &r.TrailAmount
		case r.TrailPercent.IsPositive():
			req.Trail = &r.TrailPercent
		}
	default:
		return node.VenueOrder{}, &node.VenueError{Kind: node.ErrVenueRejected, Venue: a.name,
			Message: fmt.Sprintf("alpaca replaces limit, stop, stop_limit and trailing_stop orders, not %s; nothing was sent", o.Type)}
	}
	a.mu.Lock()
	a.replaced[o.ClientOrderID]++
	n := a.replaced[o.ClientOrderID]
	a.mu.Unlock()
	before, _ := a.priorOf(o.VenueOrderID)
	oldOwn := fills{qty: o.Filled.Sub(before.qty), notional: o.Filled.Mul(o.AveragePrice).Sub(before.notional)}
	req.ClientOrderID = o.ClientOrderID + ".r" + strconv.Itoa(n) // a child leg's too: it reads back as the node's leg id
	nw, err := a.c.ReplaceOrder(o.VenueOrderID, req)
	if err != nil {
		return node.VenueOrder{}, a.classify(err)
	}
	a.setPrior(nw.ID, before.add(oldOwn))
	out := a.cumulative(nw)
	out.ClientOrderID = o.ClientOrderID
	return out, nil
}
