package binancefake

import (
	"strconv"
	"wicket/node/venuefake"

	"github.com/shopspring/decimal"
)

// QueueMarket makes market orders wait in the matching engine, taken
// (NEW) but not traded, until Cross: the moment between Binance taking an
// order and its trade, which a lookup can see.
func (f *Fake) QueueMarket(on bool) { f.mu.Lock(); f.queued = on; f.mu.Unlock() }

// PartialFills makes market orders fill half at once and the rest at Cross.
func (f *Fake) PartialFills(on bool) { f.mu.Lock(); f.partial = on; f.mu.Unlock() }

// LeaveLinked is a fault: while on, a leg of an oco that executes leaves
// the other leg working, as a venue that failed its own cancel would (the
// node must find and cancel it).
func (f *Fake) LeaveLinked(on bool) { f.mu.Lock(); f.unlinked = on; f.mu.Unlock() }

// OnOrder runs after an order is taken and before its answer is written;
// for an order list, with its last leg.
func (f *Fake) OnOrder(hook func(Order)) { f.mu.Lock(); f.onOrder = hook; f.mu.Unlock() }

// RejectOrders makes every new order answer 400 with code -2010 and msg
// (a venue whose error text echoes what it was sent, for one); "" takes
// orders again.
func (f *Fake) RejectOrders(msg string) { f.mu.Lock(); f.rejectMsg = msg; f.mu.Unlock() }

// Subscriptions counts the user data stream subscriptions accepted.
func (f *Fake) Subscriptions() int { f.mu.Lock(); defer f.mu.Unlock(); return f.subs }

// RefuseStreams makes every new subscription answer with status and the
// error code and message (Binance's WebSocket API error form); status 0
// accepts them again. Open subscriptions are not touched.
func (f *Fake) RefuseStreams(status, code int, msg string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.refuse = nil
	if status != 0 {
		f.refuse = &refusal{status, code, msg}
	}
}

// Orders lists every order taken, oldest first.
func (f *Fake) Orders() []Order { f.mu.Lock(); defer f.mu.Unlock(); return venuefake.Copies(f.orders) }

// Balance is an asset's free balance.
func (f *Fake) Balance(asset string) decimal.Decimal {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.balances[asset]
}

// SetPrice moves a symbol's last price: stops it reaches trigger (a
// STOP_LOSS fills at it, a STOP_LOSS_LIMIT works as its limit), trailing
// stops follow it, resting limits it reaches fill at their limit.
func (f *Fake) SetPrice(symbol, price string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.symbols[symbol].Price = price
	px := decimal.RequireFromString(price)
	for _, o := range f.orders {
		if o.Symbol == symbol && working(o) && o.Type != "MARKET" {
			f.match(o, px)
		}
	}
}

// AddExternal places an order as if from another client (not the node).
func (f *Fake) AddExternal(symbol, side, qty, price string) Order {
	f.mu.Lock()
	defer f.mu.Unlock()
	o := f.newOrder(symbol, side, "LIMIT", "GTC", "web_"+strconv.FormatInt(f.nextID, 10), decimal.RequireFromString(qty), decimal.RequireFromString(price))
	return *o
}

// Cross fills every working order in full at its limit (or the last price).
func (f *Fake) Cross() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, o := range f.orders {
		if o.Status == "NEW" || o.Status == "PARTIALLY_FILLED" {
			px := o.Price
			if o.Type == "MARKET" || o.Type == "STOP_LOSS" {
				px = decimal.RequireFromString(f.symbols[o.Symbol].Price)
			}
			if working(o) { // an earlier fill may have expired this leg of its list
				f.fill(o, o.Quantity.Sub(o.Filled), px)
			}
		}
	}
}

// FillPart fills qty of a working order at its limit price.
func (f *Fake) FillPart(orderID int64, qty string) { f.FillPartAt(orderID, qty, "") }

// FillPartAt fills qty of a working order at price ("": its limit).
func (f *Fake) FillPartAt(orderID int64, qty, price string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, o := range f.orders {
		if o.ID == orderID && working(o) {
			px := o.Price
			if price != "" {
				px = decimal.RequireFromString(price)
			}
			f.fill(o, decimal.RequireFromString(qty), px)
		}
	}
}

// Expire ends a working order's rest at the venue (EXPIRED, reported on
// the stream), as Binance does a market order's rest it cannot fill.
func (f *Fake) Expire(orderID int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, o := range f.orders {
		if o.ID == orderID && working(o) {
			o.Status = "EXPIRED"
			f.report(o, "EXPIRED", decimal.Zero, decimal.Zero)
		}
	}
}

// DropStreams closes every user data stream connection.
func (f *Fake) DropStreams() { f.streams.Drop() }

// Streams counts the open stream connections.
func (f *Fake) Streams() int { return f.streams.Len() }

// CancelAlls counts the cancel-all requests that canceled something.
func (f *Fake) CancelAlls() int { f.mu.Lock(); defer f.mu.Unlock(); return f.cancelAlls }
