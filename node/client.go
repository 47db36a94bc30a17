package node

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"wicket/node/command"
)

// Client talks to one node. It is safe for concurrent use.
type Client struct {
	base    *url.URL
	observe string
	control string
	http    *http.Client
	now     func() time.Time
	nonce   func() string
	writeID string // the key id writes are signed under: KeyControl, or KeyAgent (AsAgent)
}

// Option configures a Client.
type Option func(*Client)

// WithClock sets the clock that stamps requests (default time.Now).
func WithClock(now func() time.Time) Option { return func(c *Client) { c.now = now } }

// AsAgent makes the client's write key the agent key (KeyAgent): the node
// holds its writes, and the deployments it creates, to the agent's capital
// envelope (envelope.go).
func AsAgent() Option { return func(c *Client) { c.writeID = KeyAgent } }

// WithNonce sets the nonce source (default NewNonce).
func WithNonce(f func() string) Option { return func(c *Client) { c.nonce = f } }

// NewClient returns a client for the node at addr ("127.0.0.1:7879" or
// "http://127.0.0.1:7879"). observeKey signs reads; controlKey signs writes
// and may be empty for a read-only client, whose writes then fail with
// KindForbidden without reaching the node. A client given only the control
// key signs its reads with it.
func NewClient(addr, observeKey, controlKey string, opts ...Option) (*Client, error) {
	if addr == "" {
		return nil, Errorf(KindBadRequest, "no_address", "no node address: pass host:port (wicket.toml [node] address)")
	}
	raw := addr
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, Errorf(KindBadRequest, "bad_address", "node address %q is not host:port", addr)
	}
	if observeKey == "" && controlKey == "" {
		return nil, Errorf(KindAuth, "no_keys", "no node keys: set WICKET_NODE_OBSERVE_KEY and WICKET_NODE_CONTROL_KEY in the environment or in the project's settings/secrets.env")
	}
	u.Path, u.RawQuery = "", ""
	c := &Client{base: u, observe: observeKey, control: controlKey, http: &http.Client{}, now: time.Now, nonce: NewNonce, writeID: KeyControl}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// String shows the address only, never a key.
func (c *Client) String() string { return "node.Client(" + c.base.Host + ")" }

