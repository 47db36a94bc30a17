package binance

import (
	"context"

	bn "github.com/adshao/go-binance/v2"
	"github.com/shopspring/decimal"

	"wicket/node/venuecall"
	"wicket/node/venuefee"
)

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
	a.fees.Book(orderID, a.trade(symbol, tradeID, qty, price, commission, asset))
}

// trade is one trade's commission as the ledger keeps it.
func (a *Adapter) trade(symbol string, tradeID int64, qty, price, commission decimal.Decimal, asset string) venuefee.Trade {
	t := venuefee.Trade{ID: tradeID, Quantity: qty}
	fee, inAccount := a.feeIn(symbol, asset, commission, price)
	t.Fee = fee
	if !inAccount && asset != "" {
		t.Asset, t.Other = asset, commission
	}
	return t
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
	fee, _, _ := a.fees.Of(orderID)
	return fee
}

// otherFeeOf is the commissions booked for one incarnation in another
// asset, and the asset.
func (a *Adapter) otherFeeOf(orderID int64) (string, decimal.Decimal) {
	_, asset, other := a.fees.Of(orderID)
	return asset, other
}

// coverFees makes the ledger of incarnation orderID (Binance's symbol)
// cover its filled quantity: when trades are missing (a fill a REST read
// or the stream reports past the ones booked: a stream message missed, or
// fills from before the process started), the order's trades are read
// (GET /api/v3/myTrades?orderId=, whose commission fields History reads
// too), so the fee reported with a fill is whole when the node first
// books it.
func (a *Adapter) coverFees(ctx context.Context, symbol string, orderID int64, filled decimal.Decimal) error {
	return a.fees.Cover(orderID, filled, func() ([]venuefee.Trade, error) {
		trades, err := venuecall.Read(ctx, a.tr, func() ([]*bn.TradeV3, error) {
			return a.c.NewListTradesService().Symbol(symbol).OrderId(orderID).Limit(maxTrades).Do(ctx)
		})
		if err != nil {
			return nil, a.classify(err)
		}
		out := make([]venuefee.Trade, 0, len(trades))
		for _, t := range trades {
			out = append(out, a.trade(symbol, t.ID, dec(t.Quantity), dec(t.Price), dec(t.Commission), t.CommissionAsset))
		}
		return out, nil
	})
}
