package providertest

import (
	"net/http"
	"strings"
	"time"

	"github.com/gorilla/websocket"
	"github.com/vmihailenco/msgpack/v5"
)

// The Alpaca market data stream, following
// https://docs.alpaca.markets/docs/streaming-market-data (msgpack frames,
// each an array of messages whose first key is T: the server greets with
// [{"T":"success","msg":"connected"}], the client sends {"action":"auth",
// "key","secret"} and gets "authenticated" (or {"T":"error","code":402,
// "msg":"auth failed"}), then {"action":"subscribe","bars":[...]} and gets
// {"T":"subscription",...}; minute bars arrive as {"T":"b","S","o","h","l",
// "c","v","t","n","vw"}) and the crypto (/v1beta3/crypto/us) and stock
// (/v2/iex) paths.

type alpacaStatus struct {
	T    string `msgpack:"T"`
	Msg  string `msgpack:"msg,omitempty"`
	Code int    `msgpack:"code,omitempty"`
}

type alpacaSubscription struct {
	T      string   `msgpack:"T"`
	Trades []string `msgpack:"trades"`
	Quotes []string `msgpack:"quotes"`
	Bars   []string `msgpack:"bars"`
}

type alpacaStreamBar struct {
	T  string    `msgpack:"T"`
	S  string    `msgpack:"S"`
	O  float64   `msgpack:"o"`
	H  float64   `msgpack:"h"`
	L  float64   `msgpack:"l"`
	C  float64   `msgpack:"c"`
	V  float64   `msgpack:"v"`
	Ts time.Time `msgpack:"t"`
	N  uint64    `msgpack:"n"`
	VW float64   `msgpack:"vw"`
}

// serveStream runs one stream connection; conns scripts the minute bars
// each connection sends (all but the last connection are then dropped).
func (f *Alpaca) serveStream(w http.ResponseWriter, r *http.Request) {
	stock := strings.HasPrefix(r.URL.Path, "/v2/")
	conn, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer conn.Close()
	write := func(v any) bool {
		b, err := msgpack.Marshal(v)
		return err == nil && conn.WriteMessage(websocket.BinaryMessage, b) == nil
	}
	read := func() (map[string]any, bool) {
		_, b, err := conn.ReadMessage()
		if err != nil {
			return nil, false
		}
		var m map[string]any
		return m, msgpack.Unmarshal(b, &m) == nil
	}
	if !write([]alpacaStatus{{T: "success", Msg: "connected"}}) {
		return
	}
	auth, ok := read()
	f.mu.Lock()
	good := ok && auth["action"] == "auth" && auth["key"] == f.KeyID && auth["secret"] == f.Secret && f.KeyID != ""
	f.mu.Unlock()
	if !good {
		write([]alpacaStatus{{T: "error", Code: 402, Msg: "auth failed"}})
		return
	}
	if !write([]alpacaStatus{{T: "success", Msg: "authenticated"}}) {
		return
	}
	sub, ok := read()
	if !ok || sub["action"] != "subscribe" {
		return
	}
	var sym string
	if bars, _ := sub["bars"].([]any); len(bars) == 1 {
		sym, _ = bars[0].(string)
	}
	f.mu.Lock()
	gens := f.Crypto
	if stock {
		gens = f.Stocks
	}
	g, known := gens[sym]
	n := f.streamConns
	f.streamConns++
	var times []time.Time
	if n < len(f.StreamConnections) {
		times = f.StreamConnections[n]
	}
	last := n >= len(f.StreamConnections)-1
	f.mu.Unlock()
	if !known {
		write([]alpacaStatus{{T: "error", Code: 400, Msg: "invalid syntax"}})
		return
	}
	if !write([]alpacaSubscription{{T: "subscription", Trades: []string{}, Quotes: []string{}, Bars: []string{sym}}}) {
		return
	}
	g.Step = time.Minute
	if f.StreamGate != nil {
		f.StreamGate(n)
	}
	for _, t := range times {
		b := g.At(t)
		v := b.V
		if stock {
			v = float64(int(v))
		}
		if !write([]alpacaStreamBar{{T: "b", S: sym, O: b.O, H: b.H, L: b.L, C: b.C, V: v, Ts: b.T, N: uint64(b.Trades), VW: b.VWAP}}) {
			return
		}
	}
	if !last {
		return // drop, as a network fault would
	}
	for {
		if _, _, err := conn.ReadMessage(); err != nil {
			return
		}
	}
}

// StreamConnects is how many stream connections subscribed.
func (f *Alpaca) StreamConnects() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.streamConns
}
