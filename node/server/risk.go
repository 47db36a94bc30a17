package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"wicket/node"
	"wicket/node/command"
	"wicket/node/guardrail"
	"wicket/node/journal"
)

// The node's risk controls (docs/node.md "Risk controls"): the [risk]
// pre-trade checks run through the guardrail on every write with the
// node's ledger (admit), the kill switch (kill.go), the dead man's switch
// (heartbeat.go), and GET /v1/risk. The operator's acts are signed with
// the operator key over a challenge, as arming is.

// riskState is the engine's share of the risk controls; only the fold
// touches it.
type riskState struct {
	ledger *guardrail.Ledger
	origin string                      // the deployment whose command is being applied ("" for others)
	kill   *node.KillState             // a standing kill (journaled)
	beat   heartbeat                   // the dead man's switch (heartbeat.go)
	clocks map[string]node.MarketClock // real venues' market clocks, by venue ([risk] market_hours)
	lost   map[string]time.Time        // real venues whose stream a mark step found lost, since (heartbeat.go)
	losses map[string]string           // venues whose lost stream tripped [risk] stream_loss: the note
	// The operator's one-off overrides (override.go): granted, by preview
	// hash; the one the check being made lifts; how the engine audits.
	overrides overrides
	lifting   string
	audit     func(action node.ArmingAction, note string)
	// The agent's capital envelope (envelope.go) and the key id of the
	// command being applied.
	env envelopes
	key string
}

// deploymentPrefix starts the reason of every command a deployment
// sends ("deployment dep-... (strategy) to target ..."), which is how the
// per-deployment throttle knows the sender.
const deploymentPrefix = "deployment dep-"

// deploymentOf is the deployment a command's reason names, or "".
func deploymentOf(reason string) string {
	if !strings.HasPrefix(reason, deploymentPrefix) {
		return ""
	}
	id, _, _ := strings.Cut(reason[len("deployment "):], " ")
	return id
}

// activity is the node's side of the per-command checks.
func (e *engine) activity() *guardrail.Activity {
	return &guardrail.Activity{Ledger: e.risk.ledger, Deployment: e.risk.origin, Now: e.now()}
}

// admit is check for a command about to execute: one that passes is
// counted by the throttles; an identical order refused stays refused
// until an operator resets the throttle. Only a refusal's checks are
// written out (guardrail.Admit): execute reads no passing check's detail.
func (e *engine) admit(c command.Command) (guardrail.Report, *rejection) {
	e.risk.lifting = ""
	rep, r := e.checkFor(c, e.guard.Admit)
	if r == nil {
		r = e.checkEnvelope(c) // the agent's capital envelope (envelope.go)
	}
	if r == nil {
		e.recordAgentOrder(c)
	}
	switch {
	case r == nil && e.risk.lifting != "":
		e.spendOverride(c)
		e.guard.Record(e.risk.ledger, c, e.risk.origin, e.now())
	case r == nil:
		e.guard.Record(e.risk.ledger, c, e.risk.origin, e.now())
	case !rep.OK:
		e.guard.Refused(e.risk.ledger, c, rep)
	}
	return rep, r
}

// checkKill refuses every write while the kill stands, naming it.
func (e *engine) checkKill(c command.Command) *rejection {
	k := e.risk.kill
	if k == nil {
		return nil
	}
	return &rejection{code: "killed", reason: fmt.Sprintf("the node was killed by an operator at %s (%s): every write is refused until an operator runs wicket node resume-trading",
		k.Since.UTC().Format(time.RFC3339), k.Reason)}
}

// applyRisk applies the kill's events and counts fills (live and on replay).
func (e *engine) applyRisk(ev node.Event) {
	switch ev.Kind {
	case node.EventKilled:
		e.risk.kill = &node.KillState{Since: ev.Time, Reason: ev.Note, Prior: ev.State}
	case node.EventKillEnded:
		e.risk.kill = nil
	case node.EventFilled:
		e.risk.ledger.Filled(ev.Venue, ev.Time, ev.Quantity.Mul(ev.Price))
		e.applyEnvelope(ev)
	}
}

// Resting lists the open limit orders on venue's symbol (the self-trade
// check's guardrail.RestingView).
func (e *engine) Resting(venue, symbol string) []guardrail.Order {
	v := e.venues[venue]
	if v == nil {
		return nil
	}
	var out []guardrail.Order
	for _, o := range v.OpenOrders() {
		if o.Symbol == symbol && o.Status == node.OrderOpen {
			out = append(out, o.View())
		}
	}
	return out
}

var _ guardrail.RestingView = (*engine)(nil)

