package binance

import (
	"strconv"
	"time"
	"wicket/node"
	"wicket/node/command"
	"wicket/node/venuecall"

	bn "github.com/adshao/go-binance/v2"

	"github.com/shopspring/decimal"
)

func minNotional(filters []map[string]any) decimal.Decimal {
	for _, f := range filters {
		if t, _ := f["filterType"].(string); t == "MIN_NOTIONAL" {
			if v, ok := f["minNotional"].(string); ok {
				return dec(v)
			}
		}
	}
	return decimal.Zero
}

func dec(s string) decimal.Decimal {
	d, err := decimal.NewFromString(s)
	if err != nil {
		return decimal.Zero
	}
	return d
}

func avg(quote string, filled decimal.Decimal) decimal.Decimal {
	if !filled.IsPositive() {
		return decimal.Zero
	}
	return dec(quote).DivRound(filled, 10)
}

func msTime(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

func side(s command.Side) bn.SideType {
	if s == command.Sell {
		return bn.SideTypeSell
	}
	return bn.SideTypeBuy
}

func sideOf(s bn.SideType) command.Side {
	if s == bn.SideTypeSell {
		return command.Sell
	}
	return command.Buy
}

func tif(t command.TimeInForce) bn.TimeInForceType {
	if t == command.IOC {
		return bn.TimeInForceTypeIOC
	}
	return bn.TimeInForceTypeGTC
}

func tifOf(t bn.TimeInForceType) command.TimeInForce {
	if t == bn.TimeInForceTypeIOC {
		return command.IOC
	}
	return command.GTC
}

func typeOf(t bn.OrderType) command.OrderType {
	switch t {
	case bn.OrderTypeMarket:
		return command.Market
	case bn.OrderTypeStopLossLimit, bn.OrderTypeTakeProfitLimit:
		return command.StopLimit
	case bn.OrderTypeStopLoss, bn.OrderTypeTakeProfit:
		return command.Stop
	}
	return command.Limit // LIMIT, LIMIT_MAKER
}

// stateOf maps Binance's order status (spot API "ENUM definitions", order
// status).
func stateOf(s bn.OrderStatusType) node.VenueState { return StateOf(string(s)) }

// StateOf is the node's state of a Binance order status (spot and USDⓈ-M
// alike).
func StateOf(status string) node.VenueState { return orderStates.Of(status) }

func fromOrder(o *bn.Order) node.VenueOrder {
	out := node.VenueOrder{ClientOrderID: NodeID(o.ClientOrderID), VenueOrderID: strconv.FormatInt(o.OrderID, 10), Symbol: o.Symbol,
		Side: sideOf(o.Side), Type: typeOf(o.Type), TimeInForce: tifOf(o.TimeInForce), Quantity: dec(o.OrigQuantity), Price: dec(o.Price),
		State: stateOf(o.Status), Filled: dec(o.ExecutedQuantity), Updated: msTime(o.UpdateTime), StopPrice: dec(o.StopPrice)}
	out.AveragePrice, out.Notional = avg(o.CummulativeQuoteQuantity, out.Filled), dec(o.CummulativeQuoteQuantity)
	return out
}

func fromCreate(r *bn.CreateOrderResponse) node.VenueOrder {
	out := node.VenueOrder{ClientOrderID: NodeID(r.ClientOrderID), VenueOrderID: strconv.FormatInt(r.OrderID, 10), Symbol: r.Symbol,
		Side: sideOf(r.Side), Type: typeOf(r.Type), TimeInForce: tifOf(r.TimeInForce), Quantity: dec(r.OrigQuantity), Price: dec(r.Price),
		State: stateOf(r.Status), Filled: dec(r.ExecutedQuantity), Updated: msTime(r.TransactTime)}
	out.AveragePrice, out.Notional = avg(r.CummulativeQuoteQuantity, out.Filled), dec(r.CummulativeQuoteQuantity)
	return out
}

// orderStates are Binance's order statuses as the node's states; NEW,
// PARTIALLY_FILLED and PENDING_CANCEL are open.
var orderStates = venuecall.States{
	Filled:   []string{string(bn.OrderStatusTypeFilled)},
	Canceled: []string{string(bn.OrderStatusTypeCanceled), string(bn.OrderStatusTypeExpired), "EXPIRED_IN_MATCH"},
	Rejected: []string{string(bn.OrderStatusTypeRejected)},
}
