package binancefuturesfake

import (
	"net/url"
	"strconv"
	"time"

	"github.com/shopspring/decimal"
)

// futTrade is one fill, as GET /fapi/v1/userTrades lists it.
type futTrade struct {
	id, orderID  int64
	symbol, side string
	price, qty   decimal.Decimal
	commission   decimal.Decimal
	time         int64
}

// recordTrade records o's fill (f.mu held) and charges its commission at
// the taker rate (none unless SetTakerCommission) off the wallet.
func (f *Fake) recordTrade(o *Order, qty, price decimal.Decimal) futTrade {
	t := futTrade{id: int64(len(f.trades) + 1), orderID: o.ID, symbol: o.Symbol, side: o.Side,
		price: price, qty: qty, commission: qty.Mul(price).Mul(f.taker).Round(8), time: time.Now().UnixMilli()}
	f.wallet = f.wallet.Sub(t.commission)
	f.trades = append(f.trades, t)
	return t
}

// SetTakerCommission sets the commission rate ("0.0004": 4 bps) every
// later trade pays, in USDT off the wallet, as the trade list and the
// stream's n report it.
func (f *Fake) SetTakerCommission(rate string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.taker = decimal.RequireFromString(rate)
}

// userTrades implements GET /fapi/v1/userTrades ("Account Trade List")
// for a symbol: orderId, fromId (not with startTime or endTime),
// startTime and endTime (at most 7 days apart), limit (default 500, at
// most 1000), oldest first.
func (f *Fake) userTrades(form url.Values) (int, any) {
	if f.symbols[form.Get("symbol")] == nil {
		return 400, errBody(-1121, "Invalid symbol.")
	}
	num := func(k string) (int64, bool) {
		n, err := strconv.ParseInt(form.Get(k), 10, 64)
		return n, err == nil
	}
	start, hasStart := num("startTime")
	end, hasEnd := num("endTime")
	fromID, hasFrom := num("fromId")
	orderID, hasOrder := num("orderId")
	if hasFrom && (hasStart || hasEnd) {
		return 400, errBody(-1128, "Combination of optional parameters invalid.")
	}
	if hasStart && hasEnd && end-start > 7*24*time.Hour.Milliseconds() {
		return 400, errBody(-4120, "startTime and endTime must be within 7 days")
	}
	limit := 500
	if l, ok := num("limit"); ok && l > 0 {
		limit = int(min(l, 1000))
	}
	out := []map[string]any{}
	for _, t := range f.trades {
		switch {
		case t.symbol != form.Get("symbol"),
			hasOrder && t.orderID != orderID,
			hasFrom && t.id < fromID,
			hasStart && t.time < start,
			hasEnd && t.time > end:
			continue
		}
		if len(out) == limit {
			break
		}
		out = append(out, map[string]any{"symbol": t.symbol, "id": t.id, "orderId": t.orderID, "side": t.side, "price": t.price.String(),
			"qty": t.qty.String(), "quoteQty": t.qty.Mul(t.price).String(), "realizedPnl": "0", "commission": t.commission.String(),
			"commissionAsset": "USDT", "time": t.time, "buyer": t.side == "BUY", "maker": false, "positionSide": "BOTH"})
	}
	return 200, out
}

// ChargeCommission sets the commission, in USDT, of each of orderID's trades.
func (f *Fake) ChargeCommission(orderID int64, commission string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.trades {
		if f.trades[i].orderID == orderID {
			f.trades[i].commission = decimal.RequireFromString(commission)
		}
	}
}

// DateTrades moves every trade to the time at.
func (f *Fake) DateTrades(at time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.trades {
		f.trades[i].time = at.UnixMilli()
	}
}
