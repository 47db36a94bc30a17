// Package alpaca is the Alpaca market data provider: US stock bars (with
// an Alpaca key) and crypto bars (without one) over REST, through
// github.com/alpacahq/alpaca-trade-api-go/v3/marketdata.
//
// It maps wicket symbols to Alpaca's (SPY <-> SPY, BTC-USD <-> BTC/USD)
// through internal/instrument's alpaca table, with wicket.toml's
// [symbols.alpaca] overrides.
// Keys are passed in by the caller and go nowhere but Alpaca's request
// headers: never into an error, a log or a summary.
package alpaca

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/alpacahq/alpaca-trade-api-go/v3/alpaca"
	"github.com/alpacahq/alpaca-trade-api-go/v3/marketdata"

	"wicket/internal/instrument"
	"wicket/strategy"
	"wicket/strategy/history"
	"wicket/strategy/provider"
)

// Name is the provider's name in wicket.toml and --provider.
const Name = "alpaca"

// Public endpoints, used when [providers.alpaca] leaves them empty.
const (
	DefaultBaseURL   = "https://data.alpaca.markets"
	DefaultStreamURL = "wss://stream.data.alpaca.markets"
)

// The environment or secrets.env names of the stock data keys.
const (
	KeyID     = "WICKET_ALPACA_KEY_ID"
	KeySecret = "WICKET_ALPACA_SECRET_KEY"
)

// DefaultChunk is how many bars one committed page holds; the library
// follows next_page_token within it.
const DefaultChunk = 10000

var timeframes = map[strategy.Granularity]marketdata.TimeFrame{
	"1m":  marketdata.NewTimeFrame(1, marketdata.Min),
	"5m":  marketdata.NewTimeFrame(5, marketdata.Min),
	"15m": marketdata.NewTimeFrame(15, marketdata.Min),
	"1h":  marketdata.NewTimeFrame(1, marketdata.Hour),
	"4h":  marketdata.NewTimeFrame(4, marketdata.Hour),
	"1d":  marketdata.NewTimeFrame(1, marketdata.Day),
}

// Config configures a Client.
type Config struct {
	BaseURL   string
	StreamURL string
	// KeyID and Secret authenticate stock requests; crypto needs neither.
	KeyID, Secret string
	Adjustment    string // raw, split (default), dividend or all
	Transport     *provider.Transport
	// Chunk is the bars per committed page (DefaultChunk); PageLimit the
	// bars per HTTP request (0: Alpaca's default, up to 10000).
	Chunk, PageLimit int
	// Symbols maps wicket symbols to Alpaca's: the alpaca table with
	// wicket.toml's [symbols.alpaca]; the zero Map means the table alone.
	Symbols instrument.Map
}

// Client is the Alpaca provider. It implements provider.Source.
type Client struct {
	cfg Config
}

