package front

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"wicket/agent"
	"wicket/agent/wire"
)

// MCPPath is where the HTTP server answers.
const MCPPath = "/mcp"

// HTTPOptions configure the Streamable HTTP server.
type HTTPOptions struct {
	// Addr is the address the server listens on (host:port), for the
	// Host and Origin checks and wicket://session.
	Addr string
	// Callers authenticates every request; nil serves without auth
	// (--no-auth): every session gets agent.Options.Profile and agent.Options.Deny.
	Callers *Callers
	// OAuth, when set, also accepts JWT access tokens of its issuer
	// (agent/oauth.go) and serves the Protected Resource Metadata.
	OAuth *OAuth
	// Remote allows a non-loopback listener (the caller has checked TLS).
	Remote bool
	// AllowOrigins are extra Origin values accepted (scheme://host[:port]).
	AllowOrigins []string
	// MaxSessions bounds live sessions (default 256); IdleTTL drops a
	// session nobody used for that long (default 1 h).
	MaxSessions int
	IdleTTL     time.Duration

	// Limits on slow and numerous clients (see Server and Listener):
	// HeaderTimeout bounds reading a request's headers and BodyTimeout its
	// body (default 10 s each: a client that sends its headers and stalls
	// its body is cut off then); IdleTimeout closes a kept-alive
	// connection nobody uses (default 2 min). MaxUnauthConns bounds the
	// connections that have not yet carried an authenticated request, all
	// addresses together (default 256; the oldest is closed to make room
	// for a new one); MaxConnsPerCaller bounds one caller's authenticated
	// connections (default 64). See http_conns.go.
	HeaderTimeout     time.Duration
	BodyTimeout       time.Duration
	IdleTimeout       time.Duration
	MaxUnauthConns    int
	MaxConnsPerCaller int
}

// HTTPServer serves MCP over Streamable HTTP at /mcp (mcp-go's transport).
// Each session is its own Server — its own access set (from its caller),
// pending previews, trace session id and node watch — so a preview token
// issued in one session never confirms in another. In front of mcp-go it
// checks Host and Origin (DNS-rebinding protection), authenticates the
// bearer token, routes by Mcp-Session-Id, and runs every message through
// the session's wire layer (exact ids, cancellation, batches, size bound).
// A request in protocol 2026-07-28 has no session: it is routed to its
// caller's own Server instead (modern.go).
type HTTPServer struct {
	opts agent.Options                     // every session's start, defaults filled (agent.Sessions)
	open func(agent.Seat) (Session, error) // a session's or modern caller's Server
	h    HTTPOptions
	log  *slog.Logger

	mu       sync.Mutex
	sessions map[string]*httpSession
	modern   map[string]*httpSession // Caller.owner → its 2026-07-28 state (modern.go)
	closing  bool
	inflight sync.WaitGroup
}

type httpSession struct {
	srv    Session
	http   *server.StreamableHTTPServer
	caller string // the caller's name
	owner  string // Caller.owner: who may use the session

	mu   sync.Mutex
	used time.Time // when the last request began or ended
	busy int       // requests being served now (a call, an open GET stream)
}

// enter marks a request begun; leave, ended.
func (s *httpSession) enter(now time.Time) {
	s.mu.Lock()
	s.used = now
	s.busy++
	s.mu.Unlock()
}

func (s *httpSession) leave(now time.Time) {
	s.mu.Lock()
	s.used = now
	s.busy--
	s.mu.Unlock()
}

// idleSince is when the session was last used; ok is false while it is
// serving a request, so a long call or an open GET stream is never idle.
func (s *httpSession) idleSince() (since time.Time, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.used, s.busy == 0
}

