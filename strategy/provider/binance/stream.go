package binance

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	gobinance "github.com/adshao/go-binance/v2"
	"github.com/gorilla/websocket"

	"wicket/strategy"
	"wicket/strategy/provider"
)

// streamIdle is how long a stream may stay silent before it counts as
// lost: Binance pings every 20 s and a kline stream updates every 2 s.
var streamIdle = 90 * time.Second

// Stream implements provider.Stream over Binance's public kline stream
// (wss://stream.binance.com:9443/ws/<symbol>@kline_<interval>, see
// https://developers.binance.com/docs/binance-spot-api-docs/web-socket-streams).
// It decodes events into go-binance's WsKlineEvent and passes on only the
// closed klines (x: true). It dials with gorilla/websocket itself rather
// than through go-binance's WsKlineServe, whose endpoint is a package
// global (one per process, not per client) and whose stop path races.
func (c *Client) Stream(ctx context.Context, psym string, g strategy.Granularity, connected func(), bar func(strategy.Bars) error) error {
	iv, err := Interval(g)
	if err != nil {
		return err
	}
	url := c.streamURL + "/ws/" + strings.ToLower(psym) + "@kline_" + iv
	conn, resp, err := websocket.DefaultDialer.DialContext(ctx, url, nil)
	if err != nil {
		if resp != nil && resp.StatusCode >= 400 && resp.StatusCode < 500 && resp.StatusCode != 429 {
			return provider.Refusef(Name, err, "the stream %s refused the subscription (HTTP %d); binance streams the pairs it lists", url, resp.StatusCode)
		}
		return fmt.Errorf("connect to %s: %w", url, err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	conn.SetReadLimit(1 << 20)
	conn.SetPingHandler(func(data string) error {
		conn.SetReadDeadline(time.Now().Add(streamIdle))
		return conn.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(5*time.Second))
	})
	if connected != nil {
		connected()
	}
	for {
		conn.SetReadDeadline(time.Now().Add(streamIdle))
		_, msg, err := conn.ReadMessage()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		var ev gobinance.WsKlineEvent
		if err := json.Unmarshal(msg, &ev); err != nil || ev.Event != "kline" {
			continue // not a kline event (a subscription answer): nothing to store
		}
		if !ev.Kline.IsFinal {
			continue
		}
		b, err := klineBar(ev.Kline)
		if err != nil {
			return err
		}
		if err := bar(b); err != nil {
			return err
		}
	}
}

func klineBar(k gobinance.WsKline) (strategy.Bars, error) {
	if k.StartTime%1000 != 0 {
		return strategy.Bars{}, fmt.Errorf("kline start %d ms is not a whole second", k.StartTime)
	}
	var v [5]float64
	for i, s := range [...]string{k.Open, k.High, k.Low, k.Close, k.Volume} {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return strategy.Bars{}, fmt.Errorf("kline at %d: value %q is not a number", k.StartTime, s)
		}
		v[i] = f
	}
	return strategy.Bars{Time: []int64{k.StartTime / 1000}, Open: []float64{v[0]}, High: []float64{v[1]}, Low: []float64{v[2]}, Close: []float64{v[3]}, Volume: []float64{v[4]}}, nil
}
