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
// for the adapters (remote.go; writes in remote_write.go, reconciliation
// in reconcile.go, streams and polls in streams.go, arming in arming.go):
// they start disarmed at every start and refuse writes until an operator
// arms them; a write's intent is journaled before the venue hears of it,
// a lost answer leaves it pending, and reconciliation by client order id
// settles it. Their calls never run on the fold: each real venue has a
// lane (lanes.go), one goroutine that makes its calls in order and hands
// the answers to the fold, so a slow venue delays only its own work.
//
// It never listens beyond loopback unless told to (Listen with
// allowRemote), never logs or returns a key or a signature, never
// acknowledges a command before it is durable, never lets the observe
// key write, never resends a write to a real venue, never waits for a
// venue on the fold, and never arms a venue by itself.
package server

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"wicket/internal/project"
	"wicket/node"
	"wicket/node/alert"
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
	// AgentKey, when set, is a write key whose writes (and the
	// deployments it creates) the node attributes to the agent: its
	// capital envelope (envelope.go).
	AgentKey string

	Feed      paper.Feed       // how marks start and move
	TickEvery time.Duration    // mark step interval; 0 with Ticks nil: marks move only on Tick
	Ticks     <-chan time.Time // an injected step source, used instead of TickEvery
	// Marks feeds each paper venue whose wicket.toml table has a marks key
	// (marks = "binance"), by name: its marks are the feed's prices at each
	// step instead of Feed's walk (marks.go).
	Marks map[string]MarkFeed

	// Exchanges holds the adapter of each real venue in Project, by name.
	Exchanges map[string]Exchange
	// OperatorKey is the operator's public key (settings/operator.pub):
	// arming must be signed with its private half. Without it the node
	// refuses every arming and says how to make one.
	OperatorKey ed25519.PublicKey
	// AllowLive lets an operator arm a venue whose environment is live
	// (wicket node serve --allow-live). Without it live venues stay disarmed.
	AllowLive bool
	// VenueTimeout bounds one call to a real venue (default DefaultVenueTimeout).
	VenueTimeout time.Duration
	// MarkEvery is how often real venues' marks and accounts are polled
	// (default TickEvery but at least 1s; 5s when marks are still).
	MarkEvery time.Duration
	// OrderPollEvery is how often a real venue's working orders are read
	// over REST while its stream is down (default DefaultOrderPollEvery);
	// OrderPolls, when set, is an injected tick source used instead.
	OrderPollEvery time.Duration
	OrderPolls     <-chan time.Time

	// Deployments serves /v1/deployments (package deploy's Handler,
	// mounted in deployments.go); nil: the node runs none.
	Deployments http.Handler

	// Alerts is told every audit entry the node commits (alerts.go); nil:
	// no alerts. StatementTicks, when set, is the injected tick source of
	// the daily statement's runner (statement.go; default every 5 minutes).
	Alerts         *alert.Dispatcher
	StatementTicks <-chan time.Time

	Now func() time.Time // default time.Now
	// SignNow is the clock a request's signature time is checked against
	// (default Now): a node on a recorded tape's clock keeps the wall
	// clock here, since its clients sign with theirs.
	SignNow func() time.Time
	NewID   func() string // ticket ids and minted client order ids; default command.NewID
	Logger  *slog.Logger  // default: discard
	Version string        // reported by /v1/health
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
	armed   *challenges // arming challenges issued (challenge.go)
	started time.Time

	queue chan func()
	quit  chan struct{}
	done  chan struct{}

	mu     sync.RWMutex // guards closed against enqueue
	closed bool

	bg     context.Context // background work (streams, polls); canceled by Close
	stopBg context.CancelFunc
	wg     sync.WaitGroup
	// calls bounds every call to a real venue; Close cancels it once the
	// calls in flight have had VenueTimeout to answer.
	calls     context.Context
	stopCalls context.CancelFunc
	lanes     map[string]*lane // each real venue's queue of calls (lanes.go); fixed after New
	lanesDone sync.WaitGroup
	// readSeq numbers each real venue's account reads, so the newest wins
	// (made before the fold starts, read-only after).
	readSeq map[string]*atomic.Int64
	// silencing counts the dead man's switch's pausing in flight
	// (heartbeat.go); Tick waits for it.
	silencing sync.WaitGroup

	// owned by the fold goroutine
	eng   *engine
	fault error // the journal failed and the state could not be rebuilt
}

