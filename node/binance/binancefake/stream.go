package binancefake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"wicket/node/venuefake"

	"github.com/gorilla/websocket"
	"github.com/shopspring/decimal"
)

// wsRequest is a WebSocket API request.
type wsRequest struct {
	ID     any            `json:"id"`
	Method string         `json:"method"`
	Params map[string]any `json:"params"`
}

// stream serves the WebSocket API: userDataStream.subscribe.signature
// (apiKey, timestamp, signature over the other parameters sorted by name)
// subscribes the connection; its events follow until the client or
// DropStreams closes it.
func (f *Fake) stream(w http.ResponseWriter, r *http.Request) {
	c, err := venuefake.Upgrade(w, r)
	if err != nil {
		return
	}
	defer f.streams.Forget(c)
	for {
		_, msg, err := c.ReadMessage()
		if err != nil {
			return
		}
		var req wsRequest
		dec := json.NewDecoder(strings.NewReader(string(msg)))
		dec.UseNumber() // a timestamp is signed as its digits
		if dec.Decode(&req) != nil {
			f.answer(c, nil, 400, errBody(-1100, "Illegal characters found in a parameter."))
			continue
		}
		if req.Method != "userDataStream.subscribe.signature" {
			f.answer(c, req.ID, 400, errBody(-1020, "Unsupported operation."))
			continue
		}
		f.subscribe(c, req)
	}
}

func (f *Fake) subscribe(c *websocket.Conn, req wsRequest) {
	vals := url.Values{}
	sig, _ := req.Params["signature"].(string)
	for k, v := range req.Params {
		if k != "signature" {
			vals.Set(k, fmt.Sprint(v))
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.refuse != nil:
		f.answer(c, req.ID, f.refuse.status, errBody(f.refuse.code, f.refuse.msg))
	case vals.Get("apiKey") != f.APIKey:
		f.answer(c, req.ID, 401, errBody(-2015, "Invalid API-key, IP, or permissions for action."))
	case vals.Get("timestamp") == "" || !venuefake.ValidHMAC(f.Secret, vals.Encode(), sig):
		f.answer(c, req.ID, 400, errBody(-1022, "Signature for this request is not valid."))
	default:
		id := f.subs
		f.subs++
		f.answer(c, req.ID, 200, nil)
		f.streams.Add(c, id)
	}
}

// answer writes a request's answer (f.mu held, so it never interleaves
// with an event).
func (f *Fake) answer(c *websocket.Conn, id any, status int, errorBody map[string]any) {
	m := map[string]any{"id": id, "status": status}
	if errorBody != nil {
		m["error"] = errorBody
	} else {
		m["result"] = map[string]any{"subscriptionId": f.subs - 1}
	}
	c.SetWriteDeadline(time.Now().Add(time.Second)) //nolint:errcheck // test fake
	c.WriteJSON(m)                                  //nolint:errcheck // test fake
}

// report sends an executionReport to every stream (f.mu held).
func (f *Fake) report(o *Order, exec string, lastQty, lastPrice decimal.Decimal) {
	f.send(o, exec, lastQty, lastPrice, nil)
}

// send is report, with the trade a TRADE report tells of: its id (t) and
// commission (n, in asset N; "0" and null for no trade, as the "User
// Data Stream" page's executionReport shows).
func (f *Fake) send(o *Order, exec string, lastQty, lastPrice decimal.Decimal, t *trade) {
	ev := map[string]any{
		"e": "executionReport", "E": time.Now().UnixMilli(), "s": o.Symbol, "c": o.ClientOrderID, "S": o.Side, "o": o.Type,
		"f": o.TimeInForce, "q": o.Quantity.String(), "p": o.Price.String(), "P": o.StopPrice.String(), "F": "0", "g": o.ListID, "C": "",
		"x": exec, "X": o.Status, "r": "NONE", "i": o.ID, "d": o.TrailingDelta, "l": lastQty.String(), "z": o.Filled.String(), "L": lastPrice.String(),
		"n": "0", "N": nil, "T": time.Now().UnixMilli(), "t": -1, "w": working(o), "m": false, "O": o.Time,
		"Z": o.Quote.String(), "Y": lastQty.Mul(lastPrice).String(), "Q": "0",
	}
	if exec == "CANCELED" {
		ev["C"], ev["c"] = o.ClientOrderID, "cancel"+strconv.FormatInt(o.ID, 10)
	}
	if t != nil {
		ev["t"], ev["n"] = t.id, t.commission.String()
		if t.commission.IsPositive() {
			ev["N"] = t.commissionIn
		}
	}
	f.streams.Send(websocket.TextMessage, func(sub int) []byte {
		data, _ := json.Marshal(map[string]any{"subscriptionId": sub, "event": ev})
		return data
	})
}
