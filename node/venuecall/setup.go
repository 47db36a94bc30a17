package venuecall

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"wicket/internal/project"
)

// DefaultTimeout is an adapter's per-request timeout when its
// configuration sets none.
const DefaultTimeout = 10 * time.Second

// Endpoints are a venue's REST base and stream endpoint. An empty Stream
// is derived from REST (StreamURL).
type Endpoints struct{ REST, Stream string }

// Setup is what every adapter's New derives from its venue table: the
// endpoints (the environment's, or those under base_url), and an HTTP
// client whose calls go through one rate-limit gate and time out.
type Setup struct {
	Endpoints
	Transport *Transport
	HTTP      *http.Client
	Now       func() time.Time
}

// NewSetup picks v's endpoints — live's for environment live, else
// test's; a base_url replaces both, the stream at streamPath under its
// host — and makes the client over base (http.DefaultTransport when nil)
// with timeout (DefaultTimeout when not positive) and now (time.Now when
// nil).
func NewSetup(v project.Venue, test, live Endpoints, streamPath string, base http.RoundTripper, timeout time.Duration, now func() time.Time) (Setup, error) {
	ep := test
	if v.Environment == project.EnvLive {
		ep = live
	}
	if v.BaseURL != "" {
		u, err := url.Parse(v.BaseURL)
		if err != nil {
			return Setup{}, fmt.Errorf("venue %s: base_url: %w", v.Name, err)
		}
		ep = Endpoints{REST: strings.TrimSuffix(v.BaseURL, "/"), Stream: StreamURL(u, streamPath)}
	} else if ep.Stream == "" {
		u, err := url.Parse(ep.REST)
		if err != nil {
			return Setup{}, fmt.Errorf("venue %s: REST endpoint: %w", v.Name, err)
		}
		ep.Stream = StreamURL(u, streamPath)
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if now == nil {
		now = time.Now
	}
	tr := &Transport{Base: base, Now: now}
	return Setup{Endpoints: ep, Transport: tr, HTTP: &http.Client{Transport: tr, Timeout: timeout}, Now: now}, nil
}
