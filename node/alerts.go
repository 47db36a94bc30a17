package node

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Alert is one alert of the node (package node/alert raises them), as
// every sink receives it: the webhook's JSON, GET /v1/alerts.
type Alert struct {
	ID       string    `json:"id"`   // unique: a sink sees one id once
	Kind     string    `json:"kind"` // breaker_trip, kill, heartbeat_lapse, stream_lost, statement_mismatch, approval_waiting, ...
	Severity string    `json:"severity"`
	Time     time.Time `json:"time"`
	Title    string    `json:"title"`
	Text     string    `json:"text"`
	Venue    string    `json:"venue,omitempty"`
	// Link answers it (a waiting approval's one-time link); empty otherwise.
	Link string `json:"link,omitempty"`
	// Ticket is the audit entry that raised it, when one did.
	Ticket string `json:"ticket,omitempty"`
}

// AlertPage is GET /v1/alerts?after=N: the alerts raised after the N'th
// (the node keeps the last few), and the count to pass next.
type AlertPage struct {
	Alerts []Alert `json:"alerts"`
	Next   int64   `json:"next"`
}

// Alerts reads the alerts raised after the after'th.
func (c *Client) Alerts(ctx context.Context, after int64) (AlertPage, error) {
	q := url.Values{}
	if after > 0 {
		q.Set("after", strconv.FormatInt(after, 10))
	}
	var p AlertPage
	err := c.do(ctx, http.MethodGet, "/v1/alerts", q, nil, KeyObserve, &p)
	return p, err
}

// Statement reads the daily statement of day (YYYY-MM-DD, UTC) of venue,
// or of every venue when venue is empty.
func (c *Client) Statement(ctx context.Context, day, venue string) ([]Statement, error) {
	q := url.Values{"day": {day}}
	if venue != "" {
		q.Set("venue", venue)
	}
	var out struct {
		Statements []Statement `json:"statements"`
	}
	err := c.do(ctx, http.MethodGet, "/v1/statement", q, nil, KeyObserve, &out)
	return out.Statements, err
}