// NewHTTP builds the HTTP server. Without callers (nil) every session runs
// opts' profile and deny list; with callers, there must be at least one.
func NewHTTP(opts agent.Options, b agent.Backends, h HTTPOptions) (*HTTPServer, error) {
	sessions, err := agent.NewSessions(opts, b) // one record of whose orders are whose
	if err != nil {
		return nil, err
	}
	opts = sessions.Options()
	if h.Callers == nil && h.OAuth == nil {
		if _, err := agent.Check(opts.Profile, opts.Deny); err != nil {
			return nil, err
		}
	} else if h.OAuth == nil && h.Callers.Len() == 0 {
		return nil, agent.NewUsageError("no callers are configured for this HTTP server: add one with `wicket callers add NAME --profile P` " +
			"(it prints the bearer token once), or serve a single local operator with --no-auth")
	}
	if h.MaxSessions <= 0 {
		h.MaxSessions = 256
	}
	if h.IdleTTL <= 0 {
		h.IdleTTL = time.Hour
	}
	if h.HeaderTimeout <= 0 {
		h.HeaderTimeout = 10 * time.Second
	}
	if h.BodyTimeout <= 0 {
		h.BodyTimeout = 10 * time.Second
	}
	if h.IdleTimeout <= 0 {
		h.IdleTimeout = 2 * time.Minute
	}
	if h.MaxUnauthConns <= 0 {
		h.MaxUnauthConns = 256
	}
	if h.MaxConnsPerCaller <= 0 {
		h.MaxConnsPerCaller = 64
	}
	return &HTTPServer{
		opts: opts, h: h,
		open:     func(seat agent.Seat) (Session, error) { return sessions.Open(seat) },
		log:      slog.New(slog.NewTextHandler(opts.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		sessions: map[string]*httpSession{},
		modern:   map[string]*httpSession{},
	}, nil
}

// sessionCount is the number of live sessions.
func (h *HTTPServer) sessionCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.sessions)
}

// ServeHTTP implements http.Handler.
func (h *HTTPServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.h.OAuth != nil && (r.URL.Path == PRMPath || r.URL.Path == PRMPath+MCPPath) {
		if why := h.checkOrigin(r); why != "" {
			closeAfter(w)
			httpError(w, http.StatusForbidden, why)
			return
		}
		h.h.OAuth.serveMetadata(w, r)
		return
	}
	if h.serveBuiltin(w, r) { // [agent.oauth] issuer = "builtin"
		return
	}
	if r.URL.Path == ServerCardPath {
		if why := h.checkOrigin(r); why != "" {
			closeAfter(w)
			httpError(w, http.StatusForbidden, why)
			return
		}
		h.serveCard(w, r)
		return
	}
	if r.URL.Path != MCPPath {
		closeAfter(w)
		http.NotFound(w, r)
		return
	}
	if r.ContentLength != 0 {
		// The body must arrive within BodyTimeout; post lifts the
		// deadline once it has read it (a long call is not cut).
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(h.h.BodyTimeout))
	}
	if why := h.checkOrigin(r); why != "" {
		closeAfter(w)
		httpError(w, http.StatusForbidden, why)
		return
	}
	caller, ok := h.authenticate(w, r)
	if !ok {
		return
	}
	if why := admit(r.Context(), caller.owner()); why != "" { // http_conns.go
		closeAfter(w)
		httpError(w, http.StatusServiceUnavailable, why)
		return
	}
	h.mu.Lock()
	closing := h.closing
	if !closing {
		h.inflight.Add(1)
	}
	h.mu.Unlock()
	if closing {
		httpError(w, http.StatusServiceUnavailable, "the server is shutting down")
		return
	}
	defer h.inflight.Done()

	switch r.Method {
	case http.MethodPost:
		h.post(w, r, caller)
	case http.MethodGet, http.MethodDelete:
		if r.ContentLength != 0 {
			closeAfter(w)
			httpError(w, http.StatusBadRequest, r.Method+" takes no body: send messages with POST")
			return
		}
		if mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion)) {
			refuseModernVerb(w, r.Method)
			return
		}
		sess, ok := h.session(w, r, caller)
		if !ok {
			return
		}
		sess.http.ServeHTTP(w, r)
		sess.leave(h.opts.Now())
		if r.Method == http.MethodDelete {
			h.drop(sess.srv.Session())
		}
	default:
		closeAfter(w)
		w.Header().Set("Allow", "GET, POST, DELETE")
		httpError(w, http.StatusMethodNotAllowed, "use POST, GET or DELETE on "+MCPPath)
	}
}

