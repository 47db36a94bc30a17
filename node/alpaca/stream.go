package alpaca

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	alp "github.com/alpacahq/alpaca-trade-api-go/v3/alpaca"
	"github.com/gorilla/websocket"

	"wicket/node"
	"wicket/node/command"
	"wicket/node/venuecall"
)

// message is one frame of the trading API's websocket ("Websocket
// Streaming": authorization, listening and trade_updates streams; frames
// may be text or binary).
type message struct {
	Stream string          `json:"stream"`
	Data   json.RawMessage `json:"data"`
}

// Stream runs the trade_updates websocket: authenticate, listen, then
// deliver each update's order. It returns when ctx ends or the stream
// drops; the node then resyncs over REST.
func (a *Adapter) Stream(ctx context.Context, updates func(node.VenueUpdate)) error {
	conn, _, err := venuecall.DialStream(ctx, a.ws)
	if err != nil {
		return fmt.Errorf("trade updates stream: %w", err)
	}
	defer conn.Close()
	defer venuecall.Watch(ctx, conn, 0, nil)()
	conn.SetReadDeadline(time.Now().Add(15 * time.Second)) //nolint:errcheck // a failed deadline fails the read
	if err := conn.WriteJSON(map[string]string{"action": "auth", "key": a.keyID, "secret": a.secret}); err != nil {
		return fmt.Errorf("trade updates stream: %w", err)
	}
	if err := expect(conn, "authorization", func(raw json.RawMessage) error {
		var d struct{ Status, Action string }
		if json.Unmarshal(raw, &d) != nil || d.Status != "authorized" {
			return errors.New("trade updates stream: alpaca did not authorize the keys")
		}
		return nil
	}); err != nil {
		return err
	}
	if err := conn.WriteJSON(map[string]any{"action": "listen", "data": map[string][]string{"streams": {"trade_updates"}}}); err != nil {
		return fmt.Errorf("trade updates stream: %w", err)
	}
	if err := expect(conn, "listening", func(json.RawMessage) error { return nil }); err != nil {
		return err
	}
	conn.SetReadDeadline(time.Time{}) //nolint:errcheck // as above
	updates(node.VenueUpdate{Connected: true})
	for {
		var m message
		if err := readMessage(conn, &m); err != nil {
			return venuecall.Dropped(ctx, "trade updates stream", err)
		}
		if m.Stream != "trade_updates" {
			continue
		}
		var u alp.TradeUpdate
		if err := json.Unmarshal(m.Data, &u); err != nil {
			continue
		}
		if replacementRE.MatchString(u.Order.ClientOrderID) {
			if _, known := a.priorOf(u.Order.ID); !known {
				updates(node.VenueUpdate{Resync: true}) // a replacement this process did not make
				continue
			}
		}
		if _, known := a.legName(u.Order.ID); !known && len(u.Order.Legs) == 0 && (u.Order.OrderClass == alp.OCO || u.Order.OrderClass == alp.Bracket) &&
			!strings.HasPrefix(u.Order.ClientOrderID, command.ClientOrderIDPrefix) {
			updates(node.VenueUpdate{Resync: true}) // a child leg this process has not named: read back with its parent
			continue
		}
		a.adoptLegs(&u.Order)
		vo := a.cumulative(&u.Order)
		if (u.Event == "fill" || u.Event == "partial_fill") && u.Qty != nil && u.Price != nil {
			vo.LastQuantity, vo.LastPrice = *u.Qty, *u.Price // the fill's own, as Alpaca states them
		}
		updates(node.VenueUpdate{Order: &vo})
	}
}

func readMessage(conn *websocket.Conn, m *message) error {
	for {
		_, data, err := conn.ReadMessage()
		if err != nil {
			return err
		}
		if json.Unmarshal(data, m) == nil {
			return nil
		}
	}
}

// expect reads frames until one of stream arrives and check accepts it.
func expect(conn *websocket.Conn, stream string, check func(json.RawMessage) error) error {
	for {
		var m message
		if err := readMessage(conn, &m); err != nil {
			return fmt.Errorf("trade updates stream: waiting for %s: %w", stream, err)
		}
		if m.Stream == stream {
			return check(m.Data)
		}
	}
}
