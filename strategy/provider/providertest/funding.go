package providertest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"time"
)

// Funding fakes Binance USDⓈ-M futures' funding-rate history, following
// https://developers.binance.com/docs/derivatives/usds-margined-futures/market-data/rest-api/Get-Funding-Rate-History
// (GET /fapi/v1/fundingRate with symbol, startTime and endTime (ms,
// inclusive), limit (default 100, at most 1000); the settlements of the
// range oldest first, at most limit of them, each
// {"symbol", "fundingRate", "fundingTime", "markPrice"} with the rate and
// price as decimal strings; error bodies {"code":-1121,"msg":"Invalid
// symbol."}).
//
// Symbols maps a perpetual (BTCUSDT) to its settlements, in time order.
type Funding struct {
	*httptest.Server
	mu      sync.Mutex
	Symbols map[string][]Settlement
	asked   []string
}

// Settlement is one funding settlement the fake serves.
type Settlement struct {
	Time time.Time
	Rate string // as Binance writes it, e.g. "0.00010000"
}

// Every returns n settlements from start, step apart, all at rate.
func Every(start time.Time, step time.Duration, n int, rate string) []Settlement {
	out := make([]Settlement, n)
	for i := range out {
		out[i] = Settlement{Time: start.Add(time.Duration(i) * step), Rate: rate}
	}
	return out
}

// NewFunding starts the fake on loopback.
func NewFunding(symbols map[string][]Settlement) *Funding {
	f := &Funding{Symbols: symbols}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	return f
}

// Asked is the query string of every request so far.
func (f *Funding) Asked() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.asked...)
}

func (f *Funding) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/fapi/v1/fundingRate" || r.Method != http.MethodGet {
		http.NotFound(w, r)
		return
	}
	f.mu.Lock()
	f.asked = append(f.asked, r.URL.RawQuery)
	set, ok := f.Symbols[r.URL.Query().Get("symbol")]
	f.mu.Unlock()
	q := r.URL.Query()
	fail := func(code int, msg string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"code":%d,"msg":%q}`, code, msg)
	}
	if !ok {
		fail(-1121, "Invalid symbol.")
		return
	}
	limit := 100
	if s := q.Get("limit"); s != "" {
		var err error
		if limit, err = strconv.Atoi(s); err != nil {
			limit = 0
		}
	}
	if limit < 1 || limit > 1000 {
		fail(-1130, "Data sent for parameter 'limit' is not valid.")
		return
	}
	start, end := int64(0), int64(1<<62)
	for _, p := range []struct {
		name string
		v    *int64
	}{{"startTime", &start}, {"endTime", &end}} {
		if s := q.Get(p.name); s != "" {
			v, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				fail(-1100, "Illegal characters found in parameter '"+p.name+"'.")
				return
			}
			*p.v = v
		}
	}
	type row struct {
		Symbol      string `json:"symbol"`
		FundingRate string `json:"fundingRate"`
		FundingTime int64  `json:"fundingTime"`
		MarkPrice   string `json:"markPrice"`
	}
	out := []row{}
	for _, s := range set {
		if t := s.Time.UnixMilli(); t >= start && t <= end && len(out) < limit {
			out = append(out, row{q.Get("symbol"), s.Rate, t, "42000.10000000"})
		}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
}