// checkOrigin validates Host and Origin against the listen address and
// the allow list; "" means the request may proceed.
func (h *HTTPServer) checkOrigin(r *http.Request) string {
	if !h.h.Remote && !h.allowedHost(hostOnly(r.Host)) {
		return fmt.Sprintf("forbidden Host %q: this server answers only to its loopback address (DNS-rebinding protection)", r.Host)
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return ""
	}
	for _, o := range h.h.AllowOrigins {
		if strings.EqualFold(strings.TrimSuffix(o, "/"), origin) {
			return ""
		}
	}
	if u, err := url.Parse(origin); err == nil && !h.h.Remote && h.allowedHost(hostOnly(u.Host)) {
		return ""
	}
	return fmt.Sprintf("forbidden Origin %q: not this server's address and not in --allow-origin (DNS-rebinding protection)", origin)
}

func (h *HTTPServer) allowedHost(host string) bool {
	host = strings.ToLower(host)
	switch host {
	case "localhost", "127.0.0.1", "::1":
		return true
	}
	if listen := strings.ToLower(hostOnly(h.h.Addr)); listen != "" && host == listen {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// hostOnly strips a port and IPv6 brackets.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

// authenticate returns the request's caller; without callers or OAuth
// the caller is the command line's own profile ("" name). A missing or
// wrong token is answered 401 with WWW-Authenticate (naming the resource
// metadata under OAuth), before any body is read, and the connection is
// closed; a valid OAuth token without a mapped scope is answered 403
// insufficient_scope.
func (h *HTTPServer) authenticate(w http.ResponseWriter, r *http.Request) (Caller, bool) {
	if h.h.Callers == nil && h.h.OAuth == nil {
		return Caller{Profile: h.opts.Profile, Deny: h.opts.Deny}, true
	}
	oa := h.h.OAuth
	refuse := func(status int, code, msg, scope string) (Caller, bool) {
		closeAfter(w)
		challenge := `Bearer realm="wicket mcp"`
		switch {
		case oa != nil:
			challenge = oa.challenge(code, msg, scope)
		case code != "":
			challenge += `, error="` + code + `"`
		}
		w.Header().Set("WWW-Authenticate", challenge)
		httpError(w, status, msg)
		return Caller{}, false
	}
	auth := r.Header.Get("Authorization")
	scheme, token, _ := strings.Cut(auth, " ")
	token = strings.TrimSpace(token)
	if auth == "" || !strings.EqualFold(scheme, "Bearer") || token == "" {
		if oa != nil {
			return refuse(http.StatusUnauthorized, "", "missing bearer token: send Authorization: Bearer <token>, an access token of "+oa.issuer+
				" (see "+oa.metadata+") or a caller's token from `wicket callers add`", oa.entryScope())
		}
		return refuse(http.StatusUnauthorized, "", "missing bearer token: send Authorization: Bearer <token> (the operator issues one with `wicket callers add`)", "")
	}
	if h.h.Callers != nil {
		if c, ok := h.h.Callers.authenticate(token); ok {
			return c, true
		}
	}
	if oa == nil || strings.Count(token, ".") != 2 {
		return refuse(http.StatusUnauthorized, "invalid_token", "unknown bearer token", "")
	}
	c, err := oa.authenticate(r.Context(), token)
	switch {
	case errors.Is(err, errInsufficientScope):
		return refuse(http.StatusForbidden, "insufficient_scope",
			"the token holds none of this server's scopes: ask the authorization server for "+oa.entryScope(), oa.entryScope())
	case err != nil:
		return refuse(http.StatusUnauthorized, "invalid_token", err.Error(), "")
	}
	return c, true
}

// stepUp answers 403 insufficient_scope when m calls a tool the caller's
// OAuth grant does not serve but another scope does; true if it did.
func (h *HTTPServer) stepUp(w http.ResponseWriter, caller Caller, m *wire.Message) bool {
	if h.h.OAuth == nil {
		return false
	}
	scope := h.h.OAuth.needsScope(caller, m)
	if scope == "" {
		return false
	}
	msg := fmt.Sprintf("this call needs scope %s (the token grants %s): ask the authorization server for a token with %s and send this request again with it: the session follows the new token's scope", scope, caller.grant, scope)
	w.Header().Set("WWW-Authenticate", h.h.OAuth.challenge("insufficient_scope", msg, scope))
	httpError(w, http.StatusForbidden, msg)
	return true
}

// session finds the request's session by Mcp-Session-Id; it must belong
// to the same caller. The session is marked busy: the caller must leave it.
func (h *HTTPServer) session(w http.ResponseWriter, r *http.Request, caller Caller) (*httpSession, bool) {
	id := r.Header.Get(server.HeaderKeySessionID)
	if id == "" {
		httpError(w, http.StatusBadRequest, "missing Mcp-Session-Id header: initialize a session first")
		return nil, false
	}
	h.mu.Lock()
	sess := h.sessions[id]
	var owner string
	if sess != nil {
		owner = sess.owner
	}
	h.mu.Unlock()
	if sess == nil {
		httpError(w, http.StatusNotFound, "unknown or ended session: initialize a new one")
		return nil, false
	}
	if owner != caller.owner() {
		if !h.rescope(sess, owner, caller) { // http_rescope.go: a step-up token of the same subject
			httpError(w, http.StatusForbidden, "this session belongs to another caller")
			return nil, false
		}
	}
	sess.enter(h.opts.Now())
	return sess, true
}

func (h *HTTPServer) drop(id string) {
	h.mu.Lock()
	sess := h.sessions[id]
	delete(h.sessions, id)
	h.mu.Unlock()
	if sess != nil {
		sess.srv.Close()
	}
}

func (h *HTTPServer) post(w http.ResponseWriter, r *http.Request, caller Caller) {
	limit := h.opts.MaxMessage
	body, err := io.ReadAll(io.LimitReader(r.Body, int64(limit)+1))
	if err != nil {
		closeAfter(w)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			httpError(w, http.StatusRequestTimeout, fmt.Sprintf("the request body did not arrive within %s: send the whole body at once", h.h.BodyTimeout))
			return
		}
		httpError(w, http.StatusBadRequest, "cannot read the request body: "+err.Error())
		return
	}
	if len(body) > limit {
		closeAfter(w) // the rest of the body is not read
		writeJSON(w, http.StatusRequestEntityTooLarge, wire.LineTooLong(limit, body))
		return
	}
	_ = http.NewResponseController(w).SetReadDeadline(time.Time{}) // read: a long call is not cut
	body = bytes.TrimSpace(body)
	modern := modernVersion(r.Header, body)
	if len(body) > 0 && body[0] == '[' {
		if modern != "" {
			writeJSON(w, http.StatusBadRequest, modernBatchRefusal(modern))
			return
		}
		sess, ok := h.session(w, r, caller)
		if ok {
			h.batch(w, r, sess, caller, body)
			sess.leave(h.opts.Now())
		}
		return
	}
	if resp, bad := wire.ShapeRefusal(body); bad {
		writeJSON(w, http.StatusBadRequest, resp)
		return
	}
	var m wire.Message
	if err := json.Unmarshal(body, &m); err != nil {
		writeJSON(w, http.StatusBadRequest, wire.Error(json.RawMessage("null"), mcp.PARSE_ERROR, "Parse error"))
		return
	}
	if m.Method == string(mcp.MethodInitialize) && modern == "" && r.Header.Get(server.HeaderKeySessionID) == "" {
		h.initialize(w, r, caller, body, &m)
		return
	}
	if h.stepUp(w, caller, &m) {
		return
	}
	if modern != "" {
		body = withModernMeta(body, &m, modern) // http_notify.go: the SDK's notifications/cancelled
		st, ok := h.callerState(w, caller)
		if !ok {
			return
		}
		h.serveOne(w, r, st, body, &m)
		st.leave(h.opts.Now())
		return
	}
	sess, ok := h.session(w, r, caller)
	if !ok {
		return
	}
	h.serveOne(w, r, sess, body, &m)
	sess.leave(h.opts.Now())
}

// initialize opens a session: a Server of its own with the caller's
// profile and deny list, behind an mcp-go transport whose only session id
// is that Server's trace session id.
func (h *HTTPServer) initialize(w http.ResponseWriter, r *http.Request, caller Caller, body []byte, m *wire.Message) {
	h.sweep()
	srv, err := h.open(agent.Seat{Caller: caller.Name, Profile: caller.Profile, Deny: caller.Deny,
		Transport: "streamable HTTP at " + h.h.Addr})
	if err != nil {
		httpError(w, http.StatusInternalServerError, "cannot open a session: "+err.Error())
		return
	}
	id := srv.Session()
	sess := &httpSession{srv: srv, caller: caller.Name, owner: caller.owner(), used: h.opts.Now(), busy: 1}
	sess.http = server.NewStreamableHTTPServer(srv.MCP(),
		server.WithEndpointPath(MCPPath),
		server.WithSessionIdManager(&oneSession{id: id}),
		server.WithDisableLocalhostProtection(true), // checkOrigin is stricter
		server.WithStreamableHTTPLogger(h.log),
	)
	if why := h.reserve(id, sess); why != "" {
		srv.Close()
		httpError(w, http.StatusServiceUnavailable, why)
		return
	}
	h.serveOne(w, r, sess, body, m)
	sess.leave(h.opts.Now())
	if w.Header().Get(server.HeaderKeySessionID) != id {
		h.drop(id) // initialize failed: no session was opened
	}
}

// reserve adds sess under id when there is room for one more session of
// its caller: at the caller's share or at the cap it evicts an idle
// session (the caller's own at its share), under the lock each time, so
// initializes arriving together each find their room or a true refusal.
// "" means sess was added; else why not.
func (h *HTTPServer) reserve(id string, sess *httpSession) string {
	mine := func(s *httpSession) bool { return s.owner == sess.owner }
	share := h.share()
	// Each round either finds room, refuses, or evicts one session (which
	// a concurrent initialize may take): bounded by the cap.
	for range h.h.MaxSessions + 1 {
		h.mu.Lock()
		atShare, atCap := h.countLocked(mine) >= share, len(h.sessions) >= h.h.MaxSessions
		if !atShare && !atCap {
			h.sessions[id] = sess
			h.mu.Unlock()
			return ""
		}
		h.mu.Unlock()
		switch {
		case atShare && !h.evictIdlest(mine):
			return fmt.Sprintf("caller %q holds %d sessions, its share of this server's %d, all in use in the last minute; end one with DELETE, or retry later",
				sess.caller, share, h.h.MaxSessions)
		case !atShare && !h.evictIdlest(func(*httpSession) bool { return true }):
			return fmt.Sprintf("too many sessions (%d), all in use in the last minute; end one with DELETE, or retry later", h.h.MaxSessions)
		}
	}
	return fmt.Sprintf("too many sessions (%d): other sessions are opening at the same time; retry", h.h.MaxSessions)
}

// sweep drops sessions idle for longer than IdleTTL (never one serving a
// request).
func (h *HTTPServer) sweep() {
	cut := h.opts.Now().Add(-h.h.IdleTTL)
	var idle []string
	h.mu.Lock()
	for id, s := range h.sessions {
		if u, ok := s.idleSince(); ok && u.Before(cut) {
			idle = append(idle, id)
		}
	}
	h.mu.Unlock()
	for _, id := range idle {
		h.drop(id)
	}
}

// share is how many sessions one caller may hold: the cap split evenly
// among the configured callers (at least one each), so a caller that opens
// session after session cannot lock the others out; without callers
// (--no-auth) the one local operator has the whole cap.
func (h *HTTPServer) share() int {
	n := 0
	if h.h.Callers != nil {
		n = h.h.Callers.Len()
	}
	if h.h.OAuth != nil {
		n++ // each OAuth subject (and grant) has one caller's share
	}
	if n <= 1 && h.h.OAuth == nil {
		return h.h.MaxSessions
	}
	return max(1, h.h.MaxSessions/max(n, 2))
}

// count is how many live sessions match.
func (h *HTTPServer) count(match func(*httpSession) bool) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.countLocked(match)
}