// riskSnapshot adds the kill and the heartbeat to a snapshot.
func (e *engine) riskSnapshot(s *node.Snapshot, now time.Time) {
	if k := e.risk.kill; k != nil {
		kc := *k
		s.Kill = &kc
	}
	s.Heartbeat = e.risk.beat.state(e.cfg.Risk, now)
	for _, name := range e.names {
		if note, ok := e.risk.losses[name]; ok {
			s.StreamLoss = append(s.StreamLoss, note)
		}
	}
}

// riskStatus is GET /v1/risk's answer.
func (e *engine) riskStatus(now time.Time) node.RiskStatus {
	st := node.RiskStatus{Time: now, TradingState: e.state, Limits: append(append(e.guard.Status(e, e.risk.ledger, now), e.envelopeStatus(now)...), e.overrideStatus(now)...)}
	var snap node.Snapshot
	e.riskSnapshot(&snap, now)
	st.Kill, st.Heartbeat, st.StreamLoss = snap.Kill, snap.Heartbeat, snap.StreamLoss
	for _, vc := range e.cfg.Venues {
		if b := e.breakers[vc.Name]; b != nil {
			var lim []string
			if b.maxLoss.IsPositive() {
				lim = append(lim, "max_daily_loss "+b.maxLoss.String())
			}
			if b.maxDD.IsPositive() {
				lim = append(lim, "max_drawdown_pct "+b.maxDD.String())
			}
			st.Breakers = append(st.Breakers, node.RiskBreaker{Venue: vc.Name, Limits: strings.Join(lim, ", "), Tripped: b.tripped})
		}
	}
	return st
}

func (s *Server) riskGet(w http.ResponseWriter, r *http.Request) {
	var st node.RiskStatus
	if err := s.do(r.Context(), func() { st = s.eng.riskStatus(s.cfg.Now()) }); err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

// riskActs are the operator's risk acts, each with its CLI command.
var riskActs = map[string]string{
	node.ActKill:          "wicket node kill",
	node.ActResumeTrading: "wicket node resume-trading",
	node.ActHeartbeat:     "wicket node heartbeat",
	node.ActResetThrottle: "wicket node reset-throttle",
	node.ActOverride:      "wicket node override",
}

// challengeName is what a risk act's challenge is issued for: not a
// venue name (no venue name has a colon).
func challengeName(act string) string { return "risk:" + act }

func (s *Server) riskChallenge(w http.ResponseWriter, r *http.Request) {
	act := r.URL.Query().Get("act")
	if _, ok := riskActs[act]; !ok {
		writeError(w, node.Errorf(node.KindBadRequest, "bad_act", "act=%q: give kill, resume-trading, heartbeat, reset-throttle or override", short(act)))
		return
	}
	writeJSON(w, http.StatusOK, node.RiskChallenge{Act: act, Challenge: s.armed.issue(challengeName(act), s.cfg.Now())})
}

func readOperator(r *http.Request) (node.OperatorRequest, *node.Error) {
	var req node.OperatorRequest
	body, _ := io.ReadAll(r.Body)
	if len(body) > 0 {
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			return req, node.Errorf(node.KindBadRequest, "bad_request", "body: %v (fields: challenge, signature, confirm, flatten, reason, check, preview)", err)
		}
	}
	return req, nil
}

// operatorRisk checks that the operator key signed req for act and uses
// up its challenge: the control key alone gets 403.
func (s *Server) operatorRisk(act string, req node.OperatorRequest, now time.Time) *node.Error {
	cli := riskActs[act]
	switch {
	case len(s.cfg.OperatorKey) == 0:
		return node.Errorf(node.KindForbidden, "no_operator_key",
			"this node has no operator public key, so it takes no %s: run `wicket init --operator-key` in the project, then restart wicket node serve", act)
	case req.Signature == "" || req.Challenge == "":
		return node.Errorf(node.KindForbidden, "operator_signature_required",
			"%s needs the operator key's signature; the control key alone does not: the operator runs `%s` at a terminal", act, cli)
	case !node.VerifyOperator(s.cfg.OperatorKey, req.Statement(act), req.Signature):
		return node.Errorf(node.KindForbidden, "bad_operator_signature",
			"the %s is not signed by this node's operator key (settings/operator.pub), or it changed on the way: run `%s` again with the project's operator key", act, cli)
	case !s.armed.take(req.Challenge, challengeName(act), now):
		return node.Errorf(node.KindForbidden, "stale_challenge",
			"the challenge is unknown to this node, used already, for another act or older than %s: run `%s` again", node.ChallengeLife, cli)
	case req.Confirm != act:
		return node.Errorf(node.KindForbidden, "not_confirmed", "%s needs %q typed to confirm", act, act)
	}
	return nil
}

