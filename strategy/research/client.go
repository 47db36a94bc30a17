package research

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// ClientOptions configure NewClient.
type ClientOptions struct {
	// Token is the data service's bearer token (WICKET_DATA_TOKEN), sent
	// when set.
	Token string
	// HTTP is the client to use; nil means a client without a timeout
	// (sweeps run long; contexts bound them).
	HTTP *http.Client
	// CancelWait is how long a cancelled sweep or walk-forward waits for
	// the service to return what finished before giving up on it; 0 means
	// 30 seconds.
	CancelWait time.Duration
}

// Client is the research API over HTTP to a data service (`wicket data
// serve`). It has Local's method set and returns the same results and
// error kinds; only latency tells them apart.
type Client struct {
	base string
	opts ClientOptions
}

var _ Service = (*Client)(nil)

// NewClient returns a client of the data service at addr: HOST:PORT or an
// http(s) URL.
func NewClient(addr string, opts ClientOptions) (*Client, error) {
	base := strings.TrimSpace(addr)
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	u, err := url.Parse(base)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, errorf(KindInvalid, "data service address %q: give HOST:PORT, e.g. 127.0.0.1:7878", addr)
	}
	base = strings.TrimRight(u.String(), "/")
	if opts.HTTP == nil {
		opts.HTTP = &http.Client{}
	}
	if opts.CancelWait <= 0 {
		opts.CancelWait = 30 * time.Second
	}
	return &Client{base: base, opts: opts}, nil
}

// Addr is the service's base URL.
func (c *Client) Addr() string { return c.base }

// ListSeries lists the series in the service's history store.
func (c *Client) ListSeries(ctx context.Context) (SeriesList, error) {
	var out SeriesList
	return out, c.call(ctx, http.MethodGet, PathSeries, nil, &out)
}

// ListStrategies lists the service project's strategies.
func (c *Client) ListStrategies(ctx context.Context) (StrategyList, error) {
	var out StrategyList
	return out, c.call(ctx, http.MethodGet, PathStrategies, nil, &out)
}

// Backtest runs one backtest on the service.
func (c *Client) Backtest(ctx context.Context, req BacktestRequest) (BacktestResult, error) {
	var out BacktestResult
	return out, c.call(ctx, http.MethodPost, PathBacktest, req, &out)
}

// Sweep runs a sweep on the service, reporting its progress. When ctx ends
// it asks the service to stop and returns what finished, like Local.
func (c *Client) Sweep(ctx context.Context, req SweepRequest, progress func(Progress)) (SweepResult, error) {
	var out SweepResult
	return out, c.stream(ctx, PathSweep, req, progress, &out)
}

// WalkForward runs a walk-forward analysis on the service, reporting its
// progress. When ctx ends it asks the service to stop and returns what
// finished, like Local.
func (c *Client) WalkForward(ctx context.Context, req WalkForwardRequest, progress func(Progress)) (WalkForwardResult, error) {
	var out WalkForwardResult
	return out, c.stream(ctx, PathWalkForward, req, progress, &out)
}

func (c *Client) newRequest(ctx context.Context, method, path string, body any) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, errorf(KindInvalid, "encode the request: %v", err)
		}
		rd = bytes.NewReader(b)
	}
	r, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, errorf(KindInvalid, "build the request: %v", err)
	}
	if body != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	if c.opts.Token != "" {
		r.Header.Set("Authorization", "Bearer "+c.opts.Token)
	}
	setWho(ctx, r)
	return r, nil
}

func (c *Client) unreachable(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return &Error{Kind: KindCanceled, Msg: "cancelled: " + context.Cause(ctx).Error(), Err: ctx.Err()}
	}
	return &Error{Kind: KindUnavailable, Err: err,
		Msg: fmt.Sprintf("cannot reach the data service at %s: %v; the operator starts it with `wicket data serve`", c.base, unwrapURL(err))}
}

func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// call is one plain request and response.
func (c *Client) call(ctx context.Context, method, path string, body, out any) error {
	r, err := c.newRequest(ctx, method, path, body)
	if err != nil {
		return err
	}
	resp, err := c.opts.HTTP.Do(r)
	if err != nil {
		return c.unreachable(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return c.errorBody(resp)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return c.unreachable(ctx, fmt.Errorf("read the response: %w", err))
	}
	return nil
}

// errorBody reads an error response.
func (c *Client) errorBody(resp *http.Response) error {
	var l streamLine
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err := json.Unmarshal(b, &l); err != nil || l.Error == nil {
		return errorf(KindUnavailable, "the data service at %s answered %s: %s", c.base, resp.Status, strings.TrimSpace(string(b)))
	}
	return l.Error
}

// stream runs a streaming request. The request is not bound to ctx: when
// ctx ends, the client posts a cancel for the job and reads on until the
// service sends what finished (or CancelWait passes, when it closes the
// request, which stops the job too).
func (c *Client) stream(ctx context.Context, path string, body any, progress func(Progress), out any) error {
	if err := ctx.Err(); err != nil {
		return &Error{Kind: KindCanceled, Msg: "cancelled: " + context.Cause(ctx).Error(), Err: err}
	}
	rctx, abort := context.WithCancel(context.WithoutCancel(ctx))
	defer abort()
	r, err := c.newRequest(rctx, http.MethodPost, path, body)
	if err != nil {
		return err
	}
	// Until the response headers arrive there is no job id: a cancel then
	// closes the request.
	stopEarly := context.AfterFunc(ctx, abort)
	resp, err := c.opts.HTTP.Do(r)
	early := !stopEarly()
	if err != nil {
		return c.unreachable(ctx, err)
	}
	defer resp.Body.Close()
	if early {
		return &Error{Kind: KindCanceled, Msg: "cancelled: " + context.Cause(ctx).Error(), Err: ctx.Err()}
	}
	if resp.StatusCode != http.StatusOK {
		return c.errorBody(resp)
	}
	job := resp.Header.Get(JobHeader)
	stop := context.AfterFunc(ctx, func() {
		// Ask for what finished; if the service does not answer in time,
		// close the request.
		time.AfterFunc(c.opts.CancelWait, abort)
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.opts.CancelWait)
		defer cancel()
		req, err := c.newRequest(cctx, http.MethodPost, PathCancel+url.PathEscape(job), nil)
		if err != nil || job == "" {
			abort()
			return
		}
		cr, err := c.opts.HTTP.Do(req)
		if err != nil {
			abort()
			return
		}
		io.Copy(io.Discard, cr.Body)
		cr.Body.Close()
		if cr.StatusCode != http.StatusOK && cr.StatusCode != http.StatusNotFound {
			abort()
		}
	})
	defer stop()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 256<<20)
	for sc.Scan() {
		var l streamLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return errorf(KindUnavailable, "the data service at %s sent a malformed line: %v", c.base, err)
		}
		switch {
		case l.Error != nil:
			return l.Error
		case l.Result != nil:
			if err := json.Unmarshal(l.Result, out); err != nil {
				return errorf(KindUnavailable, "the data service at %s sent a malformed result: %v", c.base, err)
			}
			return nil
		case l.Progress != nil && progress != nil:
			progress(*l.Progress)
		}
	}
	if ctx.Err() != nil {
		return &Error{Kind: KindCanceled, Msg: "cancelled, and the data service did not return what finished: " + context.Cause(ctx).Error(), Err: ctx.Err()}
	}
	err = sc.Err()
	if err == nil {
		err = io.ErrUnexpectedEOF
	}
	return c.unreachable(ctx, fmt.Errorf("the response ended before its result: %w", err))
}
