package venuecall

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"wicket/internal/project"
	"wicket/node"
)

func TestClassify(t *testing.T) {
	if Classify("v", nil) != nil {
		t.Fatal("nil is not nil")
	}
	var ve *node.VenueError
	rl := &RateLimited{Status: 429, Until: time.Unix(0, 0)}
	if err := Classify("v", rl); !errors.As(err, &ve) || ve.Kind != node.ErrVenueRejected || !strings.HasSuffix(ve.Message, "nothing was sent") || ve.Venue != "v" {
		t.Errorf("rate limit: %v", err)
	}
	lost := &url.Error{Op: "Post", URL: "https://x/api?signature=abc", Err: &net.OpError{Op: "read", Err: errors.New("reset")}}
	if err := Classify("v", lost); !errors.As(err, &ve) || ve.Kind != node.ErrVenueUnknown || strings.Contains(ve.Message, "signature") {
		t.Errorf("lost answer: %v", err)
	}
	if err := Classify("v", errors.New("bad json")); errors.As(err, &ve) || err.Error() != "v: bad json" {
		t.Errorf("other: %v", err)
	}
}

func TestStatesOf(t *testing.T) {
	s := States{Filled: []string{"F"}, Canceled: []string{"C", "X"}, Rejected: []string{"R"}}
	for status, want := range map[string]node.VenueState{"F": node.VenueFilled, "X": node.VenueCanceled, "R": node.VenueRejected, "NEW": node.VenueOpen, "SOMETHING_NEW": node.VenueOpen} {
		if got := s.Of(status); got != want {
			t.Errorf("%s: %v, want %v", status, got, want)
		}
	}
}

func TestNewSetupEndpoints(t *testing.T) {
	test, live := Endpoints{REST: "https://test.example"}, Endpoints{REST: "https://live.example", Stream: "wss://stream.live.example/ws"}
	cases := []struct {
		venue       project.Venue
		rest, wsURL string
	}{
		{project.Venue{Name: "a", Environment: "testnet"}, "https://test.example", "wss://test.example/s"},
		{project.Venue{Name: "a", Environment: project.EnvLive}, "https://live.example", "wss://stream.live.example/ws"},
		{project.Venue{Name: "a", Environment: project.EnvLive, BaseURL: "http://127.0.0.1:80/base/"}, "http://127.0.0.1:80/base", "ws://127.0.0.1:80/base/s"},
	}
	for _, c := range cases {
		set, err := NewSetup(c.venue, test, live, "/s", nil, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		if set.REST != c.rest || set.Stream != c.wsURL {
			t.Errorf("%+v: %q %q, want %q %q", c.venue, set.REST, set.Stream, c.rest, c.wsURL)
		}
		if set.HTTP.Timeout != DefaultTimeout || set.HTTP.Transport != set.Transport || set.Now == nil {
			t.Errorf("%+v: client %+v", c.venue, set.HTTP)
		}
	}
	if _, err := NewSetup(project.Venue{Name: "a", BaseURL: "http://[::1"}, test, live, "/s", nil, 0, nil); err == nil || !strings.Contains(err.Error(), "venue a: base_url") {
		t.Errorf("a bad base_url: %v", err)
	}
}

func TestStreamDialWatchAndDrop(t *testing.T) {
	up := websocket.Upgrader{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/refuse" {
			http.Error(w, "no such key", http.StatusBadRequest)
			return
		}
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		for {
			if _, _, err := c.ReadMessage(); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	if _, refused, err := DialStream(context.Background(), StreamURL(u, "/refuse")); err == nil || refused != " (HTTP 400 Bad Request: no such key)" {
		t.Fatalf("refused upgrade: %q %v", refused, err)
	}

	// ctx ending closes the connection, which ends the read with ctx's error.
	ctx, cancel := context.WithCancel(context.Background())
	conn, _, err := DialStream(ctx, StreamURL(u, "/ok"))
	if err != nil {
		t.Fatal(err)
	}
	defer Watch(ctx, conn, 0, nil)()
	cancel()
	_, _, rerr := conn.ReadMessage()
	if err := Dropped(ctx, "s", rerr); !errors.Is(err, context.Canceled) {
		t.Errorf("after ctx ended: %v", err)
	}

	// A keep that fails closes the connection: the read ends, as a drop.
	conn2, _, err := DialStream(context.Background(), StreamURL(u, "/ok"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn2.Close()
	defer Watch(context.Background(), conn2, time.Millisecond, func() error { return errors.New("listen key expired") })()
	_, _, rerr = conn2.ReadMessage()
	if err := Dropped(context.Background(), "s", rerr); err == nil || !strings.HasPrefix(err.Error(), "s dropped: ") {
		t.Errorf("after a failed keep: %v", err)
	}
}