// New returns a Client for cfg.
func New(cfg Config) *Client {
	cfg.BaseURL = strings.TrimRight(orDefault(cfg.BaseURL, DefaultBaseURL), "/")
	cfg.StreamURL = strings.TrimRight(orDefault(cfg.StreamURL, DefaultStreamURL), "/")
	cfg.Adjustment = orDefault(cfg.Adjustment, "split")
	if cfg.Transport == nil {
		// Alpaca's free plan allows 200 requests a minute.
		cfg.Transport = &provider.Transport{MinInterval: 300 * time.Millisecond}
	}
	if cfg.Chunk <= 0 {
		cfg.Chunk = DefaultChunk
	}
	if cfg.Symbols.Kind() != instrument.Alpaca {
		cfg.Symbols = table
	}
	return &Client{cfg: cfg}
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// Name implements provider.Source.
func (c *Client) Name() string { return Name }

// table is the alpaca table without overrides.
var table, _ = instrument.For(instrument.Alpaca, nil)

// Symbol maps a wicket symbol, or Alpaca's own spelling: a pair BTC-USD
// (or BTC/USD) -> crypto BTC/USD, a ticker SPY -> stock SPY;
// [symbols.alpaca] overrides win.
func (c *Client) Symbol(sym string) (string, error) { return toAlpaca(c.cfg.Symbols, sym) }

// Canonical maps a symbol written either way to wicket's: BTC/USD ->
// BTC-USD, SPY -> SPY; [symbols.alpaca] overrides win.
func (c *Client) Canonical(sym string) (string, error) {
	s, err := c.cfg.Symbols.Canonical(sym)
	if err != nil {
		return "", provider.Errorf(Name, nil, "%v", err)
	}
	return s, nil
}

// Symbol is Client.Symbol with the alpaca table alone.
func Symbol(sym string) (string, error) { return toAlpaca(table, sym) }

func toAlpaca(m instrument.Map, sym string) (string, error) {
	s, err := m.Venue(sym)
	if err != nil {
		return "", provider.Errorf(Name, nil, "%v", err)
	}
	return s, nil
}

// ToWicket maps an Alpaca symbol back: BTC/USD -> BTC-USD, SPY -> SPY.
func ToWicket(asym string) string { return strings.ReplaceAll(asym, "/", "-") }

func isCrypto(psym string) bool { return strings.Contains(psym, "/") }

// TimeFrame maps a granularity to an Alpaca timeframe.
func TimeFrame(g strategy.Granularity) (marketdata.TimeFrame, error) {
	tf, ok := timeframes[g]
	if !ok {
		return tf, provider.Errorf(Name, nil, "granularity %q has no Alpaca timeframe; alpaca serves %s", g, provider.GranularityNames(strategy.Granularities))
	}
	return tf, nil
}

func (c *Client) client(ctx context.Context) *marketdata.Client {
	return marketdata.NewClient(marketdata.ClientOpts{
		APIKey: c.cfg.KeyID, APISecret: c.cfg.Secret, BaseURL: c.cfg.BaseURL,
		RetryLimit: -1,                                                        // our Transport retries, honouring Retry-After
		HTTPClient: &http.Client{Transport: c.cfg.Transport.WithContext(ctx)}, // the library takes no context
	})
}

// Bars implements provider.Source: GET /v2/stocks/bars or
// /v1beta3/crypto/us/bars from start, Chunk bars at a time (the client
// follows next_page_token inside a chunk), until the range is covered.
// A daily stock bar, stamped at New York midnight, is stored at 00:00 UTC
// of its trading day.
func (c *Client) Bars(ctx context.Context, psym string, g strategy.Granularity, from, to time.Time, page func(strategy.Bars) error) error {
	tf, err := TimeFrame(g)
	if err != nil {
		return err
	}
	crypto := isCrypto(psym)
	if !crypto && (c.cfg.KeyID == "" || c.cfg.Secret == "") {
		return provider.Errorf(Name, nil, "stock bars need an Alpaca key: set %s and %s in the environment or in secrets.env (`wicket secrets list` shows which are set); crypto pairs need none", KeyID, KeySecret)
	}
	md := c.client(ctx)
	step := g.Duration()
	cursor := from
	for cursor.Before(to) {
		var b strategy.Bars
		end := to.Add(-time.Second) // Alpaca's end is inclusive
		if crypto {
			bars, err := md.GetCryptoBars(psym, marketdata.GetCryptoBarsRequest{TimeFrame: tf, Start: cursor, End: end, TotalLimit: c.cfg.Chunk, PageLimit: c.cfg.PageLimit})
			if err != nil {
				return c.apiError(ctx, psym, err)
			}
			b = fromCrypto(bars, g)
		} else {
			bars, err := md.GetBars(psym, marketdata.GetBarsRequest{TimeFrame: tf, Start: cursor, End: end, TotalLimit: c.cfg.Chunk, PageLimit: c.cfg.PageLimit,
				Adjustment: marketdata.Adjustment(c.cfg.Adjustment)})
			if err != nil {
				return c.apiError(ctx, psym, err)
			}
			b = fromStock(bars, g)
		}
		if b.Len() == 0 {
			return nil
		}
		if err := page(b); err != nil {
			return err
		}
		next := time.Unix(b.Time[b.Len()-1], 0).Add(step)
		if b.Len() < c.cfg.Chunk || !next.After(cursor) {
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
	var ae *alpaca.APIError
	if errors.As(err, &ae) {
		switch ae.StatusCode {
		case http.StatusUnauthorized, http.StatusForbidden:
			return provider.Errorf(Name, nil, "bars of %s refused (HTTP %d: %s); check %s and %s (`wicket secrets list`) and that the key's plan covers this data", psym, ae.StatusCode, ae.Message, KeyID, KeySecret)
		case http.StatusBadRequest, http.StatusNotFound, http.StatusUnprocessableEntity:
			return provider.Errorf(Name, nil, "bars of %s refused (HTTP %d: %s); alpaca takes US stock tickers (SPY) and crypto pairs (BTC-USD for BTC/USD)", psym, ae.StatusCode, ae.Message)
		}
		return provider.Errorf(Name, nil, "bars of %s refused (HTTP %d: %s)", psym, ae.StatusCode, ae.Message)
	}
	return provider.Errorf(Name, err, "bars of %s", psym)
}

func fromStock(bars []marketdata.Bar, g strategy.Granularity) strategy.Bars {
	b := newBars(len(bars))
	for i, x := range bars {
		b.Time[i] = stamp(x.Timestamp, g)
		b.Open[i], b.High[i], b.Low[i], b.Close[i], b.Volume[i] = x.Open, x.High, x.Low, x.Close, float64(x.Volume)
	}
	return b
}

func fromCrypto(bars []marketdata.CryptoBar, g strategy.Granularity) strategy.Bars {
	b := newBars(len(bars))
	for i, x := range bars {
		b.Time[i] = stamp(x.Timestamp, g)
		b.Open[i], b.High[i], b.Low[i], b.Close[i], b.Volume[i] = x.Open, x.High, x.Low, x.Close, x.Volume
	}
	return b
}

func stamp(t time.Time, g strategy.Granularity) int64 {
	if g == "1d" {
		return history.NewYorkDay(t.Unix())
	}
	return t.Unix()
}

func newBars(n int) strategy.Bars {
	return strategy.Bars{Time: make([]int64, n), Open: make([]float64, n), High: make([]float64, n),
		Low: make([]float64, n), Close: make([]float64, n), Volume: make([]float64, n)}
}
