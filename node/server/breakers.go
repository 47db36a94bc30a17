package server

import (
	"fmt"
	"net/http"
	"time"

	"github.com/shopspring/decimal"

	"wicket/node"
	"wicket/node/journal"
)

// Per-venue breakers (wicket.toml [[venues]] max_daily_loss and
// max_drawdown_pct): after every mark step and every command the node
// measures each such venue's equity (cash + Σ position × mark); a loss
// over the UTC day beyond max_daily_loss, or a drawdown from the venue's
// equity peak beyond max_drawdown_pct, moves the venue to reduce_only
// with the reason (a journaled event, an audit entry by the node, the
// snapshot's breaker field, a log line). Only an operator clears it
// (operator-signed, as arming is). This file never trades: it only
// narrows what the venue accepts.

// venueBreaker is one venue's breaker state. tripped is journaled (its
// events); the day's start and the peak are measured in memory from the
// node's start or the operator's clear.
type venueBreaker struct {
	maxLoss, maxDD decimal.Decimal // zero: no such limit
	tripped        string          // why it is reduce_only; "" when clear
	day            string          // the UTC day dayStart is of
	dayStart, peak decimal.Decimal
	measured       bool
}

// newBreakers makes the breakers of the venues that set a limit.
func (e *engine) newBreakers() {
	e.breakers = map[string]*venueBreaker{}
	for _, vc := range e.cfg.Venues {
		if vc.MaxDailyLoss.IsPositive() || vc.MaxDrawdownPct.IsPositive() {
			e.breakers[vc.Name] = &venueBreaker{maxLoss: vc.MaxDailyLoss, maxDD: vc.MaxDrawdownPct}
		}
	}
}

// breaker is venue's breaker, made on replay for a venue whose limits
// have since left wicket.toml (its trip still stands).
func (e *engine) breaker(venue string) *venueBreaker {
	b := e.breakers[venue]
	if b == nil {
		b = &venueBreaker{}
		e.breakers[venue] = b
	}
	return b
}

// applyBreaker applies a breaker event (live and on replay).
func (e *engine) applyBreaker(ev node.Event) {
	b := e.breaker(ev.Venue)
	switch ev.Kind {
	case node.EventBreaker:
		b.tripped = ev.Note
	case node.EventBreakerCleared:
		b.tripped = ""
		b.day, b.dayStart, b.peak, b.measured = ev.Time.UTC().Format(time.DateOnly), ev.Cash, ev.Cash, true
	}
}

// breakerReason is why venue is reduce_only by its breaker ("" when not).
func (e *engine) breakerReason(venue string) string {
	if b := e.breakers[venue]; b != nil {
		return b.tripped
	}
	return ""
}

// venueEquity is cash + Σ position × mark; false while a held symbol has
// no mark.
func venueEquity(v venue) (decimal.Decimal, bool) {
	eq := v.Cash()
	for _, s := range v.Held() {
		m, ok := v.Mark(s)
		if !ok {
			return decimal.Zero, false
		}
		eq = eq.Add(v.Position(s).Mul(m))
	}
	return eq, true
}

// checkBreakers measures every venue with a breaker and trips those past
// a limit (events of the current step).
func (e *engine) checkBreakers(now time.Time) {
	for name, b := range e.breakers {
		v := e.venues[name]
		if v == nil || b.tripped != "" || (b.maxLoss.IsZero() && b.maxDD.IsZero()) {
			continue
		}
		eq, ok := venueEquity(v)
		if !ok || (e.remotes[name] != nil && !e.remotes[name].synced) {
			continue
		}
		day := now.UTC().Format(time.DateOnly)
		if !b.measured {
			b.day, b.dayStart, b.peak, b.measured = day, eq, eq, true
		}
		if day != b.day {
			b.day, b.dayStart = day, eq
		}
		if eq.GreaterThan(b.peak) {
			b.peak = eq
		}
		var why string
		if loss := b.dayStart.Sub(eq); b.maxLoss.IsPositive() && loss.GreaterThan(b.maxLoss) {
			why = fmt.Sprintf("max_daily_loss: venue %s's equity %s is %s below the %s it began the UTC day %s with, beyond the %s wicket.toml allows",
				name, eq.StringFixed(2), loss.StringFixed(2), b.dayStart.StringFixed(2), day, b.maxLoss)
		} else if b.maxDD.IsPositive() && b.peak.IsPositive() {
			dd := b.peak.Sub(eq).Div(b.peak).Mul(decimal.NewFromInt(100))
			if dd.GreaterThan(b.maxDD) {
				why = fmt.Sprintf("max_drawdown_pct: venue %s's equity %s is %s%% below its peak of %s, beyond the %s%% wicket.toml allows",
					name, eq.StringFixed(2), dd.StringFixed(2), b.peak.StringFixed(2), b.maxDD)
			}
		}
		if why != "" {
			e.emit(node.Event{Time: now, Kind: node.EventBreaker, Venue: name, Cash: eq,
				Note: why + "; the venue is reduce_only until an operator clears it (wicket node clear-breaker " + name + ")"})
		}
	}
}