func (h *HTTPServer) countLocked(match func(*httpSession) bool) int {
	n := 0
	for _, s := range h.sessions {
		if match(s) {
			n++
		}
	}
	return n
}

// evictIdlest drops the least recently used of the sessions among
// matches when it has been idle for at least a minute (a client that went
// away without DELETE), to make room for a new one. A session serving a
// request (a long call, an open GET stream) is in use, however long ago it
// began.
func (h *HTTPServer) evictIdlest(among func(*httpSession) bool) bool {
	var id string
	var oldest time.Time
	h.mu.Lock()
	for sid, s := range h.sessions {
		if !among(s) {
			continue
		}
		u, ok := s.idleSince()
		if ok && (id == "" || u.Before(oldest)) {
			id, oldest = sid, u
		}
	}
	h.mu.Unlock()
	if id == "" || h.opts.Now().Sub(oldest) < time.Minute {
		return false
	}
	h.drop(id)
	return true
}

// serveOne passes one message through the wire layer to mcp-go.
func (h *HTTPServer) serveOne(w http.ResponseWriter, r *http.Request, sess *httpSession, body []byte, m *wire.Message) {
	if m.IsRequest() {
		if resp, handled := sess.srv.Intercept(body, m.ID, m.Method); handled {
			writeJSON(w, http.StatusOK, resp)
			return
		}
	}
	out, sur := sess.srv.Wire().Inbound(sess.srv.Prepare(body, m), m, nil)
	r2 := r.Clone(r.Context())
	r2.Body = io.NopCloser(bytes.NewReader(out))
	r2.ContentLength = int64(len(out))
	if r2.Header.Get("Content-Type") == "" {
		r2.Header.Set("Content-Type", "application/json")
	}
	sess.http.ServeHTTP(&idWriter{ResponseWriter: w, ids: sess.srv.Wire(), sur: sur}, r2)
}

