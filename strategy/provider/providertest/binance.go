package providertest

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// Binance fakes the Binance spot REST API's kline endpoint, following
//   - https://developers.binance.com/docs/binance-spot-api-docs/rest-api/market-data-endpoints
//     ("Kline/Candlestick data": GET /api/v3/klines with symbol, interval,
//     startTime, endTime (ms, inclusive), limit (default 500, max 1000);
//     each kline an array [open time, open, high, low, close, volume,
//     close time, quote volume, trades, taker base, taker quote, "0"], prices
//     as strings)
//   - https://developers.binance.com/docs/binance-spot-api-docs/errors
//     (error bodies {"code":-1121,"msg":"Invalid symbol."})
//   - https://developers.binance.com/docs/binance-spot-api-docs/rest-api/limits
//     (429 with Retry-After when over the request weight)
//
// Symbols maps a Binance symbol to its generator; a kline whose close time
// is after the fake clock's now is served as the still-forming one, as
// Binance does.
type Binance struct {
	*httptest.Server
	log
	mu      sync.Mutex
	Symbols map[string]Gen
	// Connections scripts the kline stream, one entry per websocket
	// connection in order: the events it sends. Every connection but the
	// last is then dropped; the last stays open until the client leaves.
	Connections [][]StreamEvent
	// Gate, when set, is called with a connection's number (0-based) once
	// it is up and before it sends its events: a test holds the stream
	// there until it has seen what it waits for.
	Gate  func(n int)
	conns int
}

// StreamEvent is one kline stream message: the bar opening at T, final
// (closed, x: true) or an update of the forming bar.
type StreamEvent struct {
	T     time.Time
	Final bool
}

// NewBinance starts a fake; clock may be nil (then nothing is forming).
func NewBinance(clock *Clock, symbols map[string]Gen) *Binance {
	f := &Binance{Symbols: symbols}
	f.clock = clock
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	return f
}

var binanceIntervals = map[string]time.Duration{
	"1m": time.Minute, "3m": 3 * time.Minute, "5m": 5 * time.Minute, "15m": 15 * time.Minute, "30m": 30 * time.Minute,
	"1h": time.Hour, "2h": 2 * time.Hour, "4h": 4 * time.Hour, "6h": 6 * time.Hour, "8h": 8 * time.Hour, "12h": 12 * time.Hour,
	"1d": 24 * time.Hour,
}

func binanceError(w http.ResponseWriter, status int, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write([]byte(`{"code":` + strconv.Itoa(code) + `,"msg":"` + msg + `"}`))
}

func (f *Binance) serve(w http.ResponseWriter, r *http.Request) {
	_, fault, faulty := f.record(r)
	if faulty && serveFault(w, r, fault) {
		return
	}
	if strings.HasPrefix(r.URL.Path, "/ws/") {
		f.stream(w, r)
		return
	}
	switch r.URL.Path {
	case "/api/v3/klines":
		f.klines(w, r)
	case "/api/v3/ticker/price":
		f.tickerPrice(w, r)
	default:
		binanceError(w, http.StatusNotFound, -1, "no such endpoint")
	}
}

func (f *Binance) gen(sym string) (Gen, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	g, ok := f.Symbols[sym]
	return g, ok
}

