package server

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"time"

	"wicket/node"
	"wicket/node/command"
)

// The node's reads and its one write, each declared once: the HTTP
// handlers (handlers.go) authenticate, decode a request, call one of the
// functions below and encode its answer; Local calls the very same ones in
// process, for a caller that lives inside the node (the deployment runner
// of wicket node serve).

// readHealth is GET /v1/health.
func (s *Server) readHealth(ctx context.Context) (node.Health, *node.Error) {
	var h node.Health
	err := s.do(ctx, func() {
		status := "ok"
		if s.fault != nil {
			status = "failed: " + s.fault.Error()
		}
		h = node.Health{Status: status, Version: s.cfg.Version, TradingState: s.eng.state, Venues: append([]string(nil), s.eng.names...),
			Started: s.started, Time: s.cfg.Now(), Tick: s.eng.tick, Journal: s.j.Path()}
	})
	return h, err
}

// readSnapshot is GET /v1/snapshot: venue ("" for all) with up to events
// recent events (negative: the default; at most maxEvents). The snapshot
// shares nothing with the engine.
func (s *Server) readSnapshot(ctx context.Context, venue string, events int) (node.Snapshot, *node.Error) {
	if events < 0 {
		events = defaultEvents
	}
	events = min(events, maxEvents)
	var snap node.Snapshot
	var serr error
	if err := s.view(ctx, func() {
		snap, serr = s.eng.snapshot(venue, events, s.cfg.Now())
		if serr == nil {
			own(&snap)
		}
	}); err != nil {
		return snap, err
	}
	if serr != nil {
		return snap, asNodeError(serr)
	}
	return snap, nil
}

// own copies what a snapshot would otherwise share with the engine (an
// event's order, a real venue's instruments), so its holder may keep it
// while the fold moves on.
func own(snap *node.Snapshot) {
	for i := range snap.Events {
		if o := snap.Events[i].Order; o != nil {
			c := *o
			snap.Events[i].Order = &c
		}
	}
	for i := range snap.Venues {
		snap.Venues[i].Instruments = maps.Clone(snap.Venues[i].Instruments)
	}
}

// decodeEnvelope reads a command envelope from its wire form, strictly,
// within the node's bound on a request body.
func decodeEnvelope(body []byte) (command.Envelope, *node.Error) {
	var env command.Envelope
	if len(body) > maxBody {
		return env, errTooLarge()
	}
	if err := env.UnmarshalJSON(body); err != nil {
		return env, node.Errorf(node.KindBadRequest, "bad_command", "%v", err)
	}
	return env, nil
}

func errTooLarge() *node.Error {
	return node.Errorf(node.KindBadRequest, "too_large", "request body over %d bytes: a command envelope is far smaller; send one command per request", maxBody)
}

// dryRun is POST /v1/dry-run, under the caller's key: the agent's
// envelope and a deployment's throttle judge its dry run as its write.
func (s *Server) dryRunOf(ctx context.Context, keyID string, env command.Envelope) (node.Verdict, *node.Error) {
	c := env.Command.Resolve(s.cfg.NewID)
	var v node.Verdict
	err := s.do(ctx, func() {
		if s.fault != nil {
			v = node.Verdict{Command: c, Code: "journal", Reason: "the node's journal failed; restart the node", TradingState: s.eng.state}
			return
		}
		s.eng.risk.origin, s.eng.risk.key = deploymentOf(env.Reason), keyID
		v = s.eng.dryRun(c)
		s.eng.risk.origin, s.eng.risk.key = "", ""
	})
	return v, err
}

// submit is POST /v1/commands: it queues env on the fold, to apply under
// keyID, and returns its ticket and client order id at once.
func (s *Server) submit(keyID string, env command.Envelope) (ticket, cid string, _ *node.Error) {
	if err := mayWrite(keyID); err != nil {
		return "", "", err
	}
	c := env.Command.Resolve(s.cfg.NewID)
	id := "tk-" + s.cfg.NewID()
	s.tickets.open(id)
	if err := s.enqueue(func() { s.apply(id, keyID, c, env.Reason) }); err != nil {
		s.tickets.drop(id)
		return "", "", err
	}
	return id, c.ClientOrderID, nil
}

// readTicket is GET /v1/tickets/{id}: its outcome, waiting up to wait (at
// most maxWait) while it is pending; a ticket no longer in memory is read
// from the journal.
func (s *Server) readTicket(ctx context.Context, id string, wait time.Duration) (node.Outcome, *node.Error) {
	wait = min(max(wait, 0), maxWait)
	out, ok := s.tickets.wait(ctx, id, wait)
	if ok {
		return s.settled(ctx, out), nil
	}
	o, found, err := s.j.Ticket(id)
	switch {
	case err != nil:
		return node.Outcome{}, node.Errorf(node.KindInternal, "journal", "%v", err)
	case !found:
		return node.Outcome{}, node.Errorf(node.KindNotFound, "unknown_ticket",
			"no ticket %q: it was never issued, or the node restarted before applying it; look for the order in the snapshot or the audit trail before sending again", short(id))
	}
	return s.settled(ctx, o), nil
}

// readAudit is GET /v1/audit.
func (s *Server) readAudit(aq node.AuditQuery) (node.AuditPage, *node.Error) {
	page, err := s.j.Audit(aq)
	if err != nil {
		return page, node.Errorf(node.KindInternal, "journal", "%v", err)
	}
	return page, nil
}

