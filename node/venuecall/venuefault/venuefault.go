// Package venuefault injects the faults a real venue's API shows, for the
// fake exchanges the adapters are tested against (binancefake,
// alpacafake): latency, a response lost after the request was processed, a
// request lost before it was, a response held back after the request was
// processed (a slow network: the answer tells the state of its moment),
// 429 with Retry-After, and 5xx.
//
// It is for tests only and never prints a request.
package venuefault

import (
	"net/http"
	"sync"
	"time"
)

// Faults is the fault plan of one fake. The zero value injects nothing.
type Faults struct {
	RateLimitBody string // the 429 answer's JSON body

	mu         sync.Mutex
	latency    time.Duration
	drop, lose map[string]int
	holds      map[string]*hold
	limit      int
	retryAfter string
	fail       int
	requests   map[string]int
}

// SetLatency delays every answer.
func (f *Faults) SetLatency(d time.Duration) { f.mu.Lock(); f.latency = d; f.mu.Unlock() }

// DropResponses processes the next n requests to path and then closes the
// connection instead of answering.
func (f *Faults) DropResponses(path string, n int) { f.set(&f.drop, path, n) }

// HoldResponses processes the next request to path and then holds its
// answer back until release is called; held is closed once the request
// has been processed and its answer waits. release may be called more
// than once.
func (f *Faults) HoldResponses(path string) (held <-chan struct{}, release func()) {
	h := &hold{held: make(chan struct{}), release: make(chan struct{})}
	f.mu.Lock()
	if f.holds == nil {
		f.holds = map[string]*hold{}
	}
	f.holds[path] = h
	f.mu.Unlock()
	var once sync.Once
	return h.held, func() { once.Do(func() { close(h.release) }) }
}

type hold struct{ held, release chan struct{} }

// LoseRequests closes the connection of the next n requests to path before
// anything is processed.
func (f *Faults) LoseRequests(path string, n int) { f.set(&f.lose, path, n) }

// RateLimit answers the next n requests 429 with Retry-After.
func (f *Faults) RateLimit(n int, retryAfter string) {
	f.mu.Lock()
	f.limit, f.retryAfter = n, retryAfter
	f.mu.Unlock()
}

// Fail5xx answers the next n requests 503.
func (f *Faults) Fail5xx(n int) { f.mu.Lock(); f.fail = n; f.mu.Unlock() }

// Requests counts the requests seen for key ("METHOD /path").
func (f *Faults) Requests(key string) int { f.mu.Lock(); defer f.mu.Unlock(); return f.requests[key] }

func (f *Faults) set(m *map[string]int, path string, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if *m == nil {
		*m = map[string]int{}
	}
	(*m)[path] = n
}

func take(m map[string]int, path string) bool {
	if m[path] > 0 {
		m[path]--
		return true
	}
	return false
}

// Before counts the request, waits the latency and answers a planned
// fault; it reports whether it answered (the handler must then stop).
func (f *Faults) Before(w http.ResponseWriter, r *http.Request) bool {
	f.mu.Lock()
	if f.requests == nil {
		f.requests = map[string]int{}
	}
	f.requests[r.Method+" "+r.URL.Path]++
	lat := f.latency
	lost := take(f.lose, r.URL.Path)
	limited := f.limit > 0
	failed := !limited && f.fail > 0
	if limited {
		f.limit--
	} else if failed {
		f.fail--
	}
	retry := f.retryAfter
	f.mu.Unlock()
	if lat > 0 {
		time.Sleep(lat)
	}
	switch {
	case lost:
		hangUp(w)
	case limited:
		w.Header().Set("Retry-After", retry)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		w.Write([]byte(f.RateLimitBody)) //nolint:errcheck // test fake
	case failed:
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte("<html>503 Service Unavailable</html>")) //nolint:errcheck // test fake
	default:
		return false
	}
	return true
}

// Drop holds the answer to this processed request back while a hold says
// so, then reports whether it is to be lost, and if so closes the
// connection.
func (f *Faults) Drop(w http.ResponseWriter, r *http.Request) bool {
	f.mu.Lock()
	drop := take(f.drop, r.URL.Path)
	h := f.holds[r.URL.Path]
	delete(f.holds, r.URL.Path)
	f.mu.Unlock()
	if h != nil {
		close(h.held)
		select {
		case <-h.release:
		case <-r.Context().Done():
		}
	}
	if drop {
		hangUp(w)
	}
	return drop
}

func hangUp(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if c, _, err := hj.Hijack(); err == nil {
			c.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}
