// Package providertest holds fakes of the market data providers' public
// APIs for tests: httptest servers that speak Binance's and Alpaca's
// documented REST endpoints (and Binance's kline stream), with a fake clock,
// request logs and injectable faults. Nothing here reaches the network
// beyond loopback; it is imported by tests only, and production code must
// never import it.
package providertest

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Clock is a fake clock: Sleep advances it at once, so backoff and pacing
// cost no wall time and tests can read exactly how long was waited.
type Clock struct {
	mu     sync.Mutex
	now    time.Time
	Sleeps []time.Duration
}

// NewClock starts a clock at t.
func NewClock(t time.Time) *Clock { return &Clock{now: t} }

// Now reads the clock.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Sleep advances the clock by d (unless ctx is done).
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if d > 0 {
		c.now = c.now.Add(d)
	}
	c.Sleeps = append(c.Sleeps, d)
	return nil
}

// Slept returns a copy of the sleeps so far.
func (c *Clock) Slept() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.Sleeps...)
}

// Fault replaces the normal answer to one request.
type Fault struct {
	Status     int           // HTTP status (0: answer normally after Delay)
	RetryAfter string        // Retry-After header value
	Body       string        // response body
	Delay      time.Duration // wall-clock delay before answering (a slow page)
}

// Request is one request the fake served.
type Request struct {
	N     int       // 1-based
	At    time.Time // on the fake clock
	Path  string
	Query string
	// Header holds the authentication headers as received, so a test can
	// check that keys went only there.
	Header http.Header
}

// Gen generates deterministic bars on a grid: every step from Start
// (inclusive) to End (exclusive), minus Holes, and only on weekdays when
// Weekdays is set. Opens gap from the previous close.
type Gen struct {
	Start, End time.Time
	Step       time.Duration
	Holes      [][2]time.Time // [from, to) without bars
	Weekdays   bool
}

// Bar is one generated bar.
type Bar struct {
	T                 time.Time
	O, H, L, C, V     float64
	Trades            int
	QuoteVolume, VWAP float64
}

// Has reports whether the generator has a bar opening at t.
func (g Gen) Has(t time.Time) bool {
	if t.Before(g.Start) || !t.Before(g.End) {
		return false
	}
	if g.Weekdays && (t.Weekday() == time.Saturday || t.Weekday() == time.Sunday) {
		return false
	}
	for _, h := range g.Holes {
		if !t.Before(h[0]) && t.Before(h[1]) {
			return false
		}
	}
	return true
}

// At computes the bar opening at t (whether or not Has(t)).
func (g Gen) At(t time.Time) Bar {
	c := price(t.Unix())
	o := price(t.Unix()-int64(g.Step/time.Second)) + 0.03 // a gap: the open is not the last close
	h := math.Round((max(o, c)+0.5)*100) / 100
	l := math.Round((min(o, c)-0.5)*100) / 100
	v := float64(t.Unix()%13+1) + 0.5
	return Bar{T: t.UTC(), O: o, H: h, L: l, C: c, V: v, Trades: int(t.Unix()%50) + 1, QuoteVolume: v * c, VWAP: (o + c) / 2}
}

func price(u int64) float64 {
	return math.Round((100+10*math.Sin(float64(u)/86400)+float64(u%97)/100)*100) / 100
}

// Range calls f for each bar with open time in [from, to), oldest first,
// until f returns false.
func (g Gen) Range(from, to time.Time, f func(Bar) bool) {
	step := g.Step
	t := g.Start
	if from.After(t) {
		n := from.Sub(g.Start) / step
		t = g.Start.Add(n * step)
		if t.Before(from) {
			t = t.Add(step)
		}
	}
	for ; t.Before(to) && t.Before(g.End); t = t.Add(step) {
		if g.Has(t) && !f(g.At(t)) {
			return
		}
	}
}

// log is the shared request log and fault plan of a fake.
type log struct {
	mu       sync.Mutex
	clock    *Clock
	requests []Request
	faults   map[int]Fault
}

func (l *log) record(r *http.Request) (Request, Fault, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	req := Request{N: len(l.requests) + 1, Path: r.URL.Path, Query: r.URL.RawQuery, Header: http.Header{}}
	for _, k := range []string{"Apca-Api-Key-Id", "Apca-Api-Secret-Key", "X-Mbx-Apikey", "Authorization"} {
		if v := r.Header.Values(k); len(v) > 0 {
			req.Header[k] = v
		}
	}
	if l.clock != nil {
		req.At = l.clock.Now()
	}
	l.requests = append(l.requests, req)
	f, ok := l.faults[req.N]
	return req, f, ok
}

// Fail makes request n (1-based, counting every request) answer f.
func (l *log) Fail(n int, f Fault) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.faults == nil {
		l.faults = map[int]Fault{}
	}
	l.faults[n] = f
}

// Requests returns the requests served so far.
func (l *log) Requests() []Request {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Request(nil), l.requests...)
}

// serveFault answers a fault; it reports false when the request should be
// answered normally (after the fault's delay).
func serveFault(w http.ResponseWriter, r *http.Request, f Fault) bool {
	if f.Delay > 0 {
		select {
		case <-time.After(f.Delay):
		case <-r.Context().Done():
			return true
		}
	}
	if f.Status == 0 {
		return false
	}
	if f.RetryAfter != "" {
		w.Header().Set("Retry-After", f.RetryAfter)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(f.Status)
	w.Write([]byte(f.Body))
	return true
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
