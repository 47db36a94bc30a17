package agent

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

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
// arrives; and connections over the per-address bound are refused 503
// while a legitimate request on an open connection is still served.
func TestHTTPSlowBodies(t *testing.T) {
	cs := &Callers{}
	tok, err := cs.Add("desk", ProfileOffline, nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	newHTTP := func(body time.Duration, perAddr int) *HTTPServer {
		h, err := NewHTTP(Options{Profile: ProfileOffline, NewID: uuid.NewString},
			Backends{Config: project.Defaults()}, HTTPOptions{Addr: "127.0.0.1:0", Callers: cs, BodyTimeout: body, MaxConnsPerAddr: perAddr})
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

	// The per-address bound: 3 connections held open, the 4th refused;
	// one of the 3 still serves a request.
	addr = serveLimited(t, newHTTP(time.Hour, 3))
	held := []net.Conn{stalledPost(t, addr, tok), stalledPost(t, addr, tok)}
	live, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	held = append(held, live)
	extra, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer extra.Close()
	if got := readAll(t, extra, 10*time.Second, "a connection over the bound"); !strings.HasPrefix(got, "HTTP/1.1 503") || !strings.Contains(got, "too many connections from 127.0.0.1 (at most 3") {
		t.Errorf("a 4th connection: %q; want 503 naming the bound", got)
	}
	ping := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	fmt.Fprintf(live, "POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n%s", MCPPath, addr, tok, len(ping), ping)
	_ = live.SetReadDeadline(time.Now().Add(10 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(live), nil)
	if err != nil {
		t.Fatalf("a request on a connection under the bound: %v", err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Errorf("initialize under the bound: %d", res.StatusCode)
	}
	// A closed connection gives its place back.
	held[0].Close()
	for i := 0; ; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", MCPPath, addr)
		got := readAll(t, c, 10*time.Second, "a connection after one closed")
		c.Close()
		if strings.HasPrefix(got, "HTTP/1.1 401") {
			break
		}
		if i == 100 { // the server notices the close asynchronously
			t.Fatalf("after a held connection closed, a new one still gets %q", got)
		}
	}
}