// Snapshot reads the node's state: all venues, or only venue when given,
// with up to events recent events (0: none; the node holds at most 500; a
// negative count asks for the node's default of 20).
func (c *Client) Snapshot(ctx context.Context, venue string, events int) (*Snapshot, error) {
	q := url.Values{}
	if venue != "" {
		q.Set("venue", venue)
	}
	if events >= 0 {
		q.Set("events", strconv.Itoa(events))
	}
	var s Snapshot
	if err := c.do(ctx, http.MethodGet, "/v1/snapshot", q, nil, KeyObserve, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// DryRun asks whether the node would accept env now, without executing it.
func (c *Client) DryRun(ctx context.Context, env command.Envelope) (Verdict, error) {
	body, err := json.Marshal(env)
	if err != nil {
		return Verdict{}, &Error{Kind: KindBadRequest, Code: "bad_command", Message: err.Error(), Err: err}
	}
	// An agent's client dry-runs under its agent key, so the node judges
	// the dry run by the agent's envelope as it will judge the write.
	key := KeyObserve
	if c.writeID == KeyAgent && c.control != "" {
		key = KeyControl
	}
	var v Verdict
	err = c.do(ctx, http.MethodPost, "/v1/dry-run", nil, body, key, &v)
	return v, err
}

// Submit sends env and returns its ticket id at once; the command applies
// in the node's order. Await the outcome with Ticket.
func (c *Client) Submit(ctx context.Context, env command.Envelope) (string, error) {
	if c.control == "" {
		return "", Errorf(KindForbidden, "no_control_key", "this client holds no control key, so it cannot write; set WICKET_NODE_CONTROL_KEY")
	}
	body, err := json.Marshal(env)
	if err != nil {
		return "", &Error{Kind: KindBadRequest, Code: "bad_command", Message: err.Error(), Err: err}
	}
	var out struct {
		Ticket string `json:"ticket"`
	}
	if err := c.do(ctx, http.MethodPost, "/v1/commands", nil, body, KeyControl, &out); err != nil {
		return "", err
	}
	return out.Ticket, nil
}

// Ticket reads a ticket's outcome, waiting up to wait (the node allows at
// most 30s) for a pending one. A ticket still pending after wait comes back
// with Status Pending and no error; Outcome.Err turns that into KindTimeout.
func (c *Client) Ticket(ctx context.Context, id string, wait time.Duration) (Outcome, error) {
	q := url.Values{}
	if wait > 0 {
		q.Set("wait", wait.String())
	}
	var o Outcome
	err := c.do(ctx, http.MethodGet, "/v1/tickets/"+url.PathEscape(id), q, nil, KeyObserve, &o)
	return o, err
}

// Audit reads a page of the audit trail.
func (c *Client) Audit(ctx context.Context, aq AuditQuery) (AuditPage, error) {
	q := url.Values{}
	if !aq.Since.IsZero() {
		q.Set("since", aq.Since.UTC().Format(time.RFC3339Nano))
	}
	if aq.After > 0 {
		q.Set("after", strconv.FormatInt(aq.After, 10))
	}
	if aq.ClientOrderID != "" {
		q.Set("client_order_id", aq.ClientOrderID)
	}
	if aq.Limit > 0 {
		q.Set("limit", strconv.Itoa(aq.Limit))
	}
	var p AuditPage
	err := c.do(ctx, http.MethodGet, "/v1/audit", q, nil, KeyObserve, &p)
	return p, err
}

// Health reports whether the node is up and applying commands.
func (c *Client) Health(ctx context.Context) (Health, error) {
	var h Health
	err := c.do(ctx, http.MethodGet, "/v1/health", nil, nil, KeyObserve, &h)
	return h, err
}

// maxResponse bounds what the client reads from a node.
const maxResponse = 32 << 20

func (c *Client) do(ctx context.Context, method, path string, q url.Values, body []byte, keyID string, out any) error {
	key := c.observe
	if keyID == KeyControl || key == "" {
		// A client without an observe key reads with the control key,
		// under the control key's id.
		keyID, key = c.writeID, c.control
	}
	u := *c.base
	u.Path = path
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(body))
	if err != nil {
		return &Error{Kind: KindBadRequest, Code: "bad_request", Message: err.Error(), Err: err}
	}
	ts, nonce := Timestamp(c.now()), c.nonce()
	req.Header.Set(HeaderKey, keyID)
	req.Header.Set(HeaderTimestamp, ts)
	req.Header.Set(HeaderNonce, nonce)
	req.Header.Set(HeaderSignature, Sign(key, method, req.URL.RequestURI(), ts, nonce, body))
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return transportError(ctx, c.base.Host, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return transportError(ctx, c.base.Host, err)
	}
	if resp.StatusCode >= 300 {
		var eb struct {
			Error *Error `json:"error"`
		}
		if json.Unmarshal(data, &eb) == nil && eb.Error != nil && eb.Error.Kind != "" {
			return eb.Error
		}
		kind := KindInternal
		if resp.StatusCode < 500 {
			kind = KindBadRequest
		}
		return Errorf(kind, "http_"+strconv.Itoa(resp.StatusCode), "%s %s answered %s: is %s a wicket node (wicket node serve)?", method, path, resp.Status, c.base.Host)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return &Error{Kind: KindInternal, Code: "bad_response", Err: err,
			Message: fmt.Sprintf("%s %s: unreadable answer (%v): is %s a wicket node (wicket node serve)?", method, path, err, c.base.Host)}
	}
	return nil
}

// transportError classifies a failure to get an answer.
func transportError(ctx context.Context, host string, err error) error {
	if ctx.Err() != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return &Error{Kind: KindTimeout, Code: "deadline", Err: err,
				Message: "no answer from the node at " + host + " before the deadline; a write may still apply: check the snapshot or ticket before sending again"}
		}
		return &Error{Kind: KindTimeout, Code: "canceled", Message: "request canceled", Err: err}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return &Error{Kind: KindTimeout, Code: "timeout", Err: err,
			Message: "the node at " + host + " did not answer in time; a write may still apply: check before sending again"}
	}
	return &Error{Kind: KindUnreachable, Code: "unreachable", Err: err,
		Message: "cannot reach a node at " + host + ": is `wicket node serve` running there?"}
}
