package binance

import (
	"context"
	"errors"
	"strconv"

	bn "github.com/adshao/go-binance/v2"

	"wicket/node"
)

// CancelAll is Binance's own cancel-all (DELETE /api/v3/openOrders), one
// request per symbol: every open order of the account on each symbol is
// canceled, order lists included. It answers the single orders it
// canceled (order lists' legs are not listed; a caller settles them by
// reading them). A symbol with nothing open is skipped.
func (a *Adapter) CancelAll(ctx context.Context, symbols []string) ([]node.VenueOrder, error) {
	var out []node.VenueOrder
	for _, sym := range symbols {
		res, err := a.c.NewCancelOpenOrdersService().Symbol(a.syms.Venue(sym)).Do(ctx)
		if err != nil {
			err = a.classify(err)
			if errors.Is(err, node.ErrVenueNotFound) { // nothing open on it
				continue
			}
			return out, err
		}
		for _, o := range res.Orders {
			out = append(out, a.fromCancel(o))
		}
	}
	return out, nil
}

// fromCancel is a cancel's answer as the node reads it.
func (a *Adapter) fromCancel(res *bn.CancelOrderResponse) node.VenueOrder {
	out := node.VenueOrder{ClientOrderID: NodeID(res.OrigClientOrderID), VenueOrderID: strconv.FormatInt(res.OrderID, 10), Symbol: res.Symbol,
		Side: sideOf(res.Side), Type: typeOf(res.Type), TimeInForce: tifOf(res.TimeInForce), Quantity: dec(res.OrigQuantity), Price: dec(res.Price),
		State: stateOf(res.Status), Filled: dec(res.ExecutedQuantity), Updated: msTime(res.TransactTime)}
	out.AveragePrice, out.Notional = avg(res.CummulativeQuoteQuantity, out.Filled), dec(res.CummulativeQuoteQuantity)
	return a.cumulative(out, res.OrderID)
}
