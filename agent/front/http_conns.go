package front

import (
	"container/list"
	"context"
	"fmt"
	"log/slog"
	"net"
	"runtime/debug"
	"sync"
	"time"
)

// The HTTP front desk's connection bounds. Every local client shares
// 127.0.0.1, so a bound per remote address lets one local process that
// holds connections half-sent lock every other client out before any
// token is read. Instead a connection is counted in one of two places:
//
//   - until it carries a request that authenticates, in one pool of
//     unauthenticated connections shared by all addresses, bounded by
//     MaxUnauthConns; a new connection over the bound closes the oldest
//     one in the pool, so connections held half-sent are pushed out by
//     newer ones and cannot keep a client from being read;
//   - once authenticated, against its caller's share (MaxConnsPerCaller):
//     a caller that holds too many is refused 503, the others are not.
//
// After the pool had to close connections and has drained, the memory
// their buffers held is handed back to the operating system (at most once
// a minute), so a flood leaves no lasting footprint.

// memoryReturnEvery spaces the returns of memory after floods.
const memoryReturnEvery = time.Minute

// Listener bounds the connections ln accepts as described above. A
// connection that had to be closed to make room gets nothing (it is the
// oldest that has not sent an authenticated request); tls says the
// server speaks TLS on it (kept for the log).
func (h *HTTPServer) Listener(ln net.Listener, tls bool) net.Listener {
	return &connGate{Listener: ln, maxUnauth: h.h.MaxUnauthConns, maxCaller: h.h.MaxConnsPerCaller,
		tls: tls, log: h.log, unauth: list.New(), byCaller: map[string]int{}, returnMemory: debug.FreeOSMemory}
}

type connGate struct {
	net.Listener
	maxUnauth, maxCaller int
	tls                  bool
	log                  *slog.Logger
	returnMemory         func() // debug.FreeOSMemory; counted in tests

	mu       sync.Mutex
	unauth   *list.List     // of *gatedConn, oldest first
	byCaller map[string]int // authenticated connections by Caller.owner
	evicted  int            // connections closed to make room since memory was last returned
	returned time.Time      // when memory was last returned
	warned   time.Time      // when an eviction was last logged
}

// gatedConn is a connection the gate counts: in the unauthenticated pool
// (elem set) or against owner's share.
type gatedConn struct {
	net.Conn
	g     *connGate
	elem  *list.Element // guarded by g.mu
	owner string        // guarded by g.mu; "" while unauthenticated
	auth  bool          // guarded by g.mu
	once  sync.Once
}

func (g *connGate) Accept() (net.Conn, error) {
	c, err := g.Listener.Accept()
	if err != nil {
		return nil, err
	}
	gc := &gatedConn{Conn: c, g: g}
	g.mu.Lock()
	gc.elem = g.unauth.PushBack(gc)
	var oldest *gatedConn
	if g.unauth.Len() > g.maxUnauth {
		oldest = g.unauth.Front().Value.(*gatedConn)
		g.unauth.Remove(oldest.elem)
		oldest.elem = nil
		g.evicted++
	}
	warn := oldest != nil && time.Since(g.warned) >= time.Minute
	if warn {
		g.warned = time.Now()
	}
	g.mu.Unlock()
	if oldest != nil {
		if warn {
			g.log.Warn("closing the oldest unauthenticated connection to make room", "bound", g.maxUnauth, "remote", hostOnly(oldest.RemoteAddr().String()), "tls", g.tls)
		}
		_ = oldest.Conn.Close() // its server goroutine sees the close and ends
	}
	return gc, nil
}

// admit counts the connection r came on against owner's share, once its
// request authenticated; "" means go on, else why not.
func (g *connGate) admit(gc *gatedConn, owner string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if gc.auth && gc.owner == owner {
		return ""
	}
	if g.byCaller[owner] >= g.maxCaller {
		return fmt.Sprintf("too many connections of this caller (at most %d at once): reuse a connection (keep-alive) or close idle ones, then retry", g.maxCaller)
	}
	g.uncount(gc)
	gc.auth, gc.owner = true, owner
	g.byCaller[owner]++
	return ""
}

// uncount takes gc out of wherever it is counted; g.mu held.
func (g *connGate) uncount(gc *gatedConn) {
	switch {
	case gc.elem != nil:
		g.unauth.Remove(gc.elem)
		gc.elem = nil
	case gc.auth:
		if g.byCaller[gc.owner]--; g.byCaller[gc.owner] <= 0 {
			delete(g.byCaller, gc.owner)
		}
		gc.auth = false
	}
}

// release is gc closing: its place goes back, and after a flood has
// drained the memory goes back too.
func (g *connGate) release(gc *gatedConn) {
	g.mu.Lock()
	g.uncount(gc)
	give := g.evicted > 0 && g.unauth.Len() <= g.maxUnauth/4 && time.Since(g.returned) >= memoryReturnEvery
	if give {
		g.evicted, g.returned = 0, time.Now()
	}
	g.mu.Unlock()
	if give {
		go g.returnMemory()
	}
}

func (c *gatedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.g.release(c) })
	return err
}

// gatedKey is the context key of the connection a request came on.
type gatedKey struct{}

// withGatedConn is http.Server.ConnContext: it keeps the gated connection
// (under TLS, the one inside it) with the connection's context.
func withGatedConn(ctx context.Context, c net.Conn) context.Context {
	for {
		switch v := c.(type) {
		case *gatedConn:
			return context.WithValue(ctx, gatedKey{}, v)
		case interface{ NetConn() net.Conn }:
			c = v.NetConn()
		default:
			return ctx
		}
	}
}

// admit counts the connection of a request that authenticated as owner
// against that caller's share; "" means go on. A request on a connection
// the gate does not know (a test's httptest server) is let through.
func admit(ctx context.Context, owner string) string {
	gc, _ := ctx.Value(gatedKey{}).(*gatedConn)
	if gc == nil {
		return ""
	}
	return gc.g.admit(gc, owner)
}
