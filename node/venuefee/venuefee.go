// Package venuefee keeps the commissions of a venue's orders as venues in
// Binance's family report them: per trade, never per order. Each order's
// trades are booked once by trade id (from an order answer's fills, a
// stream message or a read of the order's trades), so an order's fee is
// whole however its trades were learned, and a read is made only when
// the trades booked cover less than the order has filled.
//
// It keeps money as decimals and converts nothing: the adapter says what
// a trade's commission is worth in the account currency, or names the
// other asset it was charged in. It must never guess a price.
package venuefee

import (
	"sync"

	"github.com/shopspring/decimal"
)

// Trade is one trade's commission: Fee in the account currency, or Other
// in Asset when it was charged in another asset (BNB) that the adapter
// does not convert.
type Trade struct {
	ID       int64
	Quantity decimal.Decimal
	Fee      decimal.Decimal
	Asset    string
	Other    decimal.Decimal
}

// Ledger is the commissions of orders, by the venue's order id. The zero
// Ledger is ready; it is safe for concurrent use.
type Ledger struct {
	mu     sync.Mutex
	orders map[int64]*order
}

type order struct {
	qty, fee decimal.Decimal // the filled quantity the trades cover, their fees in the account currency
	trades   map[int64]bool
	asset    string
	other    decimal.Decimal
}

// Book records t for order id once, by its trade id.
func (l *Ledger) Book(id int64, t Trade) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.orders == nil {
		l.orders = map[int64]*order{}
	}
	o := l.orders[id]
	if o == nil {
		o = &order{trades: map[int64]bool{}}
		l.orders[id] = o
	}
	if o.trades[t.ID] {
		return
	}
	o.trades[t.ID] = true
	o.qty, o.fee = o.qty.Add(t.Quantity), o.fee.Add(t.Fee)
	if t.Asset != "" && !t.Other.IsZero() {
		o.asset, o.other = t.Asset, o.other.Add(t.Other)
	}
}

// Of is order id's commissions booked: in the account currency, and in
// another asset (named) when some were charged in one.
func (l *Ledger) Of(id int64) (fee decimal.Decimal, asset string, other decimal.Decimal) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if o := l.orders[id]; o != nil {
		return o.fee, o.asset, o.other
	}
	return decimal.Zero, "", decimal.Zero
}

// Cover makes order id's trades cover filled: when the trades booked
// cover less (a stream message missed, fills from before the process
// started), read lists the order's trades and each is booked. A read's
// error is returned as it is.
func (l *Ledger) Cover(id int64, filled decimal.Decimal, read func() ([]Trade, error)) error {
	l.mu.Lock()
	covered := decimal.Zero
	if o := l.orders[id]; o != nil {
		covered = o.qty
	}
	l.mu.Unlock()
	if !filled.GreaterThan(covered) {
		return nil
	}
	trades, err := read()
	if err != nil {
		return err
	}
	for _, t := range trades {
		l.Book(id, t)
	}
	return nil
}
