// Package server is the trading node's daemon: it owns the venues, orders,
// positions and audit trail, and serves them over HTTP/JSON with signed
// requests (see package node for the protocol).
//
// One goroutine, the fold, applies everything that reads or changes state,
// in order: commands, dry-runs, snapshots and mark steps. HTTP handlers
// only authenticate, decode, enqueue and wait. Each command's events and
// audit entry are committed to the journal before its ticket resolves, and
// a restarted node replays the journal to the exact state it had.
//
// The node enforces its own rules whatever the client checked: trading
// state (active, reduce_only, halted), duplicate client order ids, venue,
// symbol and precision, the price collar and the notional limits of
// wicket.toml, and cash for buys.
//
// Real venues sit behind Exchange, the interface this package declares
// for the adapters (remote.go, remote_server.go): they start disarmed at
// every start and refuse writes until an operator arms them; a write's
// intent is journaled before the venue hears of it, a lost answer leaves
// it pending, and reconciliation by client order id settles it.
//
// It never listens beyond loopback unless told to (Listen with
// allowRemote), never logs or returns a key or a signature, never
// acknowledges a command before it is durable, never lets the observe
// key write, never resends a write to a real venue, and never arms a
// venue by itself.
package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"wicket/internal/project"
	"wicket/node"
	"wicket/node/command"
	"wicket/node/journal"
	"wicket/node/paper"
)

// Config is everything a node needs. Project, JournalPath and both keys are
// required.
type Config struct {
	Project     project.Config // venues and [guardrail] limits
	JournalPath string
	ObserveKey  string
	ControlKey  string

	Feed      paper.Feed       // how marks start and move
	TickEvery time.Duration    // mark step interval; 0 with Ticks nil: marks move only on Tick
	Ticks     <-chan time.Time // an injected step source, used instead of TickEvery

	// Exchanges holds the adapter of each real venue in Project, by name.
	Exchanges map[string]Exchange
	// AllowLive lets an operator arm a venue whose environment is live
	// (wicket node serve --allow-live). Without it live venues stay disarmed.
	AllowLive bool
	// VenueTimeout bounds one call to a real venue (default DefaultVenueTimeout).
	VenueTimeout time.Duration
	// MarkEvery is how often real venues' marks and accounts are polled
	// (default TickEvery but at least 1s; 5s when marks are still).
	MarkEvery time.Duration

	Now     func() time.Time // default time.Now
	NewID   func() string    // ticket ids and minted client order ids; default command.NewID
	Logger  *slog.Logger     // default: discard
	Version string           // reported by /v1/health
}

// MinKeyLength is the shortest key the node accepts.
const MinKeyLength = 16

// Limits of the protocol.
const (
	maxBody       = 64 << 10
	queueSize     = 1024
	maxWait       = 30 * time.Second
	defaultEvents = 20
	maxEvents     = recentCap
)

// Server is a running node.
type Server struct {
	cfg     Config
	log     *slog.Logger
	j       *journal.Journal
	auth    *verifier
	tickets *tickets
	started time.Time

	queue chan func()
	quit  chan struct{}
	done  chan struct{}

	mu     sync.RWMutex // guards closed against enqueue
	closed bool

	bg     context.Context // background work (streams, polls); canceled by Close
	stopBg context.CancelFunc
	wg     sync.WaitGroup
	// readSeq numbers each real venue's account reads, so the newest wins
	// (made before the fold starts, read-only after).
	readSeq map[string]*atomic.Int64

	// owned by the fold goroutine
	eng   *engine
	fault error // the journal failed and the state could not be rebuilt
}

