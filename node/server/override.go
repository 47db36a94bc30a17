package server

import (
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"wicket/node"
	"wicket/node/command"
	"wicket/node/guardrail"
	"wicket/node/journal"
)

// The operator's one-off override (node/override.go): POST
// /v1/risk/override, signed by the operator key over a challenge, lifts
// one check for the one command whose preview hash it names, for
// node.OverrideLife; the first execution that passes with it spends it.
// A dry run shows the check lifted and spends nothing. Granted and used,
// it is audited (override, override_used). The grant and the use are
// journaled too (node.EventOverride, node.EventOverrideUsed, with the
// command's own events): a restart restores the overrides still waiting,
// each until its own expiry on the node's clock, and never one used.

// overrides are the granted overrides by preview hash (on the fold).
type overrides map[string]node.OverrideState

// overrideHint is what a refusal adds when one overridable check refused
// c: how an operator lifts it for this command alone.
func overrideHint(c command.Command, rep guardrail.Report) string {
	failed := rep.Failed()
	if len(failed) == 0 {
		return ""
	}
	name := failed[0].Name
	for _, f := range failed[1:] {
		if f.Name != name {
			return ""
		}
	}
	if !slices.Contains(node.Overridable, name) {
		return ""
	}
	return fmt.Sprintf("; an operator can lift %s for this one command: wicket node override --check %s --preview %s", name, name, node.PreviewHash(c))
}

// liftOverride lifts the failed checks of rep when an override stands for
// c and every failed check is its check; it notes the override as being
// used (e.risk.lifting) for admit to spend.
func (e *engine) liftOverride(c command.Command, rep *guardrail.Report) {
	e.risk.lifting = ""
	if rep.OK || len(e.risk.overrides) == 0 {
		return
	}
	hash := node.PreviewHash(c)
	ov, ok := e.risk.overrides[hash]
	if !ok {
		return
	}
	if !e.now().Before(ov.Until) {
		delete(e.risk.overrides, hash)
		return
	}
	for _, ch := range rep.Failed() {
		if ch.Name != ov.Check {
			return
		}
	}
	for i := range rep.Checks {
		if ch := &rep.Checks[i]; !ch.OK {
			ch.OK = true
			ch.Detail = "lifted once by the operator's override: " + ch.Detail
		}
	}
	rep.OK = true
	e.risk.lifting = hash
}

// spendOverride spends the override admit used for c, and audits it.
func (e *engine) spendOverride(c command.Command) {
	hash := e.risk.lifting
	e.risk.lifting = ""
	ov, ok := e.risk.overrides[hash]
	if !ok {
		return
	}
	e.emit(node.Event{Time: e.now(), Kind: node.EventOverrideUsed, Venue: c.Venue, ClientOrderID: c.ClientOrderID,
		Override: &node.OverrideState{Check: ov.Check, Preview: hash}})
	note := fmt.Sprintf("the operator's override of %s was used, once, by %s (preview %s)", ov.Check, describeCommand(c), hash)
	if e.risk.audit != nil {
		e.risk.audit(node.ArmingOverrideUsed, note)
	}
}

// applyOverride applies a grant or a use (live and on replay): a grant
// already past its expiry on the node's clock is not restored.
func (e *engine) applyOverride(ev node.Event) {
	ov := ev.Override
	if ov == nil {
		return
	}
	switch {
	case ev.Kind == node.EventOverrideUsed:
		delete(e.risk.overrides, ov.Preview)
	case e.now().Before(ov.Until):
		if e.risk.overrides == nil {
			e.risk.overrides = overrides{}
		}
		e.risk.overrides[ov.Preview] = *ov
	}
}

func describeCommand(c command.Command) string {
	s := strings.TrimSpace(fmt.Sprintf("%s %s %s %s %s", c.Verb, c.Type, c.Side, c.Quantity.String(), c.Symbol))
	if c.Venue != "" {
		s += " on " + c.Venue
	}
	if c.ClientOrderID != "" {
		s += " (client_order_id " + c.ClientOrderID + ")"
	}
	return s
}

// overrideStatus lists the overrides still waiting for their command, as
// risk_status shows them.
func (e *engine) overrideStatus(now time.Time) []guardrail.Headroom {
	var out []guardrail.Headroom
	for hash, ov := range e.risk.overrides {
		if !now.Before(ov.Until) {
			continue
		}
		out = append(out, guardrail.Headroom{Check: ov.Check, Scope: "override of the command " + hash[:16] + "…", Limit: "lifted once",
			Note: "waits until " + ov.Until.UTC().Format(time.RFC3339)})
	}
	slices.SortFunc(out, func(a, b guardrail.Headroom) int { return strings.Compare(a.Scope, b.Scope) })
	return out
}

// auditRisk commits an audit entry of the node's own (on the fold): the
// engine's risk acts that need no operator at the time, as an override's use.
func (s *Server) auditRisk(action node.ArmingAction, note string) {
	now := s.cfg.Now()
	entry := operatorAudit(now, "risk-"+s.cfg.NewID(), node.KeyNode, action, node.Outcome{Status: node.Accepted, Detail: note})
	if err := s.commit(&journal.Batch{Audit: []node.AuditEntry{entry}}); err != nil {
		s.log.Error("a risk act could not be audited", "action", string(action), "note", note, "err", err)
	}
	s.log.Warn("risk", "action", string(action), "note", note)
}

// riskOverride grants an override (operator-signed).
func (s *Server) riskOverride(w http.ResponseWriter, r *http.Request) {
	req, berr := readOperator(r)
	if berr != nil {
		writeError(w, berr)
		return
	}
	if !slices.Contains(node.Overridable, req.Check) {
		writeError(w, node.Errorf(node.KindBadRequest, "bad_check", "check %q cannot be overridden; one of: %s", short(req.Check), strings.Join(node.Overridable, ", ")))
		return
	}
	if b, err := hex.DecodeString(req.Preview); err != nil || len(b) != 32 {
		writeError(w, node.Errorf(node.KindBadRequest, "bad_preview", "preview %q is not a preview hash (64 hex digits): copy it from the refusal that names the override", short(req.Preview)))
		return
	}
	var st node.OverrideState
	var ierr *node.Error
	derr := s.do(r.Context(), func() {
		now := s.cfg.Now()
		if ierr = s.operatorRisk(node.ActOverride, req, now); ierr != nil {
			return
		}
		st = node.OverrideState{Check: req.Check, Preview: req.Preview, Until: now.Add(node.OverrideLife), Reason: command.SanitizeReason(req.Reason)}
		detail := fmt.Sprintf("operator's one-off override of %s for the command with preview %s, until %s", st.Check, st.Preview, st.Until.UTC().Format(time.RFC3339))
		if st.Reason != "" {
			detail += ": " + st.Reason
		}
		entry := operatorAudit(now, "risk-"+s.cfg.NewID(), node.KeyOperator, node.ArmingOverride, node.Outcome{Status: node.Accepted, Detail: detail})
		granted := st
		s.eng.emit(node.Event{Time: now, Kind: node.EventOverride, Override: &granted}) // applyOverride holds it
		if err := s.commit(&journal.Batch{Audit: []node.AuditEntry{entry}, Events: s.eng.take()}); err != nil {
			ierr = node.Errorf(node.KindUnavailable, "journal", "the journal could not record the override, so none is granted: %v", err)
			return
		}
		s.log.Warn("override granted", "key_id", node.KeyOperator, "check", st.Check, "preview", st.Preview)
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
