package alpacafake

import (
	"time"
	"wicket/node/venuefake"

	"github.com/shopspring/decimal"
)

// PartialFills makes market orders fill half at once and the rest at Cross.
func (f *Fake) PartialFills(on bool) { f.mu.Lock(); f.partial = on; f.mu.Unlock() }

// OnOrder runs after an order is taken and before its answer is written.
func (f *Fake) OnOrder(hook func(Order)) { f.mu.Lock(); f.onOrder = hook; f.mu.Unlock() }

// Orders lists every order taken, oldest first.
func (f *Fake) Orders() []Order { f.mu.Lock(); defer f.mu.Unlock(); return venuefake.Copies(f.orders) }

// Cash is the account's cash.
func (f *Fake) Cash() decimal.Decimal { f.mu.Lock(); defer f.mu.Unlock(); return f.cash }

// Position is the quantity held of symbol (as positions report it: SPY,
// BTCUSD), negative when short.
func (f *Fake) Position(symbol string) decimal.Decimal {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pos[symbol]
}

// Cross fills every working order in full at its limit (or the price).
func (f *Fake) Cross() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, o := range f.orders {
		if working(o) {
			px := o.Limit
			switch o.Type {
			case "market":
				px = decimal.RequireFromString(f.assets[o.Symbol].Price)
			case "stop", "trailing_stop":
				px = o.Stop
			}
			f.fill(o, o.Qty.Sub(o.Filled), px)
		}
	}
}

// FillPart fills qty of a working order at its limit price.
func (f *Fake) FillPart(id, qty string) { f.FillPartAt(id, qty, "") }

// FillPartAt fills qty of a working order at price ("": its limit).
func (f *Fake) FillPartAt(id, qty, price string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if o := f.find(id); o != nil && working(o) {
		px := o.Limit
		if price != "" {
			px = decimal.RequireFromString(price)
		}
		f.fill(o, decimal.RequireFromString(qty), px)
	}
}

// SetPrice moves a symbol's last trade price: triggered stops fill at it
// (a stop_limit rests as its limit), trailing stops follow it, and
// resting limits it reaches fill at their limit.
func (f *Fake) SetPrice(symbol, price string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a := f.assets[symbol]
	a.Price = price
	px := decimal.RequireFromString(price)
	for _, o := range f.orders {
		if o.Symbol == symbol && working(o) && o.Type != "market" {
			f.execute(o, px)
		}
	}
}

// DropStreams closes every trade_updates connection.
func (f *Fake) DropStreams() { f.streams.Drop() }

// SetClosed closes the market until next (GET /v2/clock says is_open
// false until then); a zero next opens it again.
func (f *Fake) SetClosed(next time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if next.IsZero() {
		f.closed = nil
		return
	}
	f.closed = &next
}
