package binance

import (
	"context"
	"strconv"
	"time"

	bn "github.com/adshao/go-binance/v2"

	"wicket/node"
	"wicket/node/command"
	"wicket/node/venuecall"
)

// History reads the account's own trades in [from, to) for every symbol
// of the venue (as the node read them from exchangeInfo at start) (GET /api/v3/myTrades, at most 24 hours a call, 1000 a
// page; a full page is followed by fromId). A fee charged in the quote
// asset is in the account currency, one in the base asset is priced at
// the trade's price; any other asset (BNB) is left in it, named. Spot
// keeps no funding.
func (a *Adapter) History(ctx context.Context, from, to time.Time) (node.VenueHistory, error) {
	var out node.VenueHistory
	a.mu.Lock()
	listed := make(map[string]string, len(a.symbols)) // Binance's symbol → the list's
	for vs := range a.symbols {
		listed[vs] = a.syms.Listed(vs)
	}
	a.mu.Unlock()
	for vs, ns := range listed {
		start := from
		for start.Before(to) {
			end := start.Add(24 * time.Hour)
			if end.After(to) {
				end = to
			}
			trades, err := a.tradesIn(ctx, vs, start, end)
			if err != nil {
				return node.VenueHistory{}, err
			}
			for _, t := range trades {
				out.Trades = append(out.Trades, a.venueTrade(ns, t))
			}
			start = end
		}
	}
	return out, nil
}

// tradesIn is symbol's trades in [start, end), end at most 24 hours on.
func (a *Adapter) tradesIn(ctx context.Context, symbol string, start, end time.Time) ([]*bn.TradeV3, error) {
	last := end.UnixMilli() - 1
	page, err := venuecall.Read(ctx, a.tr, func() ([]*bn.TradeV3, error) {
		return a.c.NewListTradesService().Symbol(symbol).StartTime(start.UnixMilli()).EndTime(last).Limit(maxTrades).Do(ctx)
	})
	if err != nil {
		return nil, a.classify(err)
	}
	all := page
	for len(page) == maxTrades {
		next := page[len(page)-1].ID + 1
		page, err = venuecall.Read(ctx, a.tr, func() ([]*bn.TradeV3, error) {
			return a.c.NewListTradesService().Symbol(symbol).FromID(next).Limit(maxTrades).Do(ctx)
		})
		if err != nil {
			return nil, a.classify(err)
		}
		n := len(page)
		for i, t := range page {
			if t.Time > last {
				n = i
				break
			}
		}
		all = append(all, page[:n]...)
		if n < len(page) {
			break
		}
	}
	return all, nil
}

func (a *Adapter) venueTrade(nodeSymbol string, t *bn.TradeV3) node.VenueTrade {
	vt := node.VenueTrade{ID: strconv.FormatInt(t.ID, 10), VenueOrderID: strconv.FormatInt(t.OrderID, 10), Symbol: nodeSymbol,
		Side: command.Sell, Quantity: dec(t.Quantity), Price: dec(t.Price), Fee: dec(t.Commission), Time: time.UnixMilli(t.Time).UTC()}
	if t.IsBuyer {
		vt.Side = command.Buy
	}
	if fee, ok := a.feeIn(t.Symbol, t.CommissionAsset, dec(t.Commission), vt.Price); ok {
		vt.Fee = fee
	} else {
		vt.FeeAsset = t.CommissionAsset // left in it, named
	}
	return vt
}