// batch answers a JSON array per the session's negotiated version.
func (h *HTTPServer) batch(w http.ResponseWriter, r *http.Request, sess *httpSession, caller Caller, body []byte) {
	var elems []json.RawMessage
	if json.Unmarshal(body, &elems) != nil {
		writeJSON(w, http.StatusBadRequest, wire.Error(json.RawMessage("null"), mcp.PARSE_ERROR, "Parse error"))
		return
	}
	if v := sess.srv.ProtocolVersion(); !wire.BatchesAllowed(v) {
		writeJSON(w, http.StatusOK, wire.BatchRefusal(v))
		return
	}
	if len(elems) == 0 {
		writeJSON(w, http.StatusOK, wire.Error(json.RawMessage("null"), mcp.INVALID_REQUEST, "empty batch: a batch holds at least one message"))
		return
	}
	var replies [][]byte
	for _, e := range elems {
		var m wire.Message
		if t := bytes.TrimSpace(e); len(t) == 0 || t[0] != '{' || json.Unmarshal(t, &m) != nil || m.Method == "" {
			replies = append(replies, wire.Error(json.RawMessage("null"), mcp.INVALID_REQUEST, "invalid request in batch: each element must be a JSON-RPC request or notification object"))
			continue
		}
		if resp, bad := wire.ShapeRefusal(e); bad {
			replies = append(replies, resp)
			continue
		}
		if scope := h.batchScope(caller, &m); scope != "" { // as stepUp, inside a batch
			replies = append(replies, wire.Error(idOrNull(m.ID), mcp.INVALID_REQUEST, scope))
			continue
		}
		rec := &bodyRecorder{header: http.Header{}}
		h.serveOne(rec, r, sess, bytes.TrimSpace(e), &m)
		replies = append(replies, rec.responses()...)
	}
	if len(replies) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	writeJSON(w, http.StatusOK, append(append([]byte{'['}, bytes.Join(replies, []byte{','})...), ']'))
}

