package alpaca

import (
	"context"

	"github.com/alpacahq/alpaca-trade-api-go/v3/marketdata"
	"github.com/shopspring/decimal"

	"wicket/strategy/provider"
)

// LastPrice implements provider.MarkSource: the latest trade of a crypto
// pair (GET /v1beta3/crypto/us/latest/trades, no key) or of a stock (GET
// /v2/stocks/trades/latest, with the key).
func (c *Client) LastPrice(ctx context.Context, sym string) (provider.Mark, error) {
	psym, err := c.Symbol(sym)
	if err != nil {
		return provider.Mark{}, err
	}
	md := c.client(ctx)
	var price float64
	m := provider.Mark{Symbol: sym, Source: Name}
	if isCrypto(psym) {
		t, err := md.GetLatestCryptoTrade(psym, marketdata.GetLatestCryptoTradeRequest{})
		if err != nil {
			return m, c.apiError(ctx, psym, err)
		}
		if t == nil {
			return m, provider.Errorf(Name, nil, "no latest trade of %s", psym)
		}
		price, m.At = t.Price, t.Timestamp
	} else {
		if c.cfg.KeyID == "" || c.cfg.Secret == "" {
			return m, provider.Errorf(Name, nil, "stock prices need an Alpaca key: set %s and %s in the environment or in secrets.env", KeyID, KeySecret)
		}
		t, err := md.GetLatestTrade(psym, marketdata.GetLatestTradeRequest{})
		if err != nil {
			return m, c.apiError(ctx, psym, err)
		}
		if t == nil {
			return m, provider.Errorf(Name, nil, "no latest trade of %s", psym)
		}
		price, m.At = t.Price, t.Timestamp
	}
	if !(price > 0) {
		return m, provider.Errorf(Name, nil, "latest trade of %s has price %v", psym, price)
	}
	m.Price = decimal.NewFromFloat(price) // the shortest decimal of the JSON number Alpaca sent
	return m, nil
}
