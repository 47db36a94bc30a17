package binancefutures

import (
	"strings"
	"time"
	"wicket/node"
	"wicket/node/binance"
	"wicket/node/command"

	"github.com/adshao/go-binance/v2/futures"
	"github.com/shopspring/decimal"
)

func dec(s string) decimal.Decimal {
	d, err := decimal.NewFromString(s)
	if err != nil {
		return decimal.Zero
	}
	return d
}

func msTime(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

func side(s command.Side) futures.SideType {
	if s == command.Sell {
		return futures.SideTypeSell
	}
	return futures.SideTypeBuy
}

func sideOf(s string) command.Side {
	if s == string(futures.SideTypeSell) {
		return command.Sell
	}
	return command.Buy
}

func tif(t command.TimeInForce) futures.TimeInForceType {
	if t == command.IOC {
		return futures.TimeInForceTypeIOC
	}
	return futures.TimeInForceTypeGTC
}

func tifOf(t string) command.TimeInForce {
	if t == string(futures.TimeInForceTypeIOC) {
		return command.IOC
	}
	return command.GTC
}

// typeOf maps a futures order type (of an order or an algo order).
func typeOf(t string) command.OrderType {
	switch t {
	case "MARKET", "LIQUIDATION":
		return command.Market
	case "STOP_MARKET":
		return command.Stop
	case "STOP":
		return command.StopLimit
	case "TRAILING_STOP_MARKET":
		return command.TrailingStop
	}
	return command.Limit // LIMIT, TAKE_PROFIT (a take-profit limit)
}

// stateOf maps an order's status (futures "Common Definitions").
func stateOf(s string) node.VenueState { return binance.StateOf(s) }

// clientID is the node's id as Binance carries it (the spot adapter's
// mapping: the same 36-character rule).
func clientID(nodeID string) (string, error) { return binance.ClientID(nodeID) }

// nodeID reverses clientID.
func nodeID(venueID string) string { return binance.NodeID(venueID) }

// isExit reports whether a request is an exit, sent reduceOnly: a
// closing order (flatten, market_exit), a linked leg or a fired trigger
// (by its client id's suffix), or a stop type (the node's protective
// orders).
func isExit(r node.OrderRequest) bool {
	return r.ReduceOnly || r.Type.Protective() || strings.HasSuffix(r.ClientOrderID, node.StopLegSuffix) ||
		strings.HasSuffix(r.ClientOrderID, node.TakeProfitLegSuffix) || strings.HasSuffix(r.ClientOrderID, node.FireSuffix)
}