// Shutdown stops taking requests, ends the sessions' streams, and waits
// (bounded by ctx) for the calls in flight to finish.
func (h *HTTPServer) Shutdown(ctx context.Context) error {
	h.mu.Lock()
	h.closing = true
	var all []*httpSession
	for _, s := range h.sessions {
		all = append(all, s)
	}
	for _, s := range h.modern {
		all = append(all, s)
	}
	h.mu.Unlock()
	for _, s := range all {
		s.http.CloseSessions(ctx)
	}
	done := make(chan struct{})
	go func() {
		h.inflight.Wait()
		close(done)
	}()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = fmt.Errorf("shutdown: calls still in flight: %w", ctx.Err())
	}
	for _, s := range all {
		s.srv.Close()
	}
	return err
}

// oneSession is the session-id manager of one session's transport: it
// knows exactly one id.
type oneSession struct {
	id         string
	mu         sync.Mutex
	terminated bool
}

func (o *oneSession) Generate() string { return o.id }

func (o *oneSession) Validate(id string) (bool, error) {
	if id != o.id {
		return false, errors.New("unknown session id")
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.terminated, nil
}

func (o *oneSession) Terminate(id string) (bool, error) {
	if id != o.id {
		return false, errors.New("unknown session id")
	}
	o.mu.Lock()
	o.terminated = true
	o.mu.Unlock()
	return false, nil
}

// idWriter restores the original request id in the response mcp-go
// writes (one Write per JSON body or SSE event), and drops the response of
// a cancelled request.
type idWriter struct {
	http.ResponseWriter
	ids *wire.IDs
	sur string
}

// WriteHeader turns the 200 of a plain JSON response to a request the
// client has cancelled into an SSE stream that ends without an event: the
// request gets no response (as MCP says), and the POST of a request still
// ends as Streamable HTTP allows one to (a stream or a JSON body; 202 is
// only for a POST of notifications and responses).
func (w *idWriter) WriteHeader(code int) {
	if w.sur != "" && code == http.StatusOK && strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") && w.ids.IsCancelled(w.sur) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Del("Content-Length")
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *idWriter) Write(p []byte) (int, error) {
	if w.sur == "" {
		return w.ResponseWriter.Write(p)
	}
	out, drop, _ := w.ids.Outbound(w.ids.RestoreSubscriptionID(p))
	if drop {
		return len(p), nil
	}
	if _, err := w.ResponseWriter.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (w *idWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *idWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// bodyRecorder captures one batch element's response.
type bodyRecorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *bodyRecorder) Header() http.Header         { return r.header }
func (r *bodyRecorder) WriteHeader(code int)        { r.status = code }
func (r *bodyRecorder) Write(p []byte) (int, error) { return r.body.Write(p) }
func (r *bodyRecorder) Flush()                      {}

// responses are the JSON-RPC responses in the recorded body (JSON, or the
// data of SSE events; notifications are left out).
func (r *bodyRecorder) responses() [][]byte {
	body := bytes.TrimSpace(r.body.Bytes())
	if len(body) == 0 {
		return nil
	}
	var msgs [][]byte
	if strings.HasPrefix(r.header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(bytes.NewReader(body))
		sc.Buffer(make([]byte, 64<<10), 64<<20)
		for sc.Scan() {
			if data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: ")); ok {
				msgs = append(msgs, append([]byte(nil), data...))
			}
		}
	} else {
		msgs = [][]byte{body}
	}
	var out [][]byte
	for _, m := range msgs {
		var env struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(m, &env) == nil && env.Method == "" && len(env.ID) > 0 {
			out = append(out, m)
		}
	}
	return out
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

// httpError answers a transport-level refusal as a JSON-RPC error body.
func httpError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, wire.Error(json.RawMessage("null"), mcp.INVALID_REQUEST, msg))
}