// New opens the journal, rebuilds the state from it, opens venues new to
// it, and starts the fold. Call Close to stop it.
func New(cfg Config) (*Server, error) {
	if err := checkKeys(cfg.ObserveKey, cfg.ControlKey); err != nil {
		return nil, err
	}
	if cfg.JournalPath == "" {
		return nil, errors.New("node: no journal path")
	}
	if len(cfg.Project.Venues) == 0 {
		return nil, errors.New("node: wicket.toml configures no venues; add a [[venues]] table")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.NewID == nil {
		cfg.NewID = command.NewID
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if err := checkExchanges(cfg); err != nil {
		return nil, err
	}
	if cfg.VenueTimeout <= 0 {
		cfg.VenueTimeout = DefaultVenueTimeout
	}
	if cfg.MarkEvery <= 0 {
		cfg.MarkEvery = max(cfg.TickEvery, time.Second) // a venue's rate limits are not a paper walk's
		if cfg.TickEvery <= 0 {
			cfg.MarkEvery = 5 * time.Second
		}
	}
	j, err := journal.Open(cfg.JournalPath)
	if err != nil {
		return nil, err
	}
	cfg.Logger.Info(j.Start().String(), "journal", j.Path()) // "new journal" or "recovered N commands, last at T"
	s := &Server{
		cfg: cfg, log: cfg.Logger, j: j,
		auth:    newVerifier(cfg.ObserveKey, cfg.ControlKey, cfg.Now),
		tickets: newTickets(),
		started: cfg.Now(),
		queue:   make(chan func(), queueSize),
		quit:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	s.bg, s.stopBg = context.WithCancel(context.Background())
	s.readSeq = map[string]*atomic.Int64{}
	for _, vc := range cfg.Project.Venues {
		if vc.Real() {
			s.readSeq[vc.Name] = &atomic.Int64{}
		}
	}
	if err := s.rebuild(); err != nil {
		s.stopBg()
		j.Close()
		return nil, err
	}
	s.startRemotes()
	ticks := cfg.Ticks
	var stop func()
	if ticks == nil && cfg.TickEvery > 0 {
		t := time.NewTicker(cfg.TickEvery)
		ticks, stop = t.C, t.Stop
	}
	// Logged before the fold starts: from then on only the fold reads the engine.
	s.log.Info("node ready", "journal", j.Path(), "venues", strings.Join(cfg.Project.VenueNames(), ","),
		"trading_state", string(s.eng.state), "tick", s.eng.tick)
	go s.fold(ticks, stop)
	return s, nil
}

// checkKeys refuses missing, short or identical keys.
func checkKeys(observe, control string) error {
	switch {
	case observe == "" || control == "":
		return fmt.Errorf("node keys missing: set %s and %s in the environment or in the project's settings/secrets.env (wicket init writes both)", project.KeyObserve, project.KeyControl)
	case len(observe) < MinKeyLength || len(control) < MinKeyLength:
		return fmt.Errorf("node keys must be at least %d characters; generate new ones (wicket init writes 64 hex characters)", MinKeyLength)
	case observe == control:
		return fmt.Errorf("%s and %s are the same key, which would let the observe key write; give them different values", project.KeyObserve, project.KeyControl)
	}
	return nil
}

// rebuild replaces the engine with one replayed from the journal and
// commits whatever opening venues needs.
func (s *Server) rebuild() error {
	eng := newEngine(s.cfg.Project, s.cfg.Feed, s.cfg.Exchanges, s.readSeq, s.cfg.Now)
	b, err := eng.load(s.j, s.cfg.Now())
	if err != nil {
		return fmt.Errorf("node: rebuild from journal %s: %w", s.j.Path(), err)
	}
	if b != nil {
		b.Audit = s.armingAudit(b.Events, node.KeyNode, node.ArmingLapse) // arming ends at every start
		if err := s.j.Commit(b); err != nil {
			return fmt.Errorf("node: %w", err)
		}
	}
	s.eng = eng
	return nil
}

// fold is the one goroutine that touches the engine.
func (s *Server) fold(ticks <-chan time.Time, stop func()) {
	defer close(s.done)
	if stop != nil {
		defer stop()
	}
	for {
		select {
		case job := <-s.queue:
			job()
		case <-ticks:
			s.step()
		case <-s.quit:
			for {
				select {
				case job := <-s.queue:
					job()
				default:
					return
				}
			}
		}
	}
}

// enqueue hands job to the fold, or says why it cannot.
func (s *Server) enqueue(job func()) *node.Error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return node.Errorf(node.KindUnavailable, "stopping", "the node is stopping")
	}
	select {
	case s.queue <- job:
		return nil
	default:
		return node.Errorf(node.KindUnavailable, "busy", "the node's queue is full (%d commands waiting); retry shortly", queueSize)
	}
}

// do runs f on the fold and waits for it.
func (s *Server) do(ctx context.Context, f func()) *node.Error {
	finished := make(chan struct{})
	if err := s.enqueue(func() { f(); close(finished) }); err != nil {
		return err
	}
	select {
	case <-finished:
		return nil
	case <-ctx.Done():
		return node.Errorf(node.KindTimeout, "canceled", "request canceled before the node answered")
	}
}

// step takes one mark step and commits it.
func (s *Server) step() {
	if s.fault != nil {
		return
	}
	now := s.cfg.Now()
	if s.lapse(now) != nil {
		return
	}
	marks := s.eng.advance(now)
	b := &journal.Batch{Events: s.eng.take(), Marks: marks, Tick: s.eng.tick}
	if err := s.commit(b); err != nil {
		return
	}
	for _, ev := range b.Events {
		if ev.Kind == node.EventFilled {
			s.log.Info("fill", "venue", ev.Venue, "order_id", ev.OrderID, "client_order_id", ev.ClientOrderID,
				"side", string(ev.Side), "quantity", ev.Quantity.String(), "symbol", ev.Symbol, "price", ev.Price.String())
		}
	}
}

// commit writes a step; on failure it rebuilds the state from the journal,
// so memory never holds what the journal does not.
func (s *Server) commit(b *journal.Batch) error {
	err := s.eng.fault
	if err == nil {
		err = s.j.Commit(b)
	}
	if err == nil {
		return nil
	}
	s.log.Error("journal step failed; rebuilding state from the journal", "err", err)
	if rerr := s.rebuild(); rerr != nil {
		s.fault = rerr
		s.log.Error("node cannot rebuild its state; refusing commands until restarted", "err", rerr)
		return err
	}
	for name := range s.eng.remotes { // a rebuilt engine knows nothing the venue said
		s.enqueue(func() { s.reconcile(name, "a journal failure") }) //nolint:errcheck // the next reconnect resyncs too
	}
	return err
}

// Tick takes one mark step now, through the fold, and returns when it is
// committed. Tests use it to move marks deterministically.
func (s *Server) Tick(ctx context.Context) error {
	if err := s.do(ctx, s.step); err != nil {
		return err
	}
	return nil
}

// Close stops taking requests, applies what is already queued, and closes
// the journal.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	s.stopBg()
	close(s.quit)
	<-s.done
	s.wg.Wait()
	return s.j.Close()
}

