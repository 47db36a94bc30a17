// Package binance is the Binance spot market data provider: historical
// klines over REST (github.com/adshao/go-binance/v2) and the public kline
// websocket stream, for every wicket granularity, and the USDⓈ-M
// perpetuals' funding-rate history, with no key.
//
// It maps wicket pair symbols to Binance's (BTC-USD <-> BTCUSDT, ETH-BTC
// <-> ETHBTC) through internal/instrument's binance table, with
// wicket.toml's [symbols.binance] overrides, and never sends a key: the
// public endpoints need none.
package binance

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	gobinance "github.com/adshao/go-binance/v2"
	"github.com/adshao/go-binance/v2/common"
	"github.com/adshao/go-binance/v2/futures"

	"wicket/internal/instrument"
	"wicket/strategy"
	"wicket/strategy/provider"
)

// Name is the provider's name in wicket.toml and --provider.
const Name = "binance"

// Public endpoints, used when [providers.binance] leaves them empty.
const (
	DefaultBaseURL   = "https://api.binance.com"
	DefaultStreamURL = "wss://stream.binance.com:9443"
)

// PageLimit is the most klines one request asks for (Binance's maximum).
const PageLimit = 1000

// intervals maps wicket granularities to Binance kline intervals.
var intervals = map[strategy.Granularity]string{
	"1m": "1m", "5m": "5m", "15m": "15m", "1h": "1h", "4h": "4h", "1d": "1d",
}

// Config configures a Client.
type Config struct {
	BaseURL   string // REST endpoint (DefaultBaseURL when empty)
	StreamURL string // websocket endpoint (DefaultStreamURL when empty)
	// FuturesURL is the USDⓈ-M futures REST endpoint the funding-rate
	// history comes from (DefaultFuturesURL when empty).
	FuturesURL string
	// Transport carries every REST request (its pacing, retries and
	// backoff); a zero Transport is used when nil.
	Transport *provider.Transport
	PageLimit int // klines per request, at most PageLimit (default)
	// Symbols maps wicket symbols to Binance's: the binance table with
	// wicket.toml's [symbols.binance]; the zero Map means the table alone.
	Symbols instrument.Map
}

// Client is the Binance provider. It implements provider.Source.
type Client struct {
	api       *gobinance.Client
	fapi      *futures.Client
	streamURL string
	pageLimit int
	symbols   instrument.Map
}

