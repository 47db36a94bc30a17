package alpaca

import (
	"wicket/node"
	"wicket/node/command"
	"wicket/node/venuecall"

	alp "github.com/alpacahq/alpaca-trade-api-go/v3/alpaca"
)

// stateOf maps Alpaca's order statuses (Trading API "Orders", order
// lifecycle).
func stateOf(s string) node.VenueState { return orderStates.Of(s) }

// orderStates are Alpaca's order statuses as the node's states; new,
// accepted, pending_new, partially_filled, pending_cancel,
// pending_replace, held, calculated and any other are open.
var orderStates = venuecall.States{
	Filled:   []string{"filled"},
	Canceled: []string{"canceled", "expired", "done_for_day", "replaced"},
	Rejected: []string{"rejected", "suspended"},
}

func (a *Adapter) fromOrder(o *alp.Order) node.VenueOrder {
	cid := NodeID(o.ClientOrderID)
	if id, ok := a.legName(o.ID); ok {
		cid = id
	}
	out := node.VenueOrder{ClientOrderID: cid, VenueOrderID: o.ID, Symbol: a.nodeSymbol(o.Symbol),
		Side: command.Side(o.Side), Type: typeOf(o.Type), TimeInForce: command.GTC, State: stateOf(o.Status), Filled: o.FilledQty, Updated: o.UpdatedAt}
	if o.TimeInForce == alp.IOC {
		out.TimeInForce = command.IOC
	}
	if o.Qty != nil {
		out.Quantity = *o.Qty
	}
	if o.LimitPrice != nil {
		out.Price = *o.LimitPrice
	}
	if o.StopPrice != nil {
		out.StopPrice = *o.StopPrice
	}
	if o.FilledAvgPrice != nil {
		out.AveragePrice = *o.FilledAvgPrice
	}
	if o.TrailPercent != nil {
		out.TrailPercent = *o.TrailPercent
	}
	if o.TrailPrice != nil {
		out.TrailAmount = *o.TrailPrice
	}
	out.Notional = own(o).notional
	return out
}

// typeOf maps Alpaca's order types.
func typeOf(t alp.OrderType) command.OrderType {
	switch t {
	case alp.Limit:
		return command.Limit
	case alp.Stop:
		return command.Stop
	case alp.StopLimit:
		return command.StopLimit
	case alp.TrailingStop:
		return command.TrailingStop
	}
	return command.Market
}
