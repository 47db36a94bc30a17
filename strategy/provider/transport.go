package provider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Transport is the http.RoundTripper every provider client sends through:
// it paces requests, honours 429 (and Binance's 418) with Retry-After,
// retries 5xx answers and timeouts a bounded number of times with
// exponential backoff, and gives each attempt a deadline. It only retries
// GET requests, which have no body and no side effect.
type Transport struct {
	Base http.RoundTripper // http.DefaultTransport when nil
	// MinInterval is the least time between the starts of two requests.
	MinInterval time.Duration
	// Timeout bounds one attempt (default 30 s); a timed-out attempt is
	// retried like a 5xx.
	Timeout time.Duration
	// RateLimitWaits bounds the 429 waits of one request (default 8);
	// ServerRetries bounds its 5xx and timeout retries (default 3).
	RateLimitWaits, ServerRetries int
	// Backoff is the first retry's wait, doubled each time up to MaxBackoff
	// (defaults 1 s and 60 s); a Retry-After header overrides it.
	Backoff, MaxBackoff time.Duration
	// Sleep waits d or until ctx ends; Now is the clock. Tests inject both.
	Sleep func(ctx context.Context, d time.Duration) error
	Now   func() time.Time
	// OnWait, when set, hears every wait before it starts (for a progress
	// line): why and how long.
	OnWait func(why string, d time.Duration)

	mu   sync.Mutex
	next time.Time // earliest start of the next request
}

// SleepContext waits d or until ctx is done.
func SleepContext(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (t *Transport) defaults() (base http.RoundTripper, sleep func(context.Context, time.Duration) error, now func() time.Time) {
	base, sleep, now = t.Base, t.Sleep, t.Now
	if base == nil {
		base = http.DefaultTransport
	}
	if sleep == nil {
		sleep = SleepContext
	}
	if now == nil {
		now = time.Now
	}
	return
}

func orDefault[T int | time.Duration](v, d T) T {
	if v == 0 {
		return d
	}
	return v
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	base, sleep, now := t.defaults()
	ctx := req.Context()
	retryable := req.Method == http.MethodGet && (req.Body == nil || req.Body == http.NoBody || req.ContentLength == 0)
	waits, retries := 0, 0
	backoff := orDefault(t.Backoff, time.Second)
	wait := func(why string, d time.Duration) error {
		if t.OnWait != nil {
			t.OnWait(why, d)
		}
		return sleep(ctx, d)
	}
	for {
		if err := t.pace(ctx, sleep, now); err != nil {
			return nil, err
		}
		actx, cancel := context.WithTimeout(ctx, orDefault(t.Timeout, 30*time.Second))
		resp, err := base.RoundTrip(req.Clone(actx))
		switch {
		case err != nil:
			cancel()
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if !retryable || retries >= orDefault(t.ServerRetries, 3) || !errors.Is(actx.Err(), context.DeadlineExceeded) && !isNetErr(err) {
				return nil, err
			}
			retries++
			if err := wait(fmt.Sprintf("request failed (%v), retry %d", shortErr(err), retries), backoff); err != nil {
				return nil, err
			}
		case retryable && (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusTeapot) && waits < orDefault(t.RateLimitWaits, 8):
			waits++
			d, ok := retryAfter(resp.Header.Get("Retry-After"), now())
			if !ok {
				d = backoff
			}
			drain(resp)
			cancel()
			if err := wait(fmt.Sprintf("rate limited (HTTP %d), waiting", resp.StatusCode), d); err != nil {
				return nil, err
			}
		case retryable && resp.StatusCode >= 500 && retries < orDefault(t.ServerRetries, 3):
			retries++
			drain(resp)
			cancel()
			if err := wait(fmt.Sprintf("server error (HTTP %d), retry %d", resp.StatusCode, retries), backoff); err != nil {
				return nil, err
			}
		default:
			resp.Body = &cancelBody{ReadCloser: resp.Body, cancel: cancel}
			return resp, nil
		}
		backoff = min(2*backoff, orDefault(t.MaxBackoff, time.Minute))
	}
}

// WithContext returns a RoundTripper that sends through t with ctx bound
// to requests that carry none (for a client library that takes no context,
// such as Alpaca's), so Ctrl-C stops its requests and waits.
func (t *Transport) WithContext(ctx context.Context) http.RoundTripper {
	return ctxTransport{t, ctx}
}

type ctxTransport struct {
	t   *Transport
	ctx context.Context
}

func (c ctxTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Context() == context.Background() {
		req = req.WithContext(c.ctx)
	}
	return c.t.RoundTrip(req)
}

// pace holds a request until MinInterval has passed since the last start.
func (t *Transport) pace(ctx context.Context, sleep func(context.Context, time.Duration) error, now func() time.Time) error {
	if t.MinInterval <= 0 {
		return ctx.Err()
	}
	t.mu.Lock()
	n := now()
	start := n
	if t.next.After(n) {
		start = t.next
	}
	t.next = start.Add(t.MinInterval)
	t.mu.Unlock()
	return sleep(ctx, start.Sub(n))
}

// retryAfter reads a Retry-After header: delay-seconds or an HTTP date.
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return min(time.Duration(s)*time.Second, 10*time.Minute), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return min(max(t.Sub(now), 0), 10*time.Minute), true
	}
	return 0, false
}

func isNetErr(err error) bool {
	var ne interface{ Timeout() bool }
	return errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}

func shortErr(err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return "timed out"
	}
	s := err.Error()
	if len(s) > 80 {
		s = s[:80] + "..."
	}
	return s
}

func drain(resp *http.Response) {
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
}

// cancelBody ends an attempt's context when the body is closed.
type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}