// New returns a Client for cfg.
func New(cfg Config) *Client {
	api := gobinance.NewClient("", "")
	api.BaseURL = strings.TrimRight(orDefault(cfg.BaseURL, DefaultBaseURL), "/")
	tr := cfg.Transport
	if tr == nil {
		tr = &provider.Transport{MinInterval: 50 * time.Millisecond}
	}
	api.HTTPClient = &http.Client{Transport: tr}
	api.Logger.SetOutput(discard{})
	fapi := futures.NewClient("", "")
	fapi.BaseURL = strings.TrimRight(orDefault(cfg.FuturesURL, DefaultFuturesURL), "/")
	fapi.HTTPClient = api.HTTPClient
	fapi.Logger.SetOutput(discard{})
	limit := cfg.PageLimit
	if limit <= 0 || limit > PageLimit {
		limit = PageLimit
	}
	syms := cfg.Symbols
	if syms.Kind() != instrument.Binance {
		syms = table
	}
	return &Client{api: api, fapi: fapi, streamURL: strings.TrimRight(orDefault(cfg.StreamURL, DefaultStreamURL), "/"), pageLimit: limit, symbols: syms}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// Name implements provider.Source.
func (c *Client) Name() string { return Name }

// table is the binance table without overrides.
var table, _ = instrument.For(instrument.Binance, nil)

// Symbol maps a wicket symbol, or Binance's own spelling, to Binance's:
// BTC-USD -> BTCUSDT (Binance quotes US dollars in USDT), ETH-BTC ->
// ETHBTC, BTCUSDT -> BTCUSDT; [symbols.binance] overrides win.
func (c *Client) Symbol(sym string) (string, error) { return toBinance(c.symbols, sym) }

// Canonical maps a symbol written either way to wicket's: BTCUSDT ->
// BTC-USD; [symbols.binance] overrides win.
func (c *Client) Canonical(sym string) (string, error) {
	s, err := c.symbols.Canonical(sym)
	if err != nil {
		return "", provider.Errorf(Name, nil, "%v", err)
	}
	return s, nil
}

// Symbol is Client.Symbol with the binance table alone.
func Symbol(sym string) (string, error) { return toBinance(table, sym) }

func toBinance(m instrument.Map, sym string) (string, error) {
	s, err := m.Venue(sym)
	if err != nil {
		return "", provider.Errorf(Name, nil, "%v", err)
	}
	return s, nil
}

// ToWicket maps a Binance symbol back to wicket's with the binance table
// alone: BTCUSDT -> BTC-USD, ETHBTC -> ETH-BTC.
func ToWicket(bsym string) (string, error) {
	if _, _, pair := instrument.Pair(bsym); pair {
		return "", provider.Errorf(Name, nil, "%q is wicket's spelling, not binance's", bsym)
	}
	s, err := table.Canonical(bsym)
	if err != nil {
		return "", provider.Errorf(Name, nil, "%v", err)
	}
	return s, nil
}

// Interval maps a granularity to a Binance kline interval.
func Interval(g strategy.Granularity) (string, error) {
	iv, ok := intervals[g]
	if !ok {
		return "", provider.Refusef(Name, nil, "granularity %q has no Binance kline interval; binance serves %s", g, provider.GranularityNames(strategy.Granularities))
	}
	return iv, nil
}

// Bars implements provider.Source: GET /api/v3/klines from startTime,
// PageLimit klines per request, until the range is covered.
func (c *Client) Bars(ctx context.Context, psym string, g strategy.Granularity, from, to time.Time, page func(strategy.Bars) error) error {
	iv, err := Interval(g)
	if err != nil {
		return err
	}
	step := g.Duration()
	cursor := from
	for cursor.Before(to) {
		ks, err := c.api.NewKlinesService().Symbol(psym).Interval(iv).
			StartTime(cursor.UnixMilli()).EndTime(to.UnixMilli() - 1).Limit(c.pageLimit).Do(ctx)
		if err != nil {
			return c.apiError(ctx, psym, err)
		}
		if len(ks) == 0 {
			return nil
		}
		b, err := convert(ks)
		if err != nil {
			return provider.Errorf(Name, err, "klines of %s", psym)
		}
		if err := page(b); err != nil {
			return err
		}
		next := time.Unix(b.Time[b.Len()-1], 0).Add(step)
		if !next.After(cursor) || len(ks) < c.pageLimit {
			return nil
		}
		cursor = next
	}
	return nil
}

func (c *Client) apiError(ctx context.Context, psym string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var ae *common.APIError
	if errors.As(err, &ae) {
		switch ae.Code {
		case -1121:
			return provider.Errorf(Name, nil, "binance has no spot symbol %s (%s); binance takes BASE-QUOTE pairs it lists, such as BTC-USD (BTCUSDT) or ETH-BTC (ETHBTC)", psym, ae.Message)
		case -1120:
			return provider.Errorf(Name, nil, "binance refused the interval: %s", ae.Message)
		}
		msg := ae.Message
		if !ae.IsValid() {
			msg = strings.TrimSpace(string(ae.Response))
			if len(msg) > 200 {
				msg = msg[:200] + "..."
			}
		}
		return provider.Errorf(Name, nil, "klines of %s refused: code %d: %s", psym, ae.Code, msg)
	}
	return provider.Errorf(Name, err, "klines of %s", psym)
}

// convert turns klines into bars; prices arrive as decimal strings and are
// parsed exactly as written.
func convert(ks []*gobinance.Kline) (strategy.Bars, error) {
	n := len(ks)
	b := strategy.Bars{Time: make([]int64, n), Open: make([]float64, n), High: make([]float64, n),
		Low: make([]float64, n), Close: make([]float64, n), Volume: make([]float64, n)}
	for i, k := range ks {
		if k.OpenTime%1000 != 0 {
			return b, fmt.Errorf("kline open time %d ms is not a whole second", k.OpenTime)
		}
		b.Time[i] = k.OpenTime / 1000
		dst := [...][]float64{b.Open, b.High, b.Low, b.Close, b.Volume}
		for j, s := range [...]string{k.Open, k.High, k.Low, k.Close, k.Volume} {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return b, fmt.Errorf("kline at %d: value %q is not a number", k.OpenTime, s)
			}
			dst[j][i] = v
		}
	}
	return b, nil
}
