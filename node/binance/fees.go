package binance

import (
	"context"

	bn "github.com/adshao/go-binance/v2"
	"github.com/shopspring/decimal"

	"wicket/node/venuecall"
)

// feeLedger is one incarnation's commissions as the adapter has learned
// them, trade by trade (Binance reports a commission per trade, never
// per order): from the FULL answer's fills, the executionReport's n and
// N, or GET /api/v3/myTrades?orderId=.
type feeLedger struct {
	qty    decimal.Decimal // the filled quantity the trades cover
	fee    decimal.Decimal // their commissions in the account currency
	trades map[int64]bool  // trade ids booked
	// other is their commissions in another asset (BNB), kept in it
	// (node/feeasset.go); asset names it.
	asset string
	other decimal.Decimal
}

// feeIn is a commission in the account currency (the symbol's quote
// asset), as History states a trade's: one charged in the quote asset as
// it is, one in the base asset (a buy's default) at the trade's price.
// One charged in another asset (BNB), or on a symbol quoted in another
// currency than the account's, is not in the account currency: ok is
// false, and nothing converts it.
func (a *Adapter) feeIn(symbol, asset string, commission, price decimal.Decimal) (fee decimal.Decimal, ok bool) {
	if commission.IsZero() {
		return decimal.Zero, true
	}
	a.mu.Lock()
	s, quote := a.symbols[symbol], a.quote
	a.mu.Unlock()
	switch {
	case s == nil || (quote != "" && s.QuoteAsset != quote):
	case asset == s.QuoteAsset:
		return commission, true
	case asset == s.BaseAsset:
		return commission.Mul(price), true
	}
	return decimal.Zero, false
}

// bookTrade records one trade of order orderID (Binance's symbol) once,
// by its trade id.
func (a *Adapter) bookTrade(orderID int64, symbol string, tradeID int64, qty, price, commission decimal.Decimal, asset string) {
	fee, inAccount := a.feeIn(symbol, asset, commission, price)
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.fees == nil {
		a.fees = map[int64]*feeLedger{}
	}
	l := a.fees[orderID]
	if l == nil {
		l = &feeLedger{trades: map[int64]bool{}}
		a.fees[orderID] = l
	}
	if l.trades[tradeID] {
		return
	}
	l.trades[tradeID] = true
	l.qty, l.fee = l.qty.Add(qty), l.fee.Add(fee)
	if !inAccount && asset != "" {
		l.asset, l.other = asset, l.other.Add(commission)
	}
}

// bookFills records a FULL answer's fills.
func (a *Adapter) bookFills(r *bn.CreateOrderResponse) {
	for _, f := range r.Fills {
		if f != nil {
			a.bookTrade(r.OrderID, r.Symbol, f.TradeID, dec(f.Quantity), dec(f.Price), dec(f.Commission), f.CommissionAsset)
		}
	}
}

// feeOf is the commissions booked for one incarnation, in the account
// currency.
func (a *Adapter) feeOf(orderID int64) decimal.Decimal {
	a.mu.Lock()
	defer a.mu.Unlock()
	if l := a.fees[orderID]; l != nil {
		return l.fee
	}
	return decimal.Zero
}

// otherFeeOf is the commissions booked for one incarnation in another
// asset, and the asset.
func (a *Adapter) otherFeeOf(orderID int64) (string, decimal.Decimal) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if l := a.fees[orderID]; l != nil {
		return l.asset, l.other
	}
	return "", decimal.Zero
}

// coverFees makes the ledger of incarnation orderID (Binance's symbol)
// cover its filled quantity: when trades are missing (a fill a REST read
// or the stream reports past the ones booked: a stream message missed, or
// fills from before the process started), the order's trades are read
// (GET /api/v3/myTrades?orderId=, whose commission fields History reads
// too), so the fee reported with a fill is whole when the node first
// books it.
func (a *Adapter) coverFees(ctx context.Context, symbol string, orderID int64, filled decimal.Decimal) error {
	a.mu.Lock()
	covered := decimal.Zero
	if l := a.fees[orderID]; l != nil {
		covered = l.qty
	}
	a.mu.Unlock()
	if !filled.GreaterThan(covered) {
		return nil
	}
	trades, err := venuecall.Read(ctx, a.tr, func() ([]*bn.TradeV3, error) {
		return a.c.NewListTradesService().Symbol(symbol).OrderId(orderID).Limit(maxTrades).Do(ctx)
	})
	if err != nil {
		return a.classify(err)
	}
	for _, t := range trades {
		a.bookTrade(orderID, symbol, t.ID, dec(t.Quantity), dec(t.Price), dec(t.Commission), t.CommissionAsset)
	}
	return nil
}
