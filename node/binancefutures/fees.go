package binancefutures

import (
	"context"

	"github.com/adshao/go-binance/v2/futures"
	"github.com/shopspring/decimal"

	"wicket/node"
	"wicket/node/venuecall"
	"wicket/node/venuefee"
)

// trade is one trade's commission as the ledger keeps it: in the account
// currency when charged in it (USDT, the default), else in the asset that
// paid it (BNB with the fee discount on), never converted here.
func (a *Adapter) trade(id int64, qty, commission decimal.Decimal, asset string) venuefee.Trade {
	a.mu.Lock()
	quote := a.quote
	a.mu.Unlock()
	t := venuefee.Trade{ID: id, Quantity: qty}
	if commission.IsZero() || asset == "" || asset == quote {
		t.Fee = commission
	} else {
		t.Asset, t.Other = asset, commission
	}
	return t
}

// withFee sets vo's commissions, those of the venue's order orderID on
// symbol (Binance's), from the ledger: first, when the trades booked cover
// less than the order filled, its trades are read (GET
// /fapi/v1/userTrades?orderId=). A failed read leaves the fee as booked
// and is returned.
func (a *Adapter) withFee(ctx context.Context, vo node.VenueOrder, symbol string, orderID int64) (node.VenueOrder, error) {
	err := a.fees.Cover(orderID, vo.Filled, func() ([]venuefee.Trade, error) {
		trades, err := venuecall.Read(ctx, a.tr, func() ([]*futures.AccountTrade, error) {
			return a.c.NewListAccountTradeService().Symbol(symbol).OrderID(orderID).Limit(maxTrades).Do(ctx)
		})
		if err != nil {
			return nil, a.classify(err)
		}
		out := make([]venuefee.Trade, 0, len(trades))
		for _, t := range trades {
			out = append(out, a.trade(t.ID, dec(t.Quantity), dec(t.Commission), t.CommissionAsset))
		}
		return out, nil
	})
	vo.Fee, vo.FeeAsset, vo.AssetFee = a.fees.Of(orderID)
	return vo, err
}
