package binancefuturesfake

import (
	"encoding/json"
	"net/http"
	"time"
	"wicket/node/venuefake"

	"github.com/gorilla/websocket"
	"github.com/shopspring/decimal"
)

func (f *Fake) stream(w http.ResponseWriter, r *http.Request, key string) {
	f.mu.Lock()
	known := f.keys[key]
	f.mu.Unlock()
	if !known {
		venuefake.WriteJSON(w, http.StatusBadRequest, errBody(-1125, "This listenKey does not exist."))
		return
	}
	// The lock is held from before the handshake's answer until the
	// connection is registered, so an event made after the client has seen
	// its stream open (Liquidate, a fill) always reaches it.
	f.mu.Lock()
	c, err := venuefake.Upgrade(w, r)
	if err != nil {
		f.mu.Unlock()
		return
	}
	f.streams.Add(c, struct{}{})
	f.mu.Unlock()
	f.streams.Listen(c)
}

// report sends an ORDER_TRADE_UPDATE (f.mu held).
func (f *Fake) report(o *Order, exec string, lastQty, lastPrice decimal.Decimal, trade ...futTrade) {
	commission, tradeID := decimal.Zero, int64(0)
	if len(trade) > 0 {
		commission, tradeID = trade[0].commission, trade[0].id
	}
	avg := decimal.Zero
	if o.Filled.IsPositive() {
		avg = o.Quote.Div(o.Filled)
	}
	now := time.Now().UnixMilli()
	f.broadcast(map[string]any{"e": "ORDER_TRADE_UPDATE", "E": now, "T": now, "o": map[string]any{
		"s": o.Symbol, "c": o.ClientOrderID, "S": o.Side, "o": o.Type, "f": o.TimeInForce, "q": o.Quantity.String(), "p": o.Price.String(),
		"ap": avg.String(), "sp": "0", "x": exec, "X": o.Status, "i": o.ID, "l": lastQty.String(), "z": o.Filled.String(), "L": lastPrice.String(),
		"n": commission.String(), "N": "USDT", "T": now, "t": tradeID, "R": o.ReduceOnly, "ps": "BOTH", "ot": o.Type}})
}

// algoEvent sends an ALGO_UPDATE (f.mu held).
func (f *Fake) algoEvent(g *Algo) {
	now := time.Now().UnixMilli()
	f.broadcast(map[string]any{"e": "ALGO_UPDATE", "E": now, "T": now, "o": map[string]any{
		"caid": g.ClientAlgoID, "aid": g.ID, "at": "CONDITIONAL", "o": g.Type, "s": g.Symbol, "S": g.Side, "q": g.Quantity.String(),
		"X": g.Status, "tp": g.Trigger.String(), "p": g.Price.String()}})
}

func (f *Fake) broadcast(ev map[string]any) {
	data, _ := json.Marshal(ev)
	f.streams.Broadcast(websocket.TextMessage, data)
}
