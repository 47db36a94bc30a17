package alpaca

import (
	"context"
	"errors"
	"time"

	"github.com/alpacahq/alpaca-trade-api-go/v3/marketdata"
	"github.com/alpacahq/alpaca-trade-api-go/v3/marketdata/stream"

	"wicket/strategy"
	"wicket/strategy/provider"
)

// streamEvent is what the library's callbacks hand the Stream loop: a
// minute bar, or the news that a (re)connection is up.
type streamEvent struct {
	bar       strategy.Bars
	connected bool
}

type quietLogger struct{}

func (quietLogger) Infof(string, ...any)  {}
func (quietLogger) Warnf(string, ...any)  {}
func (quietLogger) Errorf(string, ...any) {}

// Stream implements provider.Stream over Alpaca's market data stream
// (marketdata/stream: wss://stream.data.alpaca.markets/v1beta3/crypto/us
// for crypto, /v2/iex for stocks), which sends one bar per minute per
// symbol once the minute closes: only 1m series can be recorded. The
// stream needs the key for crypto too. The library reconnects by itself;
// each (re)connection calls connected, so the recorder back-fills.
func (c *Client) Stream(ctx context.Context, psym string, g strategy.Granularity, connected func(), bar func(strategy.Bars) error) error {
	if g != "1m" {
		return provider.Refusef(Name, nil, "alpaca's stream sends 1m bars only; record %s@1m, or fetch %s bars with `wicket data fetch`", ToWicket(psym), g)
	}
	if c.cfg.KeyID == "" || c.cfg.Secret == "" {
		return provider.Refusef(Name, nil, "alpaca's stream needs a key, crypto too: set %s and %s in the environment or in secrets.env", KeyID, KeySecret)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events := make(chan streamEvent, 1024)
	send := func(e streamEvent) {
		select {
		case events <- e:
		case <-ctx.Done():
		}
	}
	opts := []stream.Option{
		stream.WithCredentials(c.cfg.KeyID, c.cfg.Secret),
		stream.WithLogger(quietLogger{}),
		stream.WithProcessors(1), // bars in order
		stream.WithReconnectSettings(20, time.Second),
		stream.WithConnectCallback(func() { send(streamEvent{connected: true}) }),
	}
	var term <-chan error
	if isCrypto(psym) {
		sc := stream.NewCryptoClient(marketdata.US, append([]stream.CryptoOption{
			stream.WithBaseURL(c.cfg.StreamURL + "/v1beta3/crypto"),
			stream.WithCryptoBars(func(b stream.CryptoBar) {
				send(streamEvent{bar: oneBar(b.Timestamp, b.Open, b.High, b.Low, b.Close, b.Volume)})
			}, psym),
		}, asCrypto(opts)...)...)
		if err := sc.Connect(ctx); err != nil {
			return connectError(ctx, err)
		}
		term = sc.Terminated()
	} else {
		sc := stream.NewStocksClient(marketdata.IEX, append([]stream.StockOption{
			stream.WithBaseURL(c.cfg.StreamURL + "/v2"),
			stream.WithBars(func(b stream.Bar) {
				send(streamEvent{bar: oneBar(b.Timestamp, b.Open, b.High, b.Low, b.Close, float64(b.Volume))})
			}, psym),
		}, asStock(opts)...)...)
		if err := sc.Connect(ctx); err != nil {
			return connectError(ctx, err)
		}
		term = sc.Terminated()
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-term:
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if err == nil {
				err = errors.New("the stream ended")
			}
			return err
		case e := <-events:
			if e.connected {
				if connected != nil {
					connected()
				}
				continue
			}
			if err := bar(e.bar); err != nil {
				return err
			}
		}
	}
}

func connectError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	for _, perm := range []error{stream.ErrInvalidCredentials, stream.ErrInsufficientSubscription, stream.ErrInsufficientScope, stream.ErrSubscriptionChangeInvalidForFeed} {
		if errors.Is(err, perm) {
			return provider.Refusef(Name, err, "the stream refused the subscription; check %s and %s (`wicket secrets list`) and that the key's plan covers this data", KeyID, KeySecret)
		}
	}
	return err
}

func asCrypto(opts []stream.Option) []stream.CryptoOption {
	out := make([]stream.CryptoOption, len(opts))
	for i, o := range opts {
		out[i] = o
	}
	return out
}

func asStock(opts []stream.Option) []stream.StockOption {
	out := make([]stream.StockOption, len(opts))
	for i, o := range opts {
		out[i] = o
	}
	return out
}

func oneBar(t time.Time, o, h, l, c, v float64) strategy.Bars {
	return strategy.Bars{Time: []int64{t.Unix()}, Open: []float64{o}, High: []float64{h}, Low: []float64{l}, Close: []float64{c}, Volume: []float64{v}}
}
