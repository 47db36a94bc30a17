// Package nodetest starts real trading nodes for tests, the way
// net/http/httptest starts real HTTP servers: the daemon code of package
// server, a real journal in a temporary directory, on an ephemeral loopback
// port, with fresh random keys (an operator key pair too), stopped by t.Cleanup.
//
// Marks move only when the test calls Tick, so every test is deterministic.
//
// It is for tests only: it never listens beyond loopback, never writes
// outside the test's temporary directory (unless a journal path is given),
// and never prints a key.
package nodetest

import (
	"context"
	"crypto/ed25519"
	"log/slog"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/alert"
	"wicket/node/paper"
	"wicket/node/server"
)

// Server is a running node.
type Server struct {
	Addr       string // host:port on loopback
	ObserveKey string
	ControlKey string
	AgentKey   string // the agent's write key (AgentClient)
	// OperatorKey is the operator's private key, made at test run time;
	// the node holds its public half (nil under WithoutOperatorKey).
	OperatorKey ed25519.PrivateKey
	Config      project.Config
	Journal     string // the journal's path

	t    testing.TB
	opts options
	node *server.Server
	http *http.Server
}

type options struct {
	cfg      project.Config
	feed     paper.Feed
	marks    map[string]server.MarkFeed
	now      func() time.Time
	newID    func() string
	journal  string
	operator ed25519.PrivateKey

	exchanges    map[string]server.Exchange
	allowLive    bool
	venueTimeout time.Duration
	markEvery    time.Duration
	noOperator   bool
	orderPolls   <-chan time.Time
	logger       *slog.Logger
	deployments  http.Handler
	alerts       *alert.Dispatcher // WithAlerts (alerts.go)
	statements   <-chan time.Time
}

// Option configures NewServer.
type Option func(*options)

// WithConfig sets the venues and guardrail limits (default
// project.Defaults(): one paper venue "paper" with 100000 USD).
func WithConfig(cfg project.Config) Option { return func(o *options) { o.cfg = cfg } }

// WithFeed sets how marks start and move (default: seed 1, every symbol
// starting at its configured start price or 100).
func WithFeed(f paper.Feed) Option { return func(o *options) { o.feed = f } }

// WithMarks feeds the paper venues whose wicket.toml table has a marks key,
// by venue name (reused across Restart).
func WithMarks(m map[string]server.MarkFeed) Option { return func(o *options) { o.marks = m } }

// WithClock sets the node's clock (default time.Now). Signatures are
// checked against it, so a client must use a clock within 30 s of it.
func WithClock(now func() time.Time) Option { return func(o *options) { o.now = now } }

// WithIDs sets the node's id source for tickets and minted client order ids.
func WithIDs(newID func() string) Option { return func(o *options) { o.newID = newID } }

// WithJournal puts the journal at path instead of a fresh temporary file,
// for tests that restart a node on an existing journal.
func WithJournal(path string) Option { return func(o *options) { o.journal = path } }

// WithExchanges gives real venues their adapters (reused across Restart,
// as a restarted process would make equal ones).
func WithExchanges(ex map[string]server.Exchange) Option {
	return func(o *options) { o.exchanges = ex }
}

// WithAllowLive starts the node as --allow-live would.
func WithAllowLive() Option { return func(o *options) { o.allowLive = true } }

// WithVenueTimeout bounds each call to a real venue (default the node's).
func WithVenueTimeout(d time.Duration) Option { return func(o *options) { o.venueTimeout = d } }

// WithMarkEvery sets how often real venues' marks are polled.
func WithMarkEvery(d time.Duration) Option { return func(o *options) { o.markEvery = d } }

// WithOperatorKey starts the node with key's public half as its operator
// key, such as the key of the node whose journal a test copied (a node
// refuses a key other than the one its journal pinned).
func WithOperatorKey(key ed25519.PrivateKey) Option { return func(o *options) { o.operator = key } }

// WithoutOperatorKey starts a node with no operator public key, as a
// project made before there was one.
func WithoutOperatorKey() Option { return func(o *options) { o.noOperator = true } }

// WithOrderPolls drives the REST reads of a real venue's working orders
// while its stream is down: one poll per value sent. Without it they never
// run, so a test sees only what the stream and resyncs report.
func WithOrderPolls(ticks <-chan time.Time) Option { return func(o *options) { o.orderPolls = ticks } }

// WithLogger gives the node a logger (default: discard), as node.log.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithDeployments mounts h at /v1/deployments (package deploy's Handler).
func WithDeployments(h http.Handler) Option { return func(o *options) { o.deployments = h } }

