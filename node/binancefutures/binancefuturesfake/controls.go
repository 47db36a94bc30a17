package binancefuturesfake

import (
	"fmt"
	"time"
	"wicket/node/venuefake"

	"github.com/shopspring/decimal"
)

// OnOrder runs hook after a plain order is taken (and filled, for a
// market order) and before its answer is written; nil removes it (the
// crash tests kill the node there).
func (f *Fake) OnOrder(hook func(Order)) { f.mu.Lock(); f.onOrder = hook; f.mu.Unlock() }

// SetHedgeMode puts the account in hedge (dual-side) mode, as a fresh
// account set so by hand would be.
func (f *Fake) SetHedgeMode(on bool) { f.mu.Lock(); f.dual = on; f.mu.Unlock() }

// SetPosition sets a symbol's position outright (an account that already
// holds one), at leverage and margin type when given.
func (f *Fake) SetPosition(symbol, amount, entry string, leverage int, marginType string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.positions[symbol]
	p.Amount, p.Entry = decimal.RequireFromString(amount), decimal.RequireFromString(entry)
	if leverage > 0 {
		p.Leverage = leverage
	}
	if marginType != "" {
		p.MarginType = marginType
	}
}

// Position is a symbol's position.
func (f *Fake) Position(symbol string) Position {
	f.mu.Lock()
	defer f.mu.Unlock()
	return *f.positions[symbol]
}

// Wallet is the USDT wallet balance.
func (f *Fake) Wallet() decimal.Decimal { f.mu.Lock(); defer f.mu.Unlock(); return f.wallet }

// Orders lists the plain orders, oldest first.
func (f *Fake) Orders() []Order { f.mu.Lock(); defer f.mu.Unlock(); return venuefake.Copies(f.orders) }

// Algos lists the algo orders, oldest first.
func (f *Fake) Algos() []Algo { f.mu.Lock(); defer f.mu.Unlock(); return venuefake.Copies(f.algos) }

// SetPrice moves a symbol's last and mark price, triggering the algo
// orders and filling the limits it reaches.
func (f *Fake) SetPrice(symbol, price string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.symbols[symbol]
	s.Price = price
	px := decimal.RequireFromString(price)
	for _, g := range f.algos {
		if g.Symbol == symbol && g.Status == "NEW" && f.reached(g, px) {
			f.trigger(g, px)
		}
	}
	for _, o := range f.orders {
		if o.Symbol == symbol && working(o) && o.Type == "LIMIT" && venuefake.Reaches(o.Side == "BUY", px, o.Price) {
			f.fill(o, o.Quantity.Sub(o.Filled), o.Price)
		}
	}
}

// AddFunding books a funding payment (income type FUNDING_FEE) for a
// symbol into the wallet and the income history.
func (f *Fake) AddFunding(symbol, amount string, at time.Time) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	amt := decimal.RequireFromString(amount)
	f.wallet = f.wallet.Add(amt)
	f.income = append(f.income, map[string]any{"symbol": symbol, "incomeType": "FUNDING_FEE", "income": amt.String(), "asset": "USDT",
		"info": "FUNDING_FEE", "time": at.UnixMilli(), "tranId": f.nextID, "tradeId": ""})
	return f.nextID
}

// Liquidate closes symbol's position at price as the venue's liquidation
// engine does: a LIQUIDATION order under an autoclose- client id, filled
// for the whole position, listed by forceOrders and reported on the
// stream.
func (f *Fake) Liquidate(symbol, price string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.positions[symbol]
	if p.Amount.IsZero() {
		return
	}
	f.symbols[symbol].Price = price
	f.nextID++
	side := "SELL"
	if p.Amount.IsNegative() {
		side = "BUY"
	}
	o := &Order{ID: f.nextID, ClientOrderID: fmt.Sprintf("autoclose-%d", f.nextID), Symbol: symbol, Side: side, Type: "LIQUIDATION", TimeInForce: "IOC",
		Quantity: p.Amount.Abs(), Price: decimal.RequireFromString(price), Status: "NEW", ReduceOnly: true, Time: time.Now().UnixMilli()}
	f.orders = append(f.orders, o)
	f.forced = append(f.forced, o)
	f.fill(o, o.Quantity, o.Price)
}

// FillPart fills qty of a working plain order at its limit.
func (f *Fake) FillPart(orderID int64, qty string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, o := range f.orders {
		if o.ID == orderID && working(o) {
			f.fill(o, decimal.RequireFromString(qty), o.Price)
		}
	}
}

// Cross fills every working limit in full at its price.
func (f *Fake) Cross() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, o := range f.orders {
		if working(o) && o.Type == "LIMIT" {
			f.fill(o, o.Quantity.Sub(o.Filled), o.Price)
		}
	}
}

// DropStreams closes every user data stream connection.
func (f *Fake) DropStreams() { f.streams.Drop() }
