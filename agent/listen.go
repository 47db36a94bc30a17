package agent

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Notices, and the subscriptions/listen streams of protocol 2026-07-28.
//
// A notice is something an agent should know when it happens: a budget
// reaches 80 %, a strategy worker is killed at its limit, the node is lost
// or back, a confirm waits for the operator. A legacy session hears it as
// notifications/message (logging). The 2026-07-28 revision deprecates
// logging (SEP-2577) and makes every notification opt-in through
// subscriptions/listen, whose filter names list changes and resource URIs
// only, so a modern caller hears a notice as
// notifications/resources/updated for wicket://session, the resource that
// lists the caller's last notices, with the notice itself in the
// notification's _meta under metaNotice. Losing or regaining the node is
// also an update of wicket://node/snapshot carrying the same notice.
//
// A listen stream is acknowledged only for the URIs that send updates
// (listenable); it never blocks a sender: a stream that does not drain
// loses an update.

// metaNotice is the _meta key of the notice a resources/updated carries.
const metaNotice = "wicket/notice"

// maxNotices bounds the notices wicket://session keeps.
const maxNotices = 20

// notice is one notice, as notifications/message params and as a
// wicket://session entry.
type notice struct {
	Level  mcp.LoggingLevel `json:"level"`
	Logger string           `json:"logger"` // what it is about: budget, worker, node, approval
	Data   string           `json:"data"`
	At     time.Time        `json:"at"`
}

// listens are one server's open subscriptions/listen streams and its last
// notices.
type listens struct {
	s *Server

	mu      sync.Mutex
	streams map[*listener]bool
	notices []notice
}

// listener is one open subscriptions/listen stream and the URIs it was
// acknowledged for.
type listener struct {
	sess server.ClientSession
	id   any // the listen request's id (the wire layer's surrogate)
	uris []string
}

func newListens(s *Server) *listens { return &listens{s: s, streams: map[*listener]bool{}} }

// listenable reports whether uri sends updates on this server:
// wicket://session (notices) always, wicket://node/snapshot where the
// node is served.
func (s *Server) listenable(uri string) bool {
	switch uri {
	case uriSession:
		return true
	case uriSnapshot:
		return s.Access().Served("node_snapshot") && hasNode(s.tb)
	}
	return false
}

// open is the BeforeSubscriptionsListen hook. It narrows the request's
// resource URIs to those that send updates (mcp-go acknowledges what is
// left, so the client learns what was established), and a stream with any
// left joins until its request ends. A stream on the snapshot primes the
// node watch first, so a change made after the acknowledgement is a
// change.
func (ls *listens) open(ctx context.Context, id any, req *mcp.SubscriptionsListenRequest) {
	var uris []string
	for _, u := range req.Params.Notifications.ResourceSubscriptions {
		if ls.s.listenable(u) && !slices.Contains(uris, u) {
			uris = append(uris, u)
		}
	}
	req.Params.Notifications.ResourceSubscriptions = uris
	sess := server.ClientSessionFromContext(ctx)
	if sess == nil || len(uris) == 0 {
		return
	}
	l := &listener{sess: sess, id: id, uris: uris}
	ls.mu.Lock()
	ls.streams[l] = true
	ls.mu.Unlock()
	ls.s.watch.prime(ctx) // the node lost or back is a notice, and a snapshot change
	go func() {
		<-ctx.Done()
		ls.mu.Lock()
		delete(ls.streams, l)
		ls.mu.Unlock()
	}()
}

// wants reports whether an open stream listens on uri.
func (ls *listens) wants(uri string) bool {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	for l := range ls.streams {
		if slices.Contains(l.uris, uri) {
			return true
		}
	}
	return false
}

// updated tells every stream on uri that it changed, with n (when not
// nil) in the notification's _meta.
func (ls *listens) updated(uri string, n *notice) {
	ls.mu.Lock()
	var to []*listener
	for l := range ls.streams {
		if slices.Contains(l.uris, uri) {
			to = append(to, l)
		}
	}
	ls.mu.Unlock()
	for _, l := range to {
		meta := map[string]any{mcp.MetaKeySubscriptionID: l.id}
		if n != nil {
			meta[metaNotice] = *n
		}
		msg := mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{
			Method: string(mcp.MethodNotificationResourceUpdated),
			Params: mcp.NotificationParams{Meta: meta, AdditionalFields: map[string]any{"uri": uri}},
		}}
		select {
		case l.sess.NotificationChannel() <- msg:
		default: // a stream that does not drain loses this update, never blocks the sender
		}
	}
}

// recent is a copy of the last notices, oldest first.
func (ls *listens) recent() []notice {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return append([]notice{}, ls.notices...)
}

// keep records a notice in wicket://session and sends it to the streams
// listening there (and, for the node, on the snapshot).
func (s *Server) keep(level mcp.LoggingLevel, logger, text string) {
	n := notice{Level: level, Logger: logger, Data: text, At: s.opts.Now().UTC()}
	ls := s.listen
	ls.mu.Lock()
	ls.notices = append(ls.notices, n)
	if len(ls.notices) > maxNotices {
		ls.notices = slices.Delete(ls.notices, 0, len(ls.notices)-maxNotices)
	}
	ls.mu.Unlock()
	ls.updated(uriSession, &n)
	if logger == "node" {
		ls.updated(uriSnapshot, &n)
	}
}

// announce delivers a notice from outside a call (the node watch, a
// worker's death): kept, sent to the listen streams, and to a client that
// opened a legacy session as notifications/message through mcp-go's level
// filter.
func (s *Server) announce(level mcp.LoggingLevel, logger, text string) {
	s.keep(level, logger, text)
	if id, _ := s.client.Load().(string); id != "" && s.ProtocolVersion() != "" { // a legacy initialize happened
		_ = s.mcp.SendLogMessageToSpecificClient(id, mcp.NewLoggingMessageNotification(level, logger, text))
	}
}

// announceCall delivers a notice of the call ctx: kept, sent to the listen
// streams, and, when the call is legacy, as notifications/message on the
// call's own stream whatever the client's log level (budget warnings are
// few, and each must be heard when it happens). A modern call's result
// carries its own warnings.
func (s *Server) announceCall(ctx context.Context, level mcp.LoggingLevel, logger, text string) {
	s.keep(level, logger, text)
	if srv := server.ServerFromContext(ctx); srv != nil && !server.IsModernRequest(ctx) {
		_ = srv.SendNotificationToClient(ctx, "notifications/message", map[string]any{"level": level, "logger": logger, "data": text})
	}
}
