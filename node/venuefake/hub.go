package venuefake

import (
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

// Upgrade turns a request into a stream connection (any origin: the
// fakes serve loopback tests only).
func Upgrade(w http.ResponseWriter, r *http.Request) (*websocket.Conn, error) {
	return upgrader.Upgrade(w, r, nil)
}

// writeWait bounds one event's write to one connection.
const writeWait = time.Second

// Hub is a fake's open user-data stream connections, each with the tag
// its events carry (Binance's subscription id; struct{} where none). An
// event goes to every connection; one whose write fails is closed and
// forgotten. The zero value is empty and ready.
type Hub[T any] struct {
	mu    sync.Mutex
	conns map[*websocket.Conn]T
}

// Add registers c with its tag.
func (h *Hub[T]) Add(c *websocket.Conn, tag T) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.conns == nil {
		h.conns = map[*websocket.Conn]T{}
	}
	h.conns[c] = tag
}

// Forget closes c and removes it.
func (h *Hub[T]) Forget(c *websocket.Conn) {
	h.mu.Lock()
	delete(h.conns, c)
	h.mu.Unlock()
	c.Close()
}

// Drop closes every connection (a venue dropping its streams).
func (h *Hub[T]) Drop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for c := range h.conns {
		c.Close()
		delete(h.conns, c)
	}
}

// Len counts the open connections.
func (h *Hub[T]) Len() int { h.mu.Lock(); defer h.mu.Unlock(); return len(h.conns) }

// Listen reads c (and drops what it reads) until the client leaves or
// the connection is dropped, then forgets it.
func (h *Hub[T]) Listen(c *websocket.Conn) {
	for {
		if _, _, err := c.ReadMessage(); err != nil {
			h.Forget(c)
			return
		}
	}
}

// Send writes one event, as message kind (websocket.TextMessage or
// BinaryMessage), to every connection: data makes its bytes for a
// connection's tag.
func (h *Hub[T]) Send(kind int, data func(tag T) []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for c, tag := range h.conns {
		c.SetWriteDeadline(time.Now().Add(writeWait)) //nolint:errcheck // test fake
		if c.WriteMessage(kind, data(tag)) != nil {
			c.Close()
			delete(h.conns, c)
		}
	}
}

// Broadcast writes the same event to every connection.
func (h *Hub[T]) Broadcast(kind int, data []byte) {
	h.Send(kind, func(T) []byte { return data })
}