// breakerAudit is the audit trail's record of the breaker events among
// events, by keyID (node.KeyNode for a trip, the operator's for a clear).
func (s *Server) breakerAudit(events []node.Event, keyID string) []node.AuditEntry {
	var out []node.AuditEntry
	for _, ev := range events {
		action := node.ArmingBreaker
		switch ev.Kind {
		case node.EventBreaker:
		case node.EventBreakerCleared:
			action = node.ArmingBreakerClear
		default:
			continue
		}
		vc, _ := s.cfg.Project.Venue(ev.Venue)
		id := fmt.Sprintf("breaker-%d", ev.Seq)
		out = append(out, node.AuditEntry{Time: ev.Time, Ticket: id, KeyID: keyID,
			Arming:  &node.ArmingChange{Action: action, Venue: ev.Venue, Environment: vc.Environment, Note: ev.Note},
			Outcome: node.Outcome{Ticket: id, Status: node.Accepted, Detail: ev.Note, Time: ev.Time}})
		s.log.Warn("venue breaker", "venue", ev.Venue, "action", string(action), "why", ev.Note)
	}
	return out
}

// breakerStatement is what the operator signs to clear venue's breaker.
func breakerStatement(venue string, req node.ArmRequest) node.ArmStatement {
	return node.ArmStatement{Action: "clear_breaker", Target: "venue", Name: venue, Confirm: req.Confirm, Challenge: req.Challenge}
}

// breakerGet answers a venue's breaker and a challenge.
func (s *Server) breakerGet(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	var info node.BreakerInfo
	var ierr *node.Error
	now := s.cfg.Now()
	derr := s.do(r.Context(), func() {
		vc, ok := s.cfg.Project.Venue(name)
		if !ok {
			ierr = node.Errorf(node.KindNotFound, "unknown_venue", "no venue %q", name)
			return
		}
		info = node.BreakerInfo{Venue: name, MaxDailyLoss: vc.MaxDailyLoss, MaxDrawdownPct: vc.MaxDrawdownPct, Tripped: s.eng.breakerReason(name)}
		if info.Tripped != "" {
			info.Challenge = s.armed.issue(name, now)
		}
	})
	writeBreaker(w, derr, ierr, info)
}

// breakerClear clears a tripped breaker: an operator's act, signed with
// the operator key over a fresh challenge and the venue's name typed back.
func (s *Server) breakerClear(w http.ResponseWriter, r *http.Request) {
	req, berr := readArm(r)
	if berr != nil {
		writeError(w, berr)
		return
	}
	name := r.PathValue("name")
	var info node.BreakerInfo
	var ierr *node.Error
	derr := s.do(r.Context(), func() {
		now := s.cfg.Now()
		v := s.eng.venues[name]
		switch {
		case v == nil:
			ierr = node.Errorf(node.KindNotFound, "unknown_venue", "no venue %q", name)
			return
		case s.eng.breakerReason(name) == "":
			ierr = node.Errorf(node.KindRejected, "breaker_clear", "venue %s's breaker has not tripped: nothing to clear", name)
			return
		case len(s.cfg.OperatorKey) == 0:
			ierr = node.Errorf(node.KindForbidden, "no_operator_key", "this node has no operator public key, so no breaker can be cleared: run `wicket init --operator-key`, then restart wicket node serve")
			return
		case req.Signature == "" || req.Challenge == "" || !node.VerifyOperator(s.cfg.OperatorKey, breakerStatement(name, req), req.Signature):
			ierr = node.Errorf(node.KindForbidden, "operator_signature_required",
				"clearing venue %s's breaker needs the operator key's signature; the control key alone does not: the operator runs `wicket node clear-breaker %s` at a terminal", name, name)
			return
		case !s.armed.take(req.Challenge, name, now):
			ierr = node.Errorf(node.KindForbidden, "stale_challenge", "the challenge is unknown to this node, used already or older than %s: run `wicket node clear-breaker %s` again", node.ChallengeLife, name)
			return
		case req.Confirm != name:
			ierr = node.Errorf(node.KindForbidden, "not_confirmed", "clearing venue %s's breaker needs its name typed to confirm", name)
			return
		}
		eq, _ := venueEquity(v)
		s.eng.emit(node.Event{Time: now, Kind: node.EventBreakerCleared, Venue: name, Cash: eq,
			Note: fmt.Sprintf("breaker cleared by an operator (signed with the operator key); the day's loss and the peak are measured from %s", eq.StringFixed(2))})
		events := s.eng.take()
		if err := s.commit(&journal.Batch{Events: events, Audit: s.breakerAudit(events, node.KeyOperator)}); err != nil {
			ierr = node.Errorf(node.KindUnavailable, "journal", "the journal could not record the clear, so the venue stays reduce_only: %v", err)
			return
		}
		vc, _ := s.cfg.Project.Venue(name)
		info = node.BreakerInfo{Venue: name, MaxDailyLoss: vc.MaxDailyLoss, MaxDrawdownPct: vc.MaxDrawdownPct}
	})
	writeBreaker(w, derr, ierr, info)
}

func writeBreaker(w http.ResponseWriter, err, ierr *node.Error, info node.BreakerInfo) {
	if err == nil {
		err = ierr
	}
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, info)
}
