package front

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"wicket/agent"
	"wicket/internal/project"
)

// serveGated serves h as `wicket mcp --http` does and returns its address
// and its connection gate, whose memory returns are counted on freed.
func serveGated(t *testing.T, h *HTTPServer) (string, chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := h.Listener(ln, false).(*connGate)
	freed := make(chan struct{}, 16)
	g.returnMemory = func() { freed <- struct{}{} }
	srv := h.Server()
	go func() { _ = srv.Serve(g) }()
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String(), freed
}

// halfSent opens a connection and sends part of a request's headers.
func halfSent(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: appl", MCPPath, addr); err != nil {
		t.Fatal(err)
	}
	return c
}

// initializeOnce sends one initialize on a new connection and returns its
// status and body.
func initializeOnce(t *testing.T, addr, token string) (int, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+MCPPath, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
	res, err := client.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// TestHTTPLockOut is issue 44's item 1: one local process holding 64
// half-sent requests from 127.0.0.1 made 0 of 40 legitimate initializes
// succeed, because the bound per address counted connections before any
// token was read. Now unauthenticated connections share one global pool
// that closes its oldest to make room, only authenticated connections
// count against a caller's share, and the memory of a flood is returned.
func TestHTTPLockOut(t *testing.T) {
	cs := &Callers{}
	desk, err := cs.Add("desk", agent.ProfileOffline, nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	other, err := cs.Add("other", agent.ProfileOffline, nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	newHTTP := func(o HTTPOptions) *HTTPServer {
		o.Addr, o.Callers, o.BodyTimeout = "127.0.0.1:0", cs, time.Hour
		h, err := NewHTTP(agent.Options{Profile: agent.ProfileOffline, NewID: uuid.NewString}, agent.Backends{Config: project.Defaults()}, o)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	initializes := func(addr, token string, n int) {
		t.Helper()
		ok := 0
		var last string
		for range n {
			status, body := initializeOnce(t, addr, token)
			if status == http.StatusOK {
				ok++
			} else {
				last = fmt.Sprintf("%d %s", status, body)
			}
		}
		if ok != n {
			t.Errorf("%d of %d legitimate initializes succeeded; the last failure: %s", ok, n, last)
		}
	}

	// The attack as reported, on the default bounds.
	addr, _ := serveGated(t, newHTTP(HTTPOptions{}))
	for range 64 {
		halfSent(t, addr)
	}
	initializes(addr, desk, 40)

	// More half-sent connections than the pool holds: the oldest are
	// closed, the newest stay, and initializes still get in.
	addr, freed := serveGated(t, newHTTP(HTTPOptions{MaxUnauthConns: 16}))
	var held []net.Conn
	for range 64 {
		held = append(held, halfSent(t, addr))
	}
	for i, c := range held[:40] { // the first 48 were pushed out; 40 is safely among them
		if got := readAll(t, c, 10*time.Second, fmt.Sprintf("half-sent connection %d of 64", i)); got != "" {
			t.Fatalf("an evicted connection got %q", got)
		}
	}
	initializes(addr, desk, 40)
	// The flood ends: once the pool drains, the memory goes back.
	for _, c := range held {
		c.Close()
	}
	select {
	case <-freed:
	case <-time.After(10 * time.Second):
		t.Error("the pool drained after evicting connections, and no memory was returned")
	}

	// Authenticated work counts against its caller's share only.
	addr, _ = serveGated(t, newHTTP(HTTPOptions{MaxConnsPerCaller: 3}))
	stalled := []net.Conn{stalledPost(t, addr, desk), stalledPost(t, addr, desk), stalledPost(t, addr, desk)}
	for i := 0; ; i++ { // the server admits the stalled posts as it reads their headers
		status, body := initializeOnce(t, addr, desk)
		if status == http.StatusServiceUnavailable && strings.Contains(body, "too many connections of this caller (at most 3") {
			break
		}
		if i == 100 {
			t.Fatalf("desk holding 3 connections at its share of 3: %d %s; want 503", status, body)
		}
	}
	initializes(addr, other, 5)
	stalled[0].Close()
	for i := 0; ; i++ { // the server notices the close asynchronously
		if status, _ := initializeOnce(t, addr, desk); status == http.StatusOK {
			break
		}
		if i == 100 {
			t.Fatal("a closed connection did not give its caller's place back")
		}
	}
}
