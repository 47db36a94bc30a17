package binancefake

import (
	"net/url"
	"strconv"
	"time"
	"wicket/node/venuefake"

	"github.com/shopspring/decimal"
)

// tradesFor selects GET /api/v3/myTrades's trades as the "Account trade
// list" section documents its parameters: orderId (with fromId at most),
// fromId (trades with an id at or above it, oldest first), startTime and
// endTime (at most 24 hours apart; the oldest in the span first), or
// none (the most recent). A nonzero status is the refusal.
func (f *Fake) tradesFor(form url.Values, limit int) ([]trade, int, any) {
	num := func(k string) (int64, bool, bool) {
		v := form.Get(k)
		if v == "" {
			return 0, false, true
		}
		n, err := strconv.ParseInt(v, 10, 64)
		return n, true, err == nil
	}
	start, hasStart, ok1 := num("startTime")
	end, hasEnd, ok2 := num("endTime")
	fromID, hasFrom, ok3 := num("fromId")
	orderID, hasOrder, ok4 := num("orderId")
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return nil, 400, errBody(-1100, "Illegal characters found in a parameter.")
	}
	if hasFrom && (hasStart || hasEnd) {
		return nil, 400, errBody(-1128, "Combination of optional parameters invalid.")
	}
	if hasStart && hasEnd && end-start > 24*time.Hour.Milliseconds() {
		return nil, 400, errBody(-1127, "More than 24 hours between startTime and endTime.")
	}
	q := venuefake.TradeRange{Symbol: form.Get("symbol"), OrderID: orderID, FromID: fromID, Start: start, End: end,
		HasOrder: hasOrder, HasFrom: hasFrom, HasStart: hasStart, HasEnd: hasEnd}
	var list []trade
	for _, t := range f.trades {
		if q.Selects(t.symbol, t.id, t.orderID, t.time) {
			list = append(list, t)
		}
	}
	if hasFrom || hasStart {
		return list[:min(len(list), limit)], 0, nil
	}
	return list[max(0, len(list)-limit):], 0, nil
}

// Commission makes every trade from now on charge rate (0.001 is
// Binance's base 0.1%) of what the account receives, as Binance charges
// without BNB: a buy's in the base asset, a sell's in the quote asset,
// rounded to 8 decimals. The trade lists it (myTrades' commission and
// commissionAsset, the FULL answer's fills, the executionReport's n and
// N) and the balance pays it.
func (f *Fake) Commission(rate string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rate = decimal.RequireFromString(rate)
}

// CommissionInBNB makes the commission be paid in BNB instead (Binance's
// "use BNB to pay for fees"): rate of the trade's quote amount, at
// bnbPrice (BNB's price in the quote asset). "" pays it as Commission
// says again.
func (f *Fake) CommissionInBNB(bnbPrice string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.bnbPrice = decimal.Zero
	if bnbPrice != "" {
		f.bnbPrice = decimal.RequireFromString(bnbPrice)
	}
}

// charge is one trade's commission and its asset (f.mu held).
func (f *Fake) charge(s *Symbol, side string, qty, price decimal.Decimal) (decimal.Decimal, string) {
	switch {
	case f.rate.IsZero():
		return decimal.Zero, s.Quote
	case f.bnbPrice.IsPositive():
		return qty.Mul(price).Mul(f.rate).Div(f.bnbPrice).Round(8), "BNB"
	case side == "BUY":
		return qty.Mul(f.rate).Round(8), s.Base
	}
	return qty.Mul(price).Mul(f.rate).Round(8), s.Quote
}

// ChargeCommission sets the commission of orderID's trades: commission
// each, in asset.
func (f *Fake) ChargeCommission(orderID int64, commission, asset string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.trades {
		if f.trades[i].orderID == orderID {
			f.trades[i].commission, f.trades[i].commissionIn = decimal.RequireFromString(commission), asset
		}
	}
}

// AddTrade records a trade of an order the node never placed (made at
// the venue's own site, say), at the time given; it returns the order id.
func (f *Fake) AddTrade(symbol, side, qty, price string, at time.Time) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	f.trades = append(f.trades, trade{id: int64(len(f.trades) + 1), orderID: f.nextID, symbol: symbol, price: decimal.RequireFromString(price),
		qty: decimal.RequireFromString(qty), buyer: side == "BUY", commissionIn: f.symbols[symbol].Quote, time: at.UnixMilli()})
	return f.nextID
}

// DateTrades moves every trade to the time at, so a test's trades fall
// on the day it asks about.
func (f *Fake) DateTrades(at time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.trades {
		f.trades[i].time = at.UnixMilli()
	}
}