// --- HTTP ---

// statusOf is the one place node errors become HTTP statuses.
var statusOf = map[node.ErrorKind]int{
	node.KindAuth:        http.StatusUnauthorized,
	node.KindForbidden:   http.StatusForbidden,
	node.KindBadRequest:  http.StatusBadRequest,
	node.KindNotFound:    http.StatusNotFound,
	node.KindRejected:    http.StatusConflict,
	node.KindTimeout:     http.StatusGatewayTimeout,
	node.KindUnavailable: http.StatusServiceUnavailable,
	node.KindInternal:    http.StatusInternalServerError,
}

// Handler is the node's HTTP API.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/health", s.health)
	mux.HandleFunc("GET /v1/snapshot", s.snapshot)
	mux.HandleFunc("POST /v1/dry-run", s.dryRun)
	mux.HandleFunc("POST /v1/commands", s.commands)
	mux.HandleFunc("GET /v1/tickets/{id}", s.ticket)
	mux.HandleFunc("GET /v1/audit", s.audit)
	mux.HandleFunc("GET /v1/venues/{name}/arming", s.arming)
	mux.HandleFunc("POST /v1/venues/{name}/arm", s.arm)
	mux.HandleFunc("POST /v1/venues/{name}/disarm", s.disarm)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, node.Errorf(node.KindNotFound, "no_endpoint",
			"no endpoint %s %s; the node serves GET /v1/health, GET /v1/snapshot, POST /v1/dry-run, POST /v1/commands, GET /v1/tickets/{id}, GET /v1/audit", r.Method, r.URL.Path))
	})
	return s.authenticate(mux)
}

type keyIDContext struct{}

