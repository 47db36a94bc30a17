package alpacafake

import (
	"encoding/json"
	"net/http"
	"time"
	"wicket/node/venuefake"

	"github.com/gorilla/websocket"
	"github.com/shopspring/decimal"
)

func (f *Fake) stream(w http.ResponseWriter, r *http.Request) {
	c, err := venuefake.Upgrade(w, r)
	if err != nil {
		return
	}
	var auth struct{ Action, Key, Secret string }
	if c.ReadJSON(&auth) != nil || auth.Action != "auth" || auth.Key != f.KeyID || auth.Secret != f.Secret {
		c.WriteJSON(map[string]any{"stream": "authorization", "data": map[string]string{"action": "authenticate", "status": "unauthorized"}}) //nolint:errcheck // test fake
		c.Close()
		return
	}
	c.WriteJSON(map[string]any{"stream": "authorization", "data": map[string]string{"action": "authenticate", "status": "authorized"}}) //nolint:errcheck // test fake
	var listen map[string]any
	if c.ReadJSON(&listen) != nil {
		c.Close()
		return
	}
	f.mu.Lock()
	c.WriteJSON(map[string]any{"stream": "listening", "data": map[string][]string{"streams": {"trade_updates"}}}) //nolint:errcheck // test fake
	f.streams.Add(c, struct{}{})
	f.mu.Unlock()
	f.streams.Listen(c)
}

// report sends a trade update to every stream (f.mu held), as binary
// frames like Alpaca's paper endpoint does.
func (f *Fake) report(event string, o *Order) { f.send(event, o, nil) }

// reportFill sends a fill or partial_fill update with the fill's own
// price and qty and the position after it ("Websocket Streaming",
// trade_updates: fill events).
func (f *Fake) reportFill(event string, o *Order, qty, price, position decimal.Decimal) {
	f.send(event, o, map[string]any{"price": price.String(), "qty": qty.String(), "position_qty": position.String()})
}

func (f *Fake) send(event string, o *Order, extra map[string]any) {
	d := map[string]any{"event": event, "at": time.Now().UTC(), "timestamp": time.Now().UTC(), "order": f.orderJSON(o)}
	for k, v := range extra {
		d[k] = v
	}
	data, _ := json.Marshal(map[string]any{"stream": "trade_updates", "data": d})
	f.streams.Broadcast(websocket.BinaryMessage, data)
}