// operatorAudit is the audit entry of an operator's (or the node's) risk act.
func operatorAudit(now time.Time, id, keyID string, action node.ArmingAction, out node.Outcome) node.AuditEntry {
	out.Ticket, out.Time = id, now
	return node.AuditEntry{Time: now, Ticket: id, KeyID: keyID, Reason: out.Detail,
		Arming: &node.ArmingChange{Action: action, Note: out.Detail}, Outcome: out}
}

// riskReset clears the identical-order throttle (operator-signed).
func (s *Server) riskReset(w http.ResponseWriter, r *http.Request) {
	req, berr := readOperator(r)
	if berr != nil {
		writeError(w, berr)
		return
	}
	var st node.RiskStatus
	var ierr *node.Error
	derr := s.do(r.Context(), func() {
		now := s.cfg.Now()
		if ierr = s.operatorRisk(node.ActResetThrottle, req, now); ierr != nil {
			return
		}
		cleared := s.eng.risk.ledger.Reset()
		detail := fmt.Sprintf("identical-order throttle reset by an operator; %d order(s) no longer refused", len(cleared))
		if len(cleared) > 0 {
			detail += ": " + strings.Join(cleared, "; ")
		}
		id := "risk-" + s.cfg.NewID()
		entry := operatorAudit(now, id, node.KeyOperator, node.ArmingAction(node.ActResetThrottle), node.Outcome{Status: node.Accepted, Detail: detail})
		if err := s.commit(&journal.Batch{Audit: []node.AuditEntry{entry}}); err != nil {
			ierr = node.Errorf(node.KindUnavailable, "journal", "the journal could not record the reset: %v", err)
			return
		}
		s.log.Warn("throttle reset", "key_id", node.KeyOperator, "cleared", len(cleared))
		st = s.eng.riskStatus(now)
	})
	if derr == nil {
		derr = ierr
	}
	if derr != nil {
		writeError(w, derr)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

// Clocker is an Exchange with a market clock and symbols that trade only
// in its sessions (Alpaca's equities): with [risk] market_hours the node
// reads it at each account poll and refuses such orders while closed.
type Clocker interface {
	Clock(ctx context.Context) (node.MarketClock, error)
	InSession(symbol string) bool
}

// clocker is ex's clock, through the scrubbing wrapper; nil when none.
func clocker(ex Exchange) Clocker {
	if x, ok := ex.(scrubbedExchange); ok {
		ex = x.ex
	}
	c, _ := ex.(Clocker)
	return c
}

// pollClock reads venue name's market clock when [risk] market_hours
// asks for it (on the venue's poll, off the fold).
func (s *Server) pollClock(name string) {
	c := clocker(s.cfg.Exchanges[name])
	if c == nil || !s.cfg.Project.Risk.MarketHours {
		return
	}
	ctx, cancel := context.WithTimeout(s.bg, s.cfg.VenueTimeout)
	clk, err := c.Clock(ctx)
	cancel()
	if err != nil {
		if s.bg.Err() == nil {
			s.log.Warn("venue clock unreadable", "venue", name, "err", err)
		}
		return
	}
	s.onFold(func() { s.eng.risk.clocks[name] = clk })
}

var _ guardrail.SessionView = (*engine)(nil)

// Session says whether symbol's market at venue is open now (the check
// market_hours): it applies to a real venue with a clock, for a symbol
// that trades only in sessions.
func (e *engine) Session(venue, symbol string) (bool, string, bool) {
	r := e.remotes[venue]
	if r == nil {
		return true, "", false
	}
	c := clocker(r.ex)
	if c == nil || !c.InSession(symbol) {
		return true, "", false
	}
	clk, read := e.risk.clocks[venue]
	now := e.now()
	switch {
	case !read:
		return false, fmt.Sprintf("%s's market clock has not been read yet, so %s's session is unknown; the node reads it at each poll — retry shortly", venue, symbol), true
	case clk.Open && now.Before(clk.NextClose):
		return true, fmt.Sprintf("%s's market is open until %s (its clock)", venue, clk.NextClose.UTC().Format(time.RFC3339)), true
	case !clk.Open && now.Before(clk.NextOpen):
		return false, fmt.Sprintf("%s's market is closed for %s: it opens at %s (its clock); send the order then", venue, symbol, clk.NextOpen.UTC().Format(time.RFC3339)), true
	}
	return false, fmt.Sprintf("%s's market clock, read at %s, is out of date; the node reads it at each poll — retry shortly", venue, clk.Read.UTC().Format(time.RFC3339)), true
}
