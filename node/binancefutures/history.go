package binancefutures

import (
	"context"
	"strconv"
	"time"

	"github.com/adshao/go-binance/v2/futures"

	"wicket/node"
	"wicket/node/command"
	"wicket/node/venuecall"
)

// maxTrades is the most trades one GET /fapi/v1/userTrades returns.
const maxTrades = 1000

// History reads the account's trades in [from, to) for every symbol the
// node trades here (GET /fapi/v1/userTrades, at most 7 days a call, 1000
// a page; a full page is followed by fromId) and its funding in the span
// (GET /fapi/v1/income, FUNDING_FEE, as Funding reads it). Commission is
// charged in the margin asset, the account currency; one in another asset
// (BNB) is named.
func (a *Adapter) History(ctx context.Context, from, to time.Time) (node.VenueHistory, error) {
	out := node.VenueHistory{FundingKnown: true}
	a.mu.Lock()
	listed := make(map[string]string, len(a.symbols))
	for vs := range a.symbols {
		listed[vs] = a.syms.Listed(vs)
	}
	quote := a.quote
	a.mu.Unlock()
	last := to.UnixMilli() - 1
	for vs, ns := range listed {
		page, err := venuecall.Read(ctx, a.tr, func() ([]*futures.AccountTrade, error) {
			return a.c.NewListAccountTradeService().Symbol(vs).StartTime(from.UnixMilli()).EndTime(last).Limit(maxTrades).Do(ctx)
		})
		if err != nil {
			return node.VenueHistory{}, a.classify(err)
		}
		all := page
		for len(page) == maxTrades {
			next := page[len(page)-1].ID + 1
			page, err = venuecall.Read(ctx, a.tr, func() ([]*futures.AccountTrade, error) {
				return a.c.NewListAccountTradeService().Symbol(vs).FromID(next).Limit(maxTrades).Do(ctx)
			})
			if err != nil {
				return node.VenueHistory{}, a.classify(err)
			}
			for _, t := range page {
				if t.Time <= last {
					all = append(all, t)
				}
			}
			if len(page) > 0 && page[len(page)-1].Time > last {
				break
			}
		}
		for _, t := range all {
			vt := node.VenueTrade{ID: strconv.FormatInt(t.ID, 10), VenueOrderID: strconv.FormatInt(t.OrderID, 10), Symbol: ns,
				Side: command.Sell, Quantity: dec(t.Quantity), Price: dec(t.Price), Fee: dec(t.Commission), Time: msTime(t.Time)}
			if t.Buyer {
				vt.Side = command.Buy
			}
			if !vt.Fee.IsZero() && quote != "" && t.CommissionAsset != quote {
				vt.FeeAsset = t.CommissionAsset
			}
			out.Trades = append(out.Trades, vt)
		}
	}
	funding, err := a.Funding(ctx, from)
	if err != nil {
		return node.VenueHistory{}, err
	}
	for _, f := range funding {
		if !f.Time.Before(from) && f.Time.Before(to) {
			out.Funding = out.Funding.Add(f.Amount)
		}
	}
	return out, nil
}
