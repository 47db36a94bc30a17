// Package venuecall is the plumbing the real-venue adapters (node/alpaca,
// node/binance, node/binancefutures) share: a transport that turns
// rate-limit answers (429, 418) and server errors (5xx) into typed errors
// before the venue's client library sees them, a gate that honours
// Retry-After for every later call, bounded retries for reads and lookups
// only, the node's kind of a failed call (Classify: a lost answer is
// unknown, never resent), the order-state mapping (States), the
// endpoints and client an adapter is set up with (NewSetup), and the
// stream connection's dial, watch and drop (stream.go).
//
// It never retries a write: a write that fails in a way that may have
// reached the venue is reported as unknown, for the node to reconcile. It
// never logs a request, a header or a key.
package venuecall

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultRetryAfter is the wait after a rate-limit answer without a
// usable Retry-After header.
const DefaultRetryAfter = time.Second

// MaxRetryAfter bounds how long one Retry-After can close the gate.
const MaxRetryAfter = 5 * time.Minute

// RateLimited is a 429 or 418 answer: the venue did not process the
// request.
type RateLimited struct {
	Status int
	Until  time.Time // the gate stays closed until then
}

func (e *RateLimited) Error() string {
	return fmt.Sprintf("rate limited by the venue (HTTP %d) until %s", e.Status, e.Until.UTC().Format(time.RFC3339))
}

// ServerError is a 5xx answer: the venue may or may not have processed the
// request.
type ServerError struct {
	Status int
	Body   string // at most 512 bytes of the answer
}

func (e *ServerError) Error() string {
	return fmt.Sprintf("venue server error HTTP %d: %s", e.Status, e.Body)
}

// Transport wraps a RoundTripper with the rate-limit gate and the typed
// errors. One Transport serves one venue.
type Transport struct {
	Base http.RoundTripper // default http.DefaultTransport
	Now  func() time.Time  // default time.Now

	mu     sync.Mutex
	until  time.Time
	status int
}

func (t *Transport) now() time.Time {
	if t.Now != nil {
		return t.Now()
	}
	return time.Now()
}

// Closed reports whether the gate is closed now, and until when.
func (t *Transport) Closed() (time.Time, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.until, t.now().Before(t.until)
}

// RoundTrip refuses requests while the gate is closed, and types 429, 418
// and 5xx answers.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if until, closed := t.Closed(); closed {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, &RateLimited{Status: t.status, Until: until}
	}
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusTeapot:
		wait := retryAfter(resp.Header.Get("Retry-After"), t.now())
		io.Copy(io.Discard, io.LimitReader(resp.Body, 4096)) //nolint:errcheck // draining only
		resp.Body.Close()
		t.mu.Lock()
		t.until, t.status = t.now().Add(wait), resp.StatusCode
		until := t.until
		t.mu.Unlock()
		return nil, &RateLimited{Status: resp.StatusCode, Until: until}
	case resp.StatusCode >= 500:
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		return nil, &ServerError{Status: resp.StatusCode, Body: string(body)}
	}
	return resp, nil
}

// retryAfter reads a Retry-After header: seconds or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return DefaultRetryAfter
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return min(max(time.Duration(n)*time.Second, DefaultRetryAfter/10), MaxRetryAfter)
	}
	if t, err := http.ParseTime(v); err == nil {
		return min(max(t.Sub(now), DefaultRetryAfter/10), MaxRetryAfter)
	}
	return DefaultRetryAfter
}

// Unknown reports whether err leaves a write's outcome unknown: it may have
// reached the venue (a timeout, a dropped connection, a 5xx). A rate-limit
// answer is not unknown: the venue refused it unprocessed.
func Unknown(err error) bool {
	var rl *RateLimited
	if errors.As(err, &rl) {
		return false
	}
	var se *ServerError
	var ne net.Error
	return errors.As(err, &se) || errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, context.Canceled) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}

// Transient reports whether a read may be retried after err: a rate limit
// (after the gate opens), a 5xx, or a transport failure.
func Transient(err error) bool {
	var rl *RateLimited
	return errors.As(err, &rl) || Unknown(err)
}

// Reads is how many attempts a read or lookup gets.
const Reads = 3

// Read runs a read or lookup, retrying transient failures up to Reads
// attempts with a short backoff, waiting for a closed gate to open when
// the context allows it. Only idempotent calls may use it.
func Read[T any](ctx context.Context, t *Transport, f func() (T, error)) (T, error) {
	var zero T
	backoff := 100 * time.Millisecond
	var err error
	for attempt := 0; attempt < Reads; attempt++ {
		var v T
		if v, err = f(); err == nil {
			return v, nil
		}
		if !Transient(err) || attempt == Reads-1 {
			break
		}
		wait := backoff
		if until, closed := t.Closed(); closed {
			wait = time.Until(until)
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			break
		}
		select {
		case <-ctx.Done():
			return zero, errors.Join(err, ctx.Err())
		case <-time.After(wait):
		}
		backoff *= 2
	}
	return zero, err
}

// Message is err's text without any URL query (a signed request's URL
// carries its signature and timestamp): the path stays, the query goes.
func Message(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		path := ue.URL
		if u, perr := url.Parse(ue.URL); perr == nil {
			path = u.Path
		} else if i := strings.IndexByte(path, '?'); i >= 0 {
			path = path[:i]
		}
		return fmt.Sprintf("%s %s: %v", ue.Op, path, ue.Err)
	}
	return err.Error()
}
