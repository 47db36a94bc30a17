package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"wicket/internal/project"
	"wicket/node"
	"wicket/node/journal"
)

// Arming over HTTP: the operator-signed arming and disarming of real
// venues, their lapse, and the audit trail's record of each.

// lapse disarms venues whose arming ran out and commits that.
func (s *Server) lapse(now time.Time) error {
	s.eng.lapse(now)
	if len(s.eng.step) == 0 {
		return nil
	}
	for _, ev := range s.eng.step {
		s.log.Warn("venue disarmed", "venue", ev.Venue, "why", ev.Note)
	}
	events := s.eng.take()
	return s.commit(&journal.Batch{Events: events, Audit: s.armingAudit(events, node.KeyNode, node.ArmingLapse)})
}

// armingAudit is the audit trail's record of the arming events among
// events: one entry each, by keyID (the operator's key, or node.KeyNode
// for a lapse), under a ticket named for the event, so it is unique.
func (s *Server) armingAudit(events []node.Event, keyID string, action node.ArmingAction) []node.AuditEntry {
	var out []node.AuditEntry
	for _, ev := range events {
		if ev.Kind != node.EventArmed && ev.Kind != node.EventDisarmed {
			continue
		}
		vc, _ := s.cfg.Project.Venue(ev.Venue)
		id := fmt.Sprintf("arming-%d", ev.Seq)
		out = append(out, node.AuditEntry{Time: ev.Time, Ticket: id, KeyID: keyID,
			Arming:  &node.ArmingChange{Action: action, Venue: ev.Venue, Environment: vc.Environment, Until: ev.Until, Note: ev.Note},
			Outcome: node.Outcome{Ticket: id, Status: node.Accepted, Detail: ev.Note, Time: ev.Time}})
	}
	return out
}

// armInfo is what arming name means now, and why it cannot be armed.
func (s *Server) armInfo(name string, now time.Time) (node.ArmInfo, *node.Error) {
	e := s.eng
	vc, ok := s.cfg.Project.Venue(name)
	if !ok {
		return node.ArmInfo{}, node.Errorf(node.KindNotFound, "unknown_venue", "no venue %q", name)
	}
	g := s.cfg.Project.Guardrail
	info := node.ArmInfo{Venue: name, Kind: vc.Kind, Environment: vc.Environment, Live: vc.Live(), MayArm: vc.MayArm,
		AllowLive: s.cfg.AllowLive, Symbols: vc.Symbols, MaxOrderNotional: g.MaxOrderNotional,
		MaxPositionNotional: g.MaxPositionNotional, PriceCollarPct: g.PriceCollarPct, Armed: e.armed(name, now)}
	r := e.remotes[name]
	if r == nil {
		info.Environment, info.Refusal = project.KindPaper, "a paper venue is simulated and needs no arming"
		return info, nil
	}
	if info.Armed {
		info.ArmedUntil = e.arming[name]
	}
	info.Account, info.Currency, info.Cash, info.BuyingPower = r.account.ID, r.account.Currency, r.account.Cash, r.account.BuyingPower
	switch {
	case !vc.MayArm:
		info.Refusal = fmt.Sprintf("venue %s cannot be armed: its [[venues]] table in wicket.toml does not say may_arm = true", name)
	case vc.Live() && !s.cfg.AllowLive:
		info.Refusal = fmt.Sprintf("venue %s is live (real money): it can be armed only on a node started with wicket node serve --allow-live", name)
	case !r.synced:
		info.Refusal = fmt.Sprintf("venue %s has not been reached yet, so its account cannot be shown; check the node's log and try again", name)
	}
	return info, nil
}

func (s *Server) arming(w http.ResponseWriter, r *http.Request) {
	var info node.ArmInfo
	var ierr *node.Error
	now := s.cfg.Now()
	derr := s.do(r.Context(), func() { info, ierr = s.armInfo(r.PathValue("name"), now) })
	if derr == nil && ierr == nil && info.Refusal == "" {
		info.Challenge = s.armed.issue(info.Venue, now)
	}
	writeArm(w, derr, ierr, info)
}

func readArm(r *http.Request) (node.ArmRequest, *node.Error) {
	var req node.ArmRequest
	body, _ := io.ReadAll(r.Body)
	if len(body) > 0 {
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			return req, node.Errorf(node.KindBadRequest, "bad_request", "arming body: %v (fields: for, confirm, challenge, signature)", err)
		}
	}
	return req, nil
}

