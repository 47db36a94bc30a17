package providertest

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Alpaca fakes Alpaca's market data REST API for bars, following
//   - https://docs.alpaca.markets/reference/stockbars (GET /v2/stocks/bars:
//     symbols, timeframe such as 1Min/5Min/1Hour/1Day, start and end
//     (RFC3339, inclusive), limit (default 1000, max 10000), page_token,
//     adjustment, feed; the answer {"bars":{"SPY":[{"t","o","h","l","c","v",
//     "n","vw"}]},"next_page_token":...}; APCA-API-KEY-ID and
//     APCA-API-SECRET-KEY headers required)
//   - https://docs.alpaca.markets/reference/cryptobars-1 (GET
//     /v1beta3/crypto/us/bars, the same shape, symbols like BTC/USD, no key)
//   - https://docs.alpaca.markets/docs/historical-api (errors as
//     {"message": ...}; 429 when over the plan's rate)
//
// Daily stock bars are stamped at New York midnight, as Alpaca stamps them.
type Alpaca struct {
	*httptest.Server
	log
	mu     sync.Mutex
	Stocks map[string]Gen
	Crypto map[string]Gen
	// KeyID and Secret are the only credentials the fake accepts for stocks
	// (and for the stream).
	KeyID, Secret string
	// StreamConnections scripts the bar stream, one entry per connection:
	// the open times of the minute bars it sends (alpaca_stream.go).
	StreamConnections [][]time.Time
	// StreamGate, when set, is called with a stream connection's number
	// (0-based) once it is subscribed and before it sends its bars: a test
	// holds the stream there until it has seen what it waits for.
	StreamGate  func(n int)
	streamConns int
}

// NewAlpaca starts a fake.
func NewAlpaca(clock *Clock, stocks, crypto map[string]Gen) *Alpaca {
	f := &Alpaca{Stocks: stocks, Crypto: crypto}
	f.clock = clock
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	return f
}

func alpacaError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write([]byte(`{"message":"` + msg + `"}`))
}

var alpacaTimeframes = map[string]time.Duration{
	"1Min": time.Minute, "5Min": 5 * time.Minute, "15Min": 15 * time.Minute, "30Min": 30 * time.Minute,
	"1Hour": time.Hour, "2Hour": 2 * time.Hour, "4Hour": 4 * time.Hour, "1Day": 24 * time.Hour,
}

var newYork = func() *time.Location {
	l, err := time.LoadLocation("America/New_York")
	if err != nil {
		panic(err)
	}
	return l
}()