// NewServer starts a node and stops it when the test ends.
func NewServer(t testing.TB, opts ...Option) *Server {
	t.Helper()
	o := options{cfg: project.Defaults(), feed: paper.Feed{Seed: 1}}
	for _, f := range opts {
		f(&o)
	}
	if err := o.cfg.Validate(); err != nil {
		t.Fatalf("nodetest: config: %v", err)
	}
	if o.journal == "" {
		o.journal = filepath.Join(t.TempDir(), "node.db")
	}
	if o.orderPolls == nil {
		o.orderPolls = make(chan time.Time) // never ticks
	}
	s := &Server{ObserveKey: randomKey(t), ControlKey: randomKey(t), AgentKey: randomKey(t), Config: o.cfg, Journal: o.journal, t: t, opts: o}
	if !o.noOperator {
		s.OperatorKey = operatorKeyOf(t, o.journal)
		if o.operator != nil {
			s.OperatorKey = o.operator
		}
	}
	s.start(t, "127.0.0.1:0")
	t.Cleanup(s.Close)
	return s
}

// operatorKeys holds the operator key made for each journal path, so a
// node started again on a journal has the key that journal pinned.
var operatorKeys sync.Map

func operatorKeyOf(t testing.TB, journal string) ed25519.PrivateKey {
	k, _ := operatorKeys.LoadOrStore(journal, testkit.Key(t))
	return k.(ed25519.PrivateKey)
}

// randomKey is an observe or control key made for this run.
func randomKey(t testing.TB) string {
	t.Helper()
	return testkit.Secret(t, 32)
}

func (s *Server) start(t testing.TB, addr string) {
	t.Helper()
	var operator ed25519.PublicKey
	if s.OperatorKey != nil {
		operator = s.OperatorKey.Public().(ed25519.PublicKey)
	}
	n, err := server.New(server.Config{
		Project: s.opts.cfg, JournalPath: s.Journal, ObserveKey: s.ObserveKey, ControlKey: s.ControlKey, AgentKey: s.AgentKey,
		Feed: s.opts.feed, Marks: s.opts.marks, Now: s.opts.now, NewID: s.opts.newID, Version: "nodetest",
		Exchanges: s.opts.exchanges, AllowLive: s.opts.allowLive, VenueTimeout: s.opts.venueTimeout, MarkEvery: s.opts.markEvery,
		OperatorKey: operator,
		OrderPolls:  s.opts.orderPolls, Logger: s.opts.logger, Deployments: s.opts.deployments,
		Alerts: s.opts.alerts, StatementTicks: s.opts.statements,
	})
	if err != nil {
		t.Fatalf("nodetest: start node: %v", err)
	}
	ln, err := server.Listen(addr, false)
	if err != nil && addr != "127.0.0.1:0" {
		ln, err = server.Listen("127.0.0.1:0", false)
	}
	if err != nil {
		n.Close()
		t.Fatalf("nodetest: %v", err)
	}
	s.node, s.Addr = n, ln.Addr().String()
	s.http = &http.Server{Handler: n.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go s.http.Serve(ln) //nolint:errcheck // ends with ErrServerClosed at Close
}

// Client returns a client holding both keys.
func (s *Server) Client(opts ...node.Option) *node.Client {
	c, err := node.NewClient(s.Addr, s.ObserveKey, s.ControlKey, opts...)
	if err != nil {
		panic("nodetest: " + err.Error()) // the address and keys are ours: cannot fail
	}
	return c
}

// AgentClient returns a client that writes with the agent key, as
// wicket mcp does when it holds one.
func (s *Server) AgentClient(opts ...node.Option) *node.Client {
	c, err := node.NewClient(s.Addr, s.ObserveKey, s.AgentKey, append(opts, node.AsAgent())...)
	if err != nil {
		panic("nodetest: " + err.Error())
	}
	return c
}

// Tick takes n mark steps, each committed before the next.
func (s *Server) Tick(t testing.TB, n int) {
	t.Helper()
	for range n {
		if err := s.node.Tick(context.Background()); err != nil {
			t.Fatalf("nodetest: tick: %v", err)
		}
	}
}

// Restart stops the node and starts it again on the same journal, as a
// restarted process would; the address may change.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	addr := s.Addr
	s.Close()
	// A client's pooled connection to the stopped node may not yet have
	// seen its close; a write sent on it would be lost (and never resent),
	// so the next request must dial the new node.
	if tr, ok := http.DefaultTransport.(*http.Transport); ok {
		tr.CloseIdleConnections()
	}
	s.start(t, addr)
}

// Close stops the node. It is safe to call twice.
func (s *Server) Close() {
	if s.http == nil {
		return
	}
	s.http.Close()
	if err := s.node.Close(); err != nil {
		s.t.Errorf("nodetest: close node: %v", err)
	}
	s.http = nil
}
