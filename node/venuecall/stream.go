package venuecall

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gorilla/websocket"
)

// StreamURL is the stream endpoint under a REST base URL's host and path:
// ws for a plain http base, wss otherwise, then path.
func StreamURL(base *url.URL, path string) string {
	scheme := "wss"
	if base.Scheme == "http" {
		scheme = "ws"
	}
	return scheme + "://" + base.Host + strings.TrimSuffix(base.Path, "/") + path
}

// DialStream opens an adapter's stream connection to addr: a 10 s
// handshake, frames of at most 1 MiB. When the venue answered the
// upgrade with a refusal, refused tells its status and the start of its
// body, for the adapter's error.
func DialStream(ctx context.Context, addr string) (conn *websocket.Conn, refused string, err error) {
	dialer := websocket.Dialer{HandshakeTimeout: 10 * time.Second}
	conn, resp, err := dialer.DialContext(ctx, addr, http.Header{})
	if err != nil {
		return nil, refusal(resp), err
	}
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	conn.SetReadLimit(1 << 20)
	return conn, "", nil
}

// refusal is what an HTTP answer that refused the websocket upgrade said.
func refusal(resp *http.Response) string {
	if resp == nil {
		return ""
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	out := " (HTTP " + resp.Status
	if b := strings.TrimSpace(string(body)); b != "" {
		out += ": " + b
	}
	return out + ")"
}

// Watch closes conn when ctx ends, which unblocks its read, until stop is
// called. With every > 0 it also runs keep every interval (a listen key's
// keep-alive); a keep that fails closes conn, which ends the stream.
func Watch(ctx context.Context, conn *websocket.Conn, every time.Duration, keep func() error) (stop func()) {
	done := make(chan struct{})
	go func() {
		var tick <-chan time.Time
		if every > 0 {
			t := time.NewTicker(every)
			defer t.Stop()
			tick = t.C
		}
		for {
			select {
			case <-ctx.Done():
				conn.Close()
				return
			case <-done:
				return
			case <-tick:
				if err := keep(); err != nil {
					conn.Close()
					return
				}
			}
		}
	}()
	return func() { close(done) }
}

// Dropped is why a stream's read ended: ctx's error when ctx ended,
// else the stream (named what) dropped with err.
func Dropped(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("%s dropped: %w", what, err)
}