// closeAfter ends the connection after this response: a refused request's
// body is never read. net/http would otherwise read what is left of it
// (however slowly it comes) before sending the response and again when the
// request ends; the expired read deadline makes those reads fail at once.
func closeAfter(w http.ResponseWriter) {
	w.Header().Set("Connection", "close")
	_ = http.NewResponseController(w).SetReadDeadline(time.Now())
}

// Server is the http.Server for h at MCPPath, with its header, body and
// idle bounds. Serve it on Listener(ln), which bounds the connections
// (http_conns.go).
func (h *HTTPServer) Server() *http.Server {
	mux := http.NewServeMux()
	mux.Handle(MCPPath, h)
	mux.Handle(ServerCardPath, h)
	if h.h.OAuth != nil {
		mux.Handle(PRMPath, h)
		mux.Handle(PRMPath+MCPPath, h)
	}
	for _, p := range h.h.OAuth.builtinPaths() {
		mux.Handle(p, h)
	}
	// ReadTimeout stays unset: it would also end an open GET stream and a
	// long call; ServeHTTP bounds each body instead. IdleTimeout closes a
	// kept-alive connection nobody uses; a GET stream is a request in
	// progress, not idle, and is not cut.
	return &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: h.h.HeaderTimeout,
		IdleTimeout:       h.h.IdleTimeout,
		ConnContext:       withGatedConn, // http_conns.go: whose connection a request came on
		ErrorLog:          slog.NewLogLogger(h.log.Handler(), slog.LevelWarn),
	}
}
