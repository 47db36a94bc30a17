package front

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"wicket/agent"
	"wicket/internal/project"
)

// serveLimited serves h as `wicket mcp --http` does (h.Server on
// h.Listener) on a loopback port and returns its address.
func serveLimited(t *testing.T, h *HTTPServer) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := h.Server()
	go func() { _ = srv.Serve(h.Listener(ln, false)) }()
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// stalledPost opens a raw connection and sends a POST's full headers with
// a Content-Length, but not the body.
func stalledPost(t *testing.T, addr, auth string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if auth != "" {
		auth = "Authorization: Bearer " + auth + "\r\n"
	}
	if _, err := fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n%sContent-Length: 100\r\n\r\n", MCPPath, addr, auth); err != nil {
		t.Fatal(err)
	}
	return c
}

// readAll reads what the server sends until it closes the connection; a
// connection still open after wait fails the test.
func readAll(t *testing.T, c net.Conn, wait time.Duration, what string) string {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(wait))
	b, err := io.ReadAll(c)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("%s: the server kept the connection open for %s (read %q)", what, wait, b)
	}
	return string(b)
}

// TestHTTPSlowBodies (issue 31, item 1): a connection that sends full
// headers and stalls its body is closed once BodyTimeout passes, with a
// 408; an unauthenticated one is refused 401 at once, before any body
// arrives. (The connection bounds are TestHTTPLockOut's.)
func TestHTTPSlowBodies(t *testing.T) {
	cs := &Callers{}
	tok, err := cs.Add("desk", agent.ProfileOffline, nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	newHTTP := func(body time.Duration, _ int) *HTTPServer {
		h, err := NewHTTP(agent.Options{Profile: agent.ProfileOffline, NewID: uuid.NewString},
			agent.Backends{Config: project.Defaults()}, HTTPOptions{Addr: "127.0.0.1:0", Callers: cs, BodyTimeout: body})
		if err != nil {
			t.Fatal(err)
		}
		return h
	}

	// The body bound: a short BodyTimeout closes a caller's stalled body.
	addr := serveLimited(t, newHTTP(100*time.Millisecond, 8))
	got := readAll(t, stalledPost(t, addr, tok), 10*time.Second, "a stalled body with a token")
	if !strings.HasPrefix(got, "HTTP/1.1 408") || !strings.Contains(got, "did not arrive within 100ms") {
		t.Errorf("a stalled body: %q; want 408 naming the bound", got)
	}

	// No token: refused before the body is read, though the body bound is
	// an hour away.
	addr = serveLimited(t, newHTTP(time.Hour, 8))
	for _, auth := range []string{"", "wkc_wrong"} {
		got := readAll(t, stalledPost(t, addr, auth), 10*time.Second, "a stalled body without a valid token")
		if !strings.HasPrefix(got, "HTTP/1.1 401") || !strings.Contains(strings.ToLower(got), "www-authenticate: bearer") {
			t.Errorf("token %q: %q; want 401 at once", auth, got)
		}
	}
}