// mayWrite is the scope of a key: only the control key and the agent
// key (envelope.go) write.
func mayWrite(keyID string) *node.Error {
	if keyID != node.KeyControl && keyID != node.KeyAgent {
		return node.Errorf(node.KindForbidden, "observe_key_cannot_write",
			"the %s key reads only; writes must be signed with the control key", keyID)
	}
	return nil
}

func asNodeError(err error) *node.Error {
	var ne *node.Error
	if errors.As(err, &ne) {
		return ne
	}
	return node.Errorf(node.KindInternal, "internal", "%v", err)
}

// Local is a connection to the node from inside its own process: a
// node.Conn (with Audit and Health) whose every call is one call into the
// node's fold, journal and tickets, the very functions the HTTP handlers
// call, so a command goes through the same strict decoding of its
// envelope, the same guardrail, dry run, journal, audit, pending and
// settlement rules, and is recorded under the same key id as over HTTP.
//
// It is bound at wiring to one key id (Server.Local): that binding
// replaces the HTTP path's signature verification (there is no request to
// sign, and no key is held), and the key's scope applies as over HTTP: a
// Local bound to the observe key reads and dry-runs but cannot write.
// Nothing crosses a socket, nothing is signed, and a Local never outlives
// its node: after Close every call answers KindUnavailable.
type Local struct {
	s     *Server
	keyID string
}

var _ node.Conn = (*Local)(nil)

// Local returns the node's in-process connection acting as keyID
// (node.KeyControl for the deployment runner, as its HTTP client signed
// with the control key). A key id the node does not hold is refused.
func (s *Server) Local(keyID string) (*Local, error) {
	if _, ok := s.auth.keys[keyID]; !ok {
		return nil, node.Errorf(node.KindAuth, "unknown_key", "unknown key id %q: use %q or %q", short(keyID), node.KeyObserve, node.KeyControl)
	}
	return &Local{s: s, keyID: keyID}, nil
}

// String names the key id only.
func (l *Local) String() string { return "server.Local(" + l.keyID + ")" }

// Snapshot is node.Client.Snapshot in process.
func (l *Local) Snapshot(ctx context.Context, venue string, events int) (*node.Snapshot, error) {
	snap, err := l.s.readSnapshot(ctx, venue, events)
	if err != nil {
		return nil, err
	}
	return &snap, nil
}

// DryRun is node.Client.DryRun in process.
func (l *Local) DryRun(ctx context.Context, env command.Envelope) (node.Verdict, error) {
	env, err := wire(env)
	if err != nil {
		return node.Verdict{}, err
	}
	v, nerr := l.s.dryRunOf(ctx, l.keyID, env)
	if nerr != nil {
		return v, nerr
	}
	if o := v.ExistingOrder; o != nil {
		c := *o
		v.ExistingOrder = &c
	}
	return v, nil
}

// Submit is node.Client.Submit in process: the command is queued under
// the bound key id, and its ticket returned at once.
func (l *Local) Submit(ctx context.Context, env command.Envelope) (string, error) {
	if err := mayWrite(l.keyID); err != nil {
		return "", err // as the HTTP path refuses before decoding
	}
	env, err := wire(env)
	if err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", node.Errorf(node.KindTimeout, "canceled", "request canceled before the node took it")
	}
	id, _, nerr := l.s.submit(l.keyID, env)
	if nerr != nil {
		return "", nerr
	}
	return id, nil
}

// Ticket is node.Client.Ticket in process.
func (l *Local) Ticket(ctx context.Context, id string, wait time.Duration) (node.Outcome, error) {
	o, err := l.s.readTicket(ctx, id, wait)
	if err != nil {
		return o, err
	}
	ownOutcome(&o)
	return o, nil
}

// Audit is node.Client.Audit in process.
func (l *Local) Audit(_ context.Context, aq node.AuditQuery) (node.AuditPage, error) {
	aq.After, aq.Limit = max(aq.After, 0), max(aq.Limit, 0) // as the client leaves them out
	p, err := l.s.readAudit(aq)
	if err != nil {
		return p, err
	}
	return p, nil
}

// Health is node.Client.Health in process.
func (l *Local) Health(ctx context.Context) (node.Health, error) {
	h, err := l.s.readHealth(ctx)
	if err != nil {
		return h, err
	}
	return h, nil
}

// wire passes env through its wire form, as the HTTP client sends it and
// the handler decodes it: the same strictness, sanitizing and size bound.
func wire(env command.Envelope) (command.Envelope, *node.Error) {
	body, err := json.Marshal(env)
	if err != nil {
		return env, &node.Error{Kind: node.KindBadRequest, Code: "bad_command", Message: err.Error(), Err: err}
	}
	return decodeEnvelope(body)
}

// ownOutcome copies what an outcome shares with the node's tickets.
func ownOutcome(o *node.Outcome) {
	for _, p := range []**node.Order{&o.Order, &o.ExistingOrder} {
		if *p != nil {
			c := **p
			*p = &c
		}
	}
	o.OrderIDs = append([]string(nil), o.OrderIDs...)
	o.Canceled = append([]string(nil), o.Canceled...)
}
