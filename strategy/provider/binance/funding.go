package binance

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/adshao/go-binance/v2/common"
	"github.com/shopspring/decimal"

	"wicket/strategy/history"
	"wicket/strategy/provider"
)

// DefaultFuturesURL is Binance USDⓈ-M futures' public REST endpoint, used
// when [providers.binance] futures_url is empty.
const DefaultFuturesURL = "https://fapi.binance.com"

// FundingPageLimit is the most settlements one funding-rate request asks
// for (Binance's maximum).
const FundingPageLimit = 1000

// FundingRates reads the funding-rate history of the USDⓈ-M perpetual
// psym (BTCUSDT) over [from, to]: GET /fapi/v1/fundingRate with
// startTime, endTime and limit, a page at a time from the oldest, until
// the range is covered. Each page goes to page as it arrives, its rates
// parsed exactly as written.
func (c *Client) FundingRates(ctx context.Context, psym string, from, to time.Time, page func([]history.FundingRate) error) error {
	limit := min(c.pageLimit, FundingPageLimit)
	start, end := from.UnixMilli(), to.UnixMilli()
	for start <= end {
		rs, err := c.fapi.NewFundingRateService().Symbol(psym).StartTime(start).EndTime(end).Limit(limit).Do(ctx)
		if err != nil {
			return c.fundingError(ctx, psym, err)
		}
		if len(rs) == 0 {
			return nil
		}
		out := make([]history.FundingRate, 0, len(rs))
		last := start - 1
		for _, r := range rs {
			d, err := decimal.NewFromString(r.FundingRate)
			if err != nil {
				return provider.Errorf(Name, nil, "funding rate %q of %s at %d is not a decimal", r.FundingRate, psym, r.FundingTime)
			}
			if r.FundingTime <= last || r.FundingTime > end {
				return provider.Errorf(Name, nil, "funding rates of %s arrived out of order or outside the range asked for (at %d)", psym, r.FundingTime)
			}
			last = r.FundingTime
			out = append(out, history.FundingRate{Time: time.UnixMilli(r.FundingTime).UTC(), Rate: d})
		}
		if err := page(out); err != nil {
			return err
		}
		if len(rs) < limit {
			return nil
		}
		start = last + 1
	}
	return nil
}

func (c *Client) fundingError(ctx context.Context, psym string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var ae *common.APIError
	if errors.As(err, &ae) {
		if ae.Code == -1121 {
			return provider.Errorf(Name, nil, "binance USDⓈ-M futures has no perpetual %s (%s); funding is fetched for pairs with a perpetual, such as BTC-USD (BTCUSDT)", psym, ae.Message)
		}
		msg := ae.Message
		if !ae.IsValid() {
			msg = strings.TrimSpace(string(ae.Response))
			if len(msg) > 200 {
				msg = msg[:200] + "..."
			}
		}
		return provider.Errorf(Name, nil, "funding rates of %s refused: code %d: %s", psym, ae.Code, msg)
	}
	return provider.Errorf(Name, err, "funding rates of %s", psym)
}