func (f *Binance) klines(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	g, ok := f.gen(q.Get("symbol"))
	if !ok {
		binanceError(w, http.StatusBadRequest, -1121, "Invalid symbol.")
		return
	}
	step, ok := binanceIntervals[q.Get("interval")]
	if !ok {
		binanceError(w, http.StatusBadRequest, -1120, "Invalid interval.")
		return
	}
	limit := 500
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 1000 {
			binanceError(w, http.StatusBadRequest, -1100, "Illegal characters found in parameter 'limit'; legal range is '1-1000'.")
			return
		}
		limit = n
	}
	ms := func(k string, d time.Time) time.Time {
		if s := q.Get(k); s != "" {
			n, err := strconv.ParseInt(s, 10, 64)
			if err == nil {
				return time.UnixMilli(n).UTC()
			}
		}
		return d
	}
	g.Step = step
	from := ms("startTime", g.Start)
	to := ms("endTime", g.End).Add(time.Millisecond) // endTime is inclusive
	var buf bytes.Buffer
	buf.WriteByte('[')
	n := 0
	g.Range(from, to, func(b Bar) bool {
		if n > 0 {
			buf.WriteByte(',')
		}
		open := b.T.UnixMilli()
		closeMs := open + step.Milliseconds() - 1
		buf.WriteString("[" + strconv.FormatInt(open, 10) + `,"` + num(b.O) + `","` + num(b.H) + `","` + num(b.L) + `","` + num(b.C) + `","` + num(b.V) + `",` +
			strconv.FormatInt(closeMs, 10) + `,"` + num(b.QuoteVolume) + `",` + strconv.Itoa(b.Trades) + `,"` + num(b.V/2) + `","` + num(b.QuoteVolume/2) + `","0"]`)
		n++
		return n < limit
	})
	buf.WriteByte(']')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-MBX-USED-WEIGHT-1M", strconv.Itoa(len(f.Requests())*2))
	w.Write(buf.Bytes())
}

// tickerPrice serves GET /api/v3/ticker/price?symbol=S: the close of the
// bar holding the fake clock's now ("Symbol price ticker").
func (f *Binance) tickerPrice(w http.ResponseWriter, r *http.Request) {
	sym := r.URL.Query().Get("symbol")
	g, ok := f.gen(sym)
	if !ok {
		binanceError(w, http.StatusBadRequest, -1121, "Invalid symbol.")
		return
	}
	now := time.Now()
	if f.clock != nil {
		now = f.clock.Now()
	}
	t := now.Truncate(g.Step)
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(`{"symbol":"` + strings.ToUpper(sym) + `","price":"` + num(g.At(t).C) + `"}`))
}

var upgrader = websocket.Upgrader{}

// stream serves /ws/<symbol>@kline_<interval>, following
// https://developers.binance.com/docs/binance-spot-api-docs/web-socket-streams
// ("Kline/Candlestick Streams": {"e":"kline","E":...,"s":...,"k":{"t","T",
// "s","i","f","L","o","c","h","l","v","n","x","q","V","Q","B"}}).
func (f *Binance) stream(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/ws/")
	lsym, iv, ok := strings.Cut(name, "@kline_")
	sym := strings.ToUpper(lsym)
	g, known := f.gen(sym)
	step, okIv := binanceIntervals[iv]
	if !ok || !known || !okIv {
		http.Error(w, "no such stream", http.StatusNotFound)
		return
	}
	g.Step = step
	f.mu.Lock()
	n := f.conns
	f.conns++
	var events []StreamEvent
	if n < len(f.Connections) {
		events = f.Connections[n]
	}
	lastConn := n >= len(f.Connections)-1
	f.mu.Unlock()
	conn, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer conn.Close()
	if f.Gate != nil {
		f.Gate(n)
	}
	for _, ev := range events {
		b := g.At(ev.T)
		open := b.T.UnixMilli()
		msg := fmt.Sprintf(`{"e":"kline","E":%d,"s":%q,"k":{"t":%d,"T":%d,"s":%q,"i":%q,"f":100,"L":200,"o":%q,"c":%q,"h":%q,"l":%q,"v":%q,"n":%d,"x":%v,"q":%q,"V":"0","Q":"0","B":"0"}}`,
			open+step.Milliseconds(), sym, open, open+step.Milliseconds()-1, sym, iv, num(b.O), num(b.C), num(b.H), num(b.L), num(b.V), b.Trades, ev.Final, num(b.QuoteVolume))
		if err := conn.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
			return
		}
	}
	if !lastConn {
		return // drop the connection, as a network fault would
	}
	for { // stay up until the client goes
		if _, _, err := conn.ReadMessage(); err != nil {
			return
		}
	}
}

// Connects is how many stream connections the fake has accepted.
func (f *Binance) Connects() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.conns
}