// New opens the journal, rebuilds the state from it, opens venues new to
// it, and starts the fold. Call Close to stop it.
func New(cfg Config) (*Server, error) {
	if err := checkAgentKey(cfg.ObserveKey, cfg.ControlKey, cfg.AgentKey); err != nil { // envelope.go
		return nil, err
	}
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
	if cfg.SignNow == nil {
		cfg.SignNow = cfg.Now
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
	scrubbing(&cfg) // no secret value in a log line, an answer or the journal
	if err := checkMarks(cfg); err != nil {
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
	if cfg.OrderPollEvery <= 0 {
		cfg.OrderPollEvery = DefaultOrderPollEvery
	}
	instruments, err := checkSymbols(cfg)
	if err != nil {
		return nil, err
	}
	j, err := journal.Open(cfg.JournalPath)
	if err != nil {
		return nil, err
	}
	cfg.Logger.Info(j.Start().String(), "journal", j.Path()) // "new journal" or "recovered N commands, last at T"
	if err := checkOperatorPin(j, cfg); err != nil {         // operator_pin.go
		j.Close()
		return nil, err
	}
	s := &Server{
		cfg: cfg, log: cfg.Logger, j: j,
		auth:    newVerifier(cfg.ObserveKey, cfg.ControlKey, cfg.AgentKey, cfg.SignNow),
		tickets: newTickets(),
		armed:   newChallenges(),
		started: cfg.Now(),
		queue:   make(chan func(), queueSize),
		quit:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	s.bg, s.stopBg = context.WithCancel(context.Background())
	s.calls, s.stopCalls = context.WithCancel(context.Background())
	s.readSeq = map[string]*atomic.Int64{}
	for _, vc := range cfg.Project.Venues {
		if vc.Real() {
			s.readSeq[vc.Name] = &atomic.Int64{}
		}
	}
	if err := s.rebuild(); err != nil {
		s.stopBg()
		s.stopCalls()
		j.Close()
		return nil, err
	}
	s.startLanes()
	s.startRemotes(instruments)
	s.startStatements() // statement.go
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
	eng := newEngine(s.cfg.Project, s.cfg.Feed, s.cfg.Marks, s.cfg.Exchanges, s.readSeq, s.cfg.Now)
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
	eng.risk.audit = s.auditRisk // the engine's own risk acts (override.go)
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

// view runs the read f on the fold and returns once what it read is
// durable: the fold goes on while a group of commands commits
// (commitThen), so f may see commands whose tickets still wait for the
// journal, and a reader is shown nothing a crash could take back.
func (s *Server) view(ctx context.Context, f func()) *node.Error {
	var seen journal.Point
	if err := s.do(ctx, func() { f(); seen = s.j.Appended() }); err != nil {
		return err
	}
	if err := s.j.Wait(ctx, seen); err != nil {
		if ctx.Err() != nil {
			return node.Errorf(node.KindTimeout, "canceled", "request canceled before the node answered")
		}
		return node.Errorf(node.KindUnavailable, "journal", "the journal could not record what this answer would have shown (%v); ask again", err)
	}
	return nil
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
	s.eng.checkBreakers(now) // breakers.go
	b := &journal.Batch{Events: s.eng.take(), Marks: marks, Tick: s.eng.tick}
	b.Audit = s.breakerAudit(b.Events, node.KeyNode)
	if err := s.commit(b); err != nil {
		return
	}
	s.checkHeartbeat(now) // the dead man's switch (heartbeat.go)
	for _, ev := range b.Events {
		if ev.Kind == node.EventFilled {
			s.log.Info("fill", "venue", ev.Venue, "order_id", ev.OrderID, "client_order_id", ev.ClientOrderID,
				"side", string(ev.Side), "quantity", ev.Quantity.String(), "symbol", ev.Symbol, "price", ev.Price.String())
		}
	}
}

// commit writes a step and returns once it is durable (with every batch
// handed to the journal before it); on failure it rebuilds the state from
// the journal, so memory never holds what the journal does not.
func (s *Server) commit(b *journal.Batch) error {
	err := s.eng.fault
	if err == nil {
		err = s.j.Commit(b)
	}
	if err == nil {
		s.alertCommitted(b) // alerts.go
		return nil
	}
	s.failed(err)
	return err
}

// commitThen hands b to the journal and returns at once, so the fold goes
// on with the next job while b commits: the commands applied meanwhile go
// into the next transaction, one set of fsyncs for all of them (the
// journal's group commit). then runs, on the journal's committer, once b
// is durable or with the error that lost it; a loss has the fold rebuild
// its state (heal) before it applies anything built on it.
func (s *Server) commitThen(b *journal.Batch, then func(error)) {
	err := s.eng.fault
	if err == nil {
		err = s.j.Append(b, func(err error) {
			if err == nil {
				s.alertCommitted(b)
			} else {
				s.enqueue(s.heal) //nolint:errcheck // a full or closed queue: the fold's next commit finds the journal failed and rebuilds
			}
			then(err)
		})
		if err == nil {
			return
		}
	}
	s.failed(err)
	then(err)
}

// heal rebuilds the state after a commit the journal lost, unless that was
// done already. It runs on the fold.
func (s *Server) heal() {
	if err := s.j.Err(); err != nil {
		s.failed(err)
	}
}

// failed rebuilds the state from the journal after err lost a commit.
func (s *Server) failed(err error) {
	s.log.Error("journal step failed; rebuilding state from the journal", "err", err)
	s.j.Recover() // what was built on the lost batches goes with the rebuild
	if rerr := s.rebuild(); rerr != nil {
		s.fault = rerr
		s.log.Error("node cannot rebuild its state; refusing commands until restarted", "err", rerr)
		return
	}
	for name := range s.eng.remotes { // a rebuilt engine knows nothing the venue said
		s.reconcile(name, "a journal failure")
	}
}

// Tick takes one mark step now, through the fold, and returns when it is
// committed (and any dead man's switch it tripped has paused what it
// pauses). Tests use it to move marks deterministically.
func (s *Server) Tick(ctx context.Context) error {
	if err := s.do(ctx, s.step); err != nil {
		return err
	}
	s.silencing.Wait()
	return nil
}

// Close stops taking requests, lets each real venue's call in flight
// answer (for VenueTimeout at most) while dropping the commands still
// waiting for a venue (their tickets say nothing was sent), applies what
// is already queued on the fold, and closes the journal.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	s.stopBg() // streams and polls
	if len(s.lanes) > 0 {
		s.log.Info("stopping: venue calls in flight may answer for the venue timeout", "venue_timeout", s.cfg.VenueTimeout.String())
	}
	for _, l := range s.lanes {
		l.stop()
	}
	grace := time.AfterFunc(s.cfg.VenueTimeout, s.stopCalls)
	s.lanesDone.Wait() // the fold still runs: the answers are applied
	grace.Stop()
	s.stopCalls()
	close(s.quit)
	<-s.done
	s.wg.Wait()
	return s.j.Close()
}

// apply runs on the fold: execute, journal, then resolve the ticket.
func (s *Server) apply(id, keyID string, c command.Command, reason string) {
	now := s.cfg.Now()
	if s.refused(id, c, now) {
		return
	}
	if s.eng.touchesRemote(c) {
		s.applyRemote(id, keyID, c, reason, now)
		return
	}
	s.eng.risk.origin, s.eng.risk.key = deploymentOf(reason), keyID // the per-deployment throttle, the agent's envelope (risk.go)
	out := s.eng.execute(c, now)
	s.eng.risk.origin, s.eng.risk.key = "", ""
	out.Ticket = id
	// The entry carries the order's client id even when the command named
	// the order by its node id, so the audit joins by client order id.
	entry := &node.AuditEntry{Time: now, Ticket: id, KeyID: keyID, Command: c, Reason: reason, ClientOrderID: out.ClientOrderID, Outcome: out}
	s.eng.checkBreakers(now) // after the command's fills (breakers.go)
	events := s.eng.take()
	// The ticket resolves once the command is durable; the fold does not wait.
	s.commitThen(&journal.Batch{Entry: entry, Events: events, Audit: s.breakerAudit(events, node.KeyNode)}, func(err error) {
		if err != nil {
			out = node.Outcome{Ticket: id, Status: node.Rejected, Verb: c.Verb, ClientOrderID: c.ClientOrderID, Time: now,
				Code: "journal", Reason: "the journal could not record the command, so nothing was executed: " + err.Error()}
		}
		s.log.Info("command", "ticket", id, "key_id", keyID, "verb", string(c.Verb), "client_order_id", out.ClientOrderID,
			"status", string(out.Status), "code", out.Code, "detail", out.Detail)
		s.tickets.resolve(id, out)
	})
}

// refused resolves the ticket rejected when the node cannot execute
// anything now: its journal failed, or it could not record a lapsed
// arming. It runs on the fold.
func (s *Server) refused(id string, c command.Command, now time.Time) bool {
	if s.fault != nil {
		s.tickets.resolve(id, node.Outcome{Status: node.Rejected, Verb: c.Verb, ClientOrderID: c.ClientOrderID, Time: now,
			Code: "journal", Reason: "the node's journal failed and its state could not be rebuilt; nothing was executed; restart the node"})
		return true
	}
	if s.lapse(now) != nil {
		s.tickets.resolve(id, node.Outcome{Status: node.Rejected, Verb: c.Verb, ClientOrderID: c.ClientOrderID, Time: now,
			Code: "journal", Reason: "the journal could not record a lapsed arming, so nothing was executed"})
		return true
	}
	return false
}