// authenticate reads the body (bounded), verifies the signature, and lets
// only the control key reach POST /v1/commands.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err != nil {
			writeError(w, node.Errorf(node.KindBadRequest, "too_large", "request body over %d bytes: a command envelope is far smaller; send one command per request", maxBody))
			return
		}
		keyID, aerr := s.auth.verify(r, body)
		if aerr != nil {
			s.log.Warn("request refused", "code", aerr.Code, "method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr)
			writeError(w, aerr)
			return
		}
		if r.Method == http.MethodPost && r.URL.Path != "/v1/dry-run" && keyID != node.KeyControl {
			writeError(w, node.Errorf(node.KindForbidden, "observe_key_cannot_write",
				"the %s key reads only; writes must be signed with the control key", keyID))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), keyIDContext{}, keyID)))
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		data = []byte(`{"error":{"kind":"internal","message":"cannot encode the answer"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(append(data, '\n')) //nolint:errcheck // the client went away
}

func writeError(w http.ResponseWriter, e *node.Error) {
	status, ok := statusOf[e.Kind]
	if !ok {
		status = http.StatusInternalServerError
	}
	writeJSON(w, status, map[string]*node.Error{"error": e})
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	var h node.Health
	err := s.do(r.Context(), func() {
		status := "ok"
		if s.fault != nil {
			status = "failed: " + s.fault.Error()
		}
		h = node.Health{Status: status, Version: s.cfg.Version, TradingState: s.eng.state, Venues: s.eng.names,
			Started: s.started, Time: s.cfg.Now(), Tick: s.eng.tick, Journal: s.j.Path()}
	})
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, h)
}

func (s *Server) snapshot(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	events := defaultEvents
	if v := q.Get("events"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeError(w, node.Errorf(node.KindBadRequest, "bad_events", "events=%q: give a count from 0 to %d", short(v), maxEvents))
			return
		}
		events = min(n, maxEvents)
	}
	var snap node.Snapshot
	var serr error
	if err := s.do(r.Context(), func() { snap, serr = s.eng.snapshot(q.Get("venue"), events, s.cfg.Now()) }); err != nil {
		writeError(w, err)
		return
	}
	var ne *node.Error
	if errors.As(serr, &ne) {
		writeError(w, ne)
		return
	}
	writeJSON(w, http.StatusOK, snap)
}

// readEnvelope decodes a request body strictly.
func readEnvelope(r *http.Request) (command.Envelope, *node.Error) {
	var env command.Envelope
	body, _ := io.ReadAll(r.Body) // already read and bounded by authenticate
	if err := env.UnmarshalJSON(body); err != nil {
		return env, node.Errorf(node.KindBadRequest, "bad_command", "%v", err)
	}
	return env, nil
}

func (s *Server) dryRun(w http.ResponseWriter, r *http.Request) {
	env, berr := readEnvelope(r)
	if berr != nil {
		writeError(w, berr)
		return
	}
	c := env.Command.Resolve(s.cfg.NewID)
	var v node.Verdict
	if err := s.do(r.Context(), func() {
		if s.fault != nil {
			v = node.Verdict{Command: c, Code: "journal", Reason: "the node's journal failed; restart the node", TradingState: s.eng.state}
			return
		}
		v = s.eng.dryRun(c)
	}); err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func (s *Server) commands(w http.ResponseWriter, r *http.Request) {
	env, berr := readEnvelope(r)
	if berr != nil {
		writeError(w, berr)
		return
	}
	keyID, _ := r.Context().Value(keyIDContext{}).(string)
	c := env.Command.Resolve(s.cfg.NewID)
	id := "tk-" + s.cfg.NewID()
	s.tickets.open(id)
	if err := s.enqueue(func() { s.apply(id, keyID, c, env.Reason) }); err != nil {
		s.tickets.drop(id)
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"ticket": id, "client_order_id": c.ClientOrderID})
}

// apply runs on the fold: execute, journal, then resolve the ticket.
func (s *Server) apply(id, keyID string, c command.Command, reason string) {
	now := s.cfg.Now()
	if s.fault != nil {
		s.tickets.resolve(id, node.Outcome{Status: node.Rejected, Verb: c.Verb, ClientOrderID: c.ClientOrderID, Time: now,
			Code: "journal", Reason: "the node's journal failed and its state could not be rebuilt; nothing was executed; restart the node"})
		return
	}
	if s.lapse(now) != nil {
		s.tickets.resolve(id, node.Outcome{Status: node.Rejected, Verb: c.Verb, ClientOrderID: c.ClientOrderID, Time: now,
			Code: "journal", Reason: "the journal could not record a lapsed arming, so nothing was executed"})
		return
	}
	if s.eng.touchesRemote(c) {
		s.applyRemote(id, keyID, c, reason, now)
		return
	}
	out := s.eng.execute(c, now)
	out.Ticket = id
	// The entry carries the order's client id even when the command named
	// the order by its node id, so the audit joins by client order id.
	entry := &node.AuditEntry{Time: now, Ticket: id, KeyID: keyID, Command: c, Reason: reason, ClientOrderID: out.ClientOrderID, Outcome: out}
	if err := s.commit(&journal.Batch{Entry: entry, Events: s.eng.take()}); err != nil {
		out = node.Outcome{Ticket: id, Status: node.Rejected, Verb: c.Verb, ClientOrderID: c.ClientOrderID, Time: now,
			Code: "journal", Reason: "the journal could not record the command, so nothing was executed: " + err.Error()}
	}
	s.log.Info("command", "ticket", id, "key_id", keyID, "verb", string(c.Verb), "client_order_id", out.ClientOrderID,
		"status", string(out.Status), "code", out.Code, "detail", out.Detail)
	s.tickets.resolve(id, out)
}

func (s *Server) ticket(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	var wait time.Duration
	if v := r.URL.Query().Get("wait"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			writeError(w, node.Errorf(node.KindBadRequest, "bad_wait", "wait=%q: give a duration such as 2s (at most %s)", short(v), maxWait))
			return
		}
		wait = min(d, maxWait)
	}
	out, ok := s.tickets.wait(r.Context(), id, wait)
	if !ok {
		o, found, err := s.j.Ticket(id)
		switch {
		case err != nil:
			writeError(w, node.Errorf(node.KindInternal, "journal", "%v", err))
		case !found:
			writeError(w, node.Errorf(node.KindNotFound, "unknown_ticket",
				"no ticket %q: it was never issued, or the node restarted before applying it; look for the order in the snapshot or the audit trail before sending again", short(id)))
		default:
			writeJSON(w, http.StatusOK, s.settled(r.Context(), o))
		}
		return
	}
	writeJSON(w, http.StatusOK, s.settled(r.Context(), out))
}

func (s *Server) audit(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var aq node.AuditQuery
	if v := q.Get("since"); v != "" {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			writeError(w, node.Errorf(node.KindBadRequest, "bad_since", "since=%q: give an RFC 3339 time such as 2025-01-02T15:04:05Z", short(v)))
			return
		}
		aq.Since = t
	}
	if v := q.Get("after"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			writeError(w, node.Errorf(node.KindBadRequest, "bad_after", "after=%q: give an audit sequence number", short(v)))
			return
		}
		aq.After = n
	}
	aq.ClientOrderID = q.Get("client_order_id")
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeError(w, node.Errorf(node.KindBadRequest, "bad_limit", "limit=%q: give a count from 1 to %d", short(v), journal.MaxAuditLimit))
			return
		}
		aq.Limit = n
	}
	page, err := s.j.Audit(aq)
	if err != nil {
		writeError(w, node.Errorf(node.KindInternal, "journal", "%v", err))
		return
	}
	writeJSON(w, http.StatusOK, page)
}

// --- listening ---

// Listen opens a TCP listener on addr. It refuses any address that is not
// loopback (127.0.0.0/8, ::1 or localhost) unless allowRemote is set; an
// empty host means every interface and is refused the same way.
func Listen(addr string, allowRemote bool) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, &ListenError{Addr: addr, Msg: "is not host:port (for example 127.0.0.1:7879)"}
	}
	if !allowRemote && !isLoopback(host) {
		return nil, &ListenError{Addr: addr, Remote: true,
			Msg: "is not a loopback address; the node listens on loopback only (use 127.0.0.1), unless started with --allow-remote"}
	}
	ln, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("listen on %s: %w: another process (perhaps another node) holds it; stop it, or choose another address with --listen", addr, err)
	}
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	return ln, nil
}

// ListenError is Listen's refusal of an address.
type ListenError struct {
	Addr   string
	Remote bool // the address is valid but not loopback
	Msg    string
}

func (e *ListenError) Error() string { return fmt.Sprintf("listen address %q %s", e.Addr, e.Msg) }

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Serve serves the API on ln until ctx is done, then shuts down gracefully
// and closes the node.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      maxWait + 15*time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if serr := hs.Shutdown(sctx); serr != nil && err == nil {
		err = serr
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return errors.Join(err, s.Close())
}
