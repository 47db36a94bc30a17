package venuecall

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestMessageDropsTheQuery(t *testing.T) {
	err := &url.Error{Op: "Post", URL: "https://api.example.com/api/v3/order?timestamp=1&signature=abcdef", Err: errors.New("EOF")}
	if m := Message(err); m != "Post /api/v3/order: EOF" || strings.Contains(m, "signature") {
		t.Errorf("Message = %q", m)
	}
}

func TestGateAndTypedAnswers(t *testing.T) {
	status := http.StatusTooManyRequests
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if status == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", "2")
		}
		w.WriteHeader(status)
	}))
	defer srv.Close()
	now := time.Unix(1000, 0)
	tr := &Transport{Now: func() time.Time { return now }}
	c := &http.Client{Transport: tr}
	_, err := c.Get(srv.URL)
	var rl *RateLimited
	if !errors.As(err, &rl) || !rl.Until.Equal(now.Add(2*time.Second)) || Unknown(err) || !Transient(err) {
		t.Fatalf("429: %v", err)
	}
	status = http.StatusOK
	if _, err := c.Get(srv.URL); !errors.As(err, &rl) {
		t.Errorf("the gate let a request through before Retry-After: %v", err)
	}
	now = now.Add(2 * time.Second)
	if resp, err := c.Get(srv.URL); err != nil {
		t.Errorf("after Retry-After: %v", err)
	} else {
		resp.Body.Close()
	}
	status = http.StatusBadGateway
	_, err = c.Get(srv.URL)
	var se *ServerError
	if !errors.As(err, &se) || se.Status != 502 || !Unknown(err) {
		t.Errorf("5xx: %v", err)
	}
	for in, want := range map[string]time.Duration{"": DefaultRetryAfter, "7": 7 * time.Second, "x": DefaultRetryAfter, "99999": MaxRetryAfter} {
		if got := retryAfter(in, now); got != want {
			t.Errorf("retryAfter(%q) = %s, want %s", in, got, want)
		}
	}
}