// operatorSigned checks that the operator key signed req for venue name
// and uses up its challenge. The control key that signed the request
// itself is not enough: arming is the operator's, whose key the agent's
// process never holds.
func (s *Server) operatorSigned(name string, req node.ArmRequest, now time.Time) *node.Error {
	switch {
	case len(s.cfg.OperatorKey) == 0:
		return node.Errorf(node.KindForbidden, "no_operator_key",
			"this node has no operator public key, so it arms nothing: run `wicket init --operator-key` in the project (it makes settings/operator.key and settings/operator.pub), then restart wicket node serve")
	case req.Signature == "" || req.Challenge == "":
		return node.Errorf(node.KindForbidden, "operator_signature_required",
			"arming %s needs the operator key's signature; the control key alone does not arm: the operator runs `wicket node arm %s` at a terminal", name, name)
	case !node.VerifyOperator(s.cfg.OperatorKey, req.Statement(name), req.Signature):
		return node.Errorf(node.KindForbidden, "bad_operator_signature",
			"the arming of %s is not signed by this node's operator key (settings/operator.pub), or it changed on the way: run `wicket node arm %s` again with the project's operator key", name, name)
	case !s.armed.take(req.Challenge, name, now):
		return node.Errorf(node.KindForbidden, "stale_challenge",
			"the arming challenge is unknown to this node, used already or older than %s (an arming is signed for one use on one node): run `wicket node arm %s` again", node.ChallengeLife, name)
	}
	return nil
}

func (s *Server) arm(w http.ResponseWriter, r *http.Request) {
	req, berr := readArm(r)
	if berr != nil {
		writeError(w, berr)
		return
	}
	d, err := time.ParseDuration(req.For)
	if err != nil || d <= 0 || d > MaxArm {
		writeError(w, node.Errorf(node.KindBadRequest, "bad_duration", "for=%q: give a duration such as 8h, at most %s", short(req.For), MaxArm))
		return
	}
	name := r.PathValue("name")
	keyID := node.KeyOperator
	var info node.ArmInfo
	var aerr *node.Error
	derr := s.do(r.Context(), func() {
		now := s.cfg.Now()
		if info, aerr = s.armInfo(name, now); aerr != nil {
			return
		}
		if info.Refusal != "" {
			aerr = node.Errorf(node.KindForbidden, "cannot_arm", "%s", info.Refusal)
			return
		}
		if aerr = s.operatorSigned(name, req, now); aerr != nil {
			s.log.Warn("arming refused", "venue", name, "code", aerr.Code)
			return
		}
		if req.Confirm != name {
			aerr = node.Errorf(node.KindForbidden, "not_confirmed", "arming %s needs its name typed to confirm", name)
			return
		}
		until := now.Add(d)
		s.eng.emit(node.Event{Time: now, Kind: node.EventArmed, Venue: name, Until: until,
			Note: fmt.Sprintf("armed by an operator at a terminal (signed with the operator key) for %s, until %s", d, until.UTC().Format(time.RFC3339))})
		events := s.eng.take()
		if err := s.commit(&journal.Batch{Events: events, Audit: s.armingAudit(events, keyID, node.ArmingArm)}); err != nil {
			aerr = node.Errorf(node.KindUnavailable, "journal", "the journal could not record the arming, so the venue stays disarmed: %v", err)
			return
		}
		s.log.Warn("venue armed", "venue", name, "environment", info.Environment, "until", until.UTC().Format(time.RFC3339), "key_id", keyID)
		info, _ = s.armInfo(name, now)
	})
	writeArm(w, derr, aerr, info)
}

func (s *Server) disarm(w http.ResponseWriter, r *http.Request) {
	if _, berr := readArm(r); berr != nil {
		writeError(w, berr)
		return
	}
	name := r.PathValue("name")
	keyID, _ := r.Context().Value(keyIDContext{}).(string)
	var info node.ArmInfo
	var aerr *node.Error
	derr := s.do(r.Context(), func() {
		now := s.cfg.Now()
		if info, aerr = s.armInfo(name, now); aerr != nil {
			return
		}
		if until, armed := s.eng.arming[name]; armed {
			s.eng.emit(node.Event{Time: now, Kind: node.EventDisarmed, Venue: name, Until: until, Note: fmt.Sprintf("disarmed by an operator (key %s)", keyID)})
			events := s.eng.take()
			if err := s.commit(&journal.Batch{Events: events, Audit: s.armingAudit(events, keyID, node.ArmingDisarm)}); err != nil {
				aerr = node.Errorf(node.KindUnavailable, "journal", "the journal could not record the disarming: %v", err)
				return
			}
			s.log.Warn("venue disarmed", "venue", name, "key_id", keyID)
		}
		info, _ = s.armInfo(name, now)
	})
	writeArm(w, derr, aerr, info)
}

// writeArm answers an arming request (read, arm, disarm): the request's
// failure (err) or the venue's (aerr), else the venue's arming state.
func writeArm(w http.ResponseWriter, err, aerr *node.Error, info node.ArmInfo) {
	if err == nil {
		err = aerr
	}
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, info)
}
