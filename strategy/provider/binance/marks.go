package binance

import (
	"context"

	"github.com/shopspring/decimal"

	"wicket/strategy/provider"
)

// LastPrice implements provider.MarkSource: GET /api/v3/ticker/price, the
// last trade price of the symbol, kept as the decimal Binance wrote.
func (c *Client) LastPrice(ctx context.Context, sym string) (provider.Mark, error) {
	psym, err := c.Symbol(sym)
	if err != nil {
		return provider.Mark{}, err
	}
	ps, err := c.api.NewListPricesService().Symbol(psym).Do(ctx)
	if err != nil {
		return provider.Mark{}, c.apiError(ctx, psym, err)
	}
	if len(ps) != 1 {
		return provider.Mark{}, provider.Errorf(Name, nil, "ticker price of %s: %d answers, want 1", psym, len(ps))
	}
	p, err := decimal.NewFromString(ps[0].Price)
	if err != nil || !p.IsPositive() {
		return provider.Mark{}, provider.Errorf(Name, err, "ticker price of %s is %q, not a price", psym, ps[0].Price)
	}
	return provider.Mark{Symbol: sym, Price: p, Source: Name}, nil
}