func (f *Alpaca) serve(w http.ResponseWriter, r *http.Request) {
	_, fault, faulty := f.record(r)
	if faulty && serveFault(w, r, fault) {
		return
	}
	if r.URL.Path == "/v1beta3/crypto/us" || r.URL.Path == "/v2/iex" {
		f.serveStream(w, r)
		return
	}
	var gens map[string]Gen
	stock := false
	if r.URL.Path == "/v2/stocks/trades/latest" || r.URL.Path == "/v1beta3/crypto/us/latest/trades" {
		f.latestTrade(w, r)
		return
	}
	switch r.URL.Path {
	case "/v2/stocks/bars":
		stock = true
		f.mu.Lock()
		ok := f.KeyID != "" && r.Header.Get("APCA-API-KEY-ID") == f.KeyID && r.Header.Get("APCA-API-SECRET-KEY") == f.Secret
		f.mu.Unlock()
		if !ok {
			alpacaError(w, http.StatusUnauthorized, "forbidden.")
			return
		}
		gens = f.Stocks
	case "/v1beta3/crypto/us/bars":
		gens = f.Crypto
	default:
		alpacaError(w, http.StatusNotFound, "Not Found")
		return
	}
	q := r.URL.Query()
	syms := strings.Split(q.Get("symbols"), ",")
	if len(syms) != 1 {
		alpacaError(w, http.StatusBadRequest, "the fake serves one symbol per request")
		return
	}
	sym := syms[0]
	f.mu.Lock()
	g, ok := gens[sym]
	f.mu.Unlock()
	if !ok {
		alpacaError(w, http.StatusBadRequest, "invalid symbol: "+sym)
		return
	}
	step, ok := alpacaTimeframes[q.Get("timeframe")]
	if !ok {
		alpacaError(w, http.StatusBadRequest, "invalid timeframe")
		return
	}
	g.Step = step
	limit := 1000
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 10000 {
			alpacaError(w, http.StatusBadRequest, "invalid limit: must be between 1 and 10000")
			return
		}
		limit = n
	}
	parse := func(k string, d time.Time) (time.Time, bool) {
		s := q.Get(k)
		if s == "" {
			return d, true
		}
		t, err := time.Parse(time.RFC3339, s)
		return t, err == nil
	}
	from, ok1 := parse("start", g.Start)
	to, ok2 := parse("end", g.End)
	if !ok1 || !ok2 {
		alpacaError(w, http.StatusBadRequest, "invalid start or end: RFC-3339 expected")
		return
	}
	if tok := q.Get("page_token"); tok != "" {
		raw, err := base64.RawURLEncoding.DecodeString(tok)
		n, err2 := strconv.ParseInt(string(raw), 10, 64)
		if err != nil || err2 != nil {
			alpacaError(w, http.StatusBadRequest, "invalid page token")
			return
		}
		from = time.Unix(n, 0).UTC()
	}
	daily := step == 24*time.Hour && stock
	var buf bytes.Buffer
	buf.WriteString(`{"bars":{"` + sym + `":[`)
	n := 0
	var next time.Time
	g.Range(from, to.Add(time.Second), func(b Bar) bool {
		if n == limit {
			next = b.T
			return false
		}
		if n > 0 {
			buf.WriteByte(',')
		}
		t := b.T
		if daily {
			t = time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, newYork)
		}
		v := num(b.V)
		if stock {
			v = strconv.Itoa(int(b.V))
		}
		buf.WriteString(`{"t":"` + t.UTC().Format(time.RFC3339) + `","o":` + num(b.O) + `,"h":` + num(b.H) + `,"l":` + num(b.L) + `,"c":` + num(b.C) +
			`,"v":` + v + `,"n":` + strconv.Itoa(b.Trades) + `,"vw":` + num(b.VWAP) + `}`)
		n++
		return true
	})
	buf.WriteString(`]},"next_page_token":`)
	if next.IsZero() {
		buf.WriteString("null}")
	} else {
		buf.WriteString(`"` + base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(next.Unix(), 10))) + `"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(buf.Bytes())
}

// latestTrade serves GET /v2/stocks/trades/latest and
// /v1beta3/crypto/us/latest/trades (https://docs.alpaca.markets/reference/stocklatesttrades-1,
// https://docs.alpaca.markets/reference/cryptolatesttrades-1):
// {"trades":{"SYM":{"t","p","s","i",...}}}, the close of the bar holding
// the fake clock's now.
func (f *Alpaca) latestTrade(w http.ResponseWriter, r *http.Request) {
	stock := strings.HasPrefix(r.URL.Path, "/v2/")
	f.mu.Lock()
	gens := f.Crypto
	authed := f.KeyID != "" && r.Header.Get("APCA-API-KEY-ID") == f.KeyID && r.Header.Get("APCA-API-SECRET-KEY") == f.Secret
	if stock {
		gens = f.Stocks
	}
	f.mu.Unlock()
	if stock && !authed {
		alpacaError(w, http.StatusUnauthorized, "forbidden.")
		return
	}
	sym := r.URL.Query().Get("symbols")
	g, ok := gens[sym]
	if !ok {
		alpacaError(w, http.StatusBadRequest, "invalid symbol: "+sym)
		return
	}
	now := time.Now()
	if f.clock != nil {
		now = f.clock.Now()
	}
	t := now.Truncate(g.Step)
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(`{"trades":{"` + sym + `":{"t":"` + now.UTC().Format(time.RFC3339Nano) + `","p":` + num(g.At(t).C) + `,"s":1,"i":7}}}`))
}
