package server

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"wicket/node"
	"wicket/node/command"
	"wicket/node/journal"
)

// The kill switch: POST /v1/kill, signed by the operator key, halts the
// node at once (journaled: it holds across a restart, and every write is
// refused naming it), cancels every working order on every venue — the
// paper venues on the fold, each real venue on its own lane, all at once,
// whether armed or not — pauses every deployment, and with flatten
// closes every position (on a real venue only while armed). One audit
// entry names every order and deployment it touched. POST
// /v1/resume-trading, signed likewise, ends it.

func (s *Server) kill(w http.ResponseWriter, r *http.Request) {
	req, berr := readOperator(r)
	if berr != nil {
		writeError(w, berr)
		return
	}
	ctx := context.WithoutCancel(r.Context()) // a kill begun runs to its end
	var rep node.KillReport
	var kerr *node.Error
	var reals []string
	derr := s.do(ctx, func() {
		now := s.cfg.Now()
		if kerr = s.operatorRisk(node.ActKill, req, now); kerr != nil {
			s.log.Warn("kill refused", "code", kerr.Code)
			return
		}
		e := s.eng
		why := "killed by an operator at a terminal (signed with the operator key)"
		if reason := command.SanitizeReason(req.Reason); reason != "" {
			why += ": " + reason
		}
		if e.risk.kill == nil {
			e.emit(node.Event{Time: now, Kind: node.EventKilled, State: e.state, Note: why})
		}
		if e.state != command.Halted {
			e.emit(node.Event{Time: now, Kind: node.EventTradingState, State: command.Halted, Note: "halted by the kill switch"})
		}
		for _, name := range e.paperNames() {
			rep.Canceled = append(rep.Canceled, qualified(name, e.cancelWhere(name, "", "", "the kill switch", now))...)
			if req.Flatten {
				rep.Flattened = append(rep.Flattened, qualified(name, e.flatten(name, e.venues[name].Held(), "kill --flatten", now))...)
			}
		}
		if err := s.commit(&journal.Batch{Events: e.take()}); err != nil {
			kerr = node.Errorf(node.KindUnavailable, "journal", "the journal could not record the kill, so nothing was done: %v", err)
			return
		}
		rep.Kill = *e.risk.kill
		for _, name := range e.names {
			if e.remotes[name] != nil {
				reals = append(reals, name)
			}
		}
	})
	if derr == nil {
		derr = kerr
	}
	if derr != nil {
		writeError(w, derr)
		return
	}
	s.log.Warn("node killed: trading halted", "reason", rep.Kill.Reason, "flatten", req.Flatten)

	var mu sync.Mutex
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		paused := s.pauseDeployments("the node was killed by an operator (wicket node kill)", false, "")
		mu.Lock()
		for _, d := range paused {
			rep.Paused = append(rep.Paused, d.ID)
		}
		mu.Unlock()
	}()
	for _, name := range reals {
		wg.Add(1)
		var once sync.Once
		done := func(p killPart) {
			once.Do(func() {
				mu.Lock()
				rep.Canceled = append(rep.Canceled, qualified(name, p.canceled)...)
				rep.Unconfirmed = append(rep.Unconfirmed, qualified(name, p.unconfirmed)...)
				rep.Flattened = append(rep.Flattened, qualified(name, p.flattened)...)
				if p.note != "" {
					rep.Detail += "; " + name + ": " + p.note
				}
				mu.Unlock()
				wg.Done()
			})
		}
		run := func() { done(s.killVenue(name, req.Flatten)) }
		drop := func() { done(killPart{note: "the node stopped before its turn: nothing was canceled there"}) }
		if s.lanes[name].command(run, drop, true, nil) != "" {
			drop()
		}
	}
	wg.Wait()
	if rep.Paused == nil {
		rep.Paused = []string{}
	}
	if rep.Canceled == nil {
		rep.Canceled = []string{}
	}
	rep.Detail = fmt.Sprintf("killed: trading halted; canceled %d order(s) [%s]; paused %d deployment(s) [%s]",
		len(rep.Canceled), strings.Join(rep.Canceled, " "), len(rep.Paused), strings.Join(rep.Paused, " ")) + rep.Detail
	if len(rep.Unconfirmed) > 0 {
		rep.Detail += fmt.Sprintf("; %d cancel(s) not confirmed by the venue [%s]", len(rep.Unconfirmed), strings.Join(rep.Unconfirmed, " "))
	}
	if req.Flatten {
		rep.Detail += fmt.Sprintf("; flattened with %d closing order(s) [%s]", len(rep.Flattened), strings.Join(rep.Flattened, " "))
	}
	var aerr *node.Error
	derr = s.do(ctx, func() {
		now := s.cfg.Now()
		id := "kill-" + s.cfg.NewID()
		out := node.Outcome{Status: node.Accepted, Canceled: rep.Canceled, OrderIDs: rep.Flattened, TradingState: s.eng.state, Detail: rep.Detail}
		entry := operatorAudit(now, id, node.KeyOperator, node.ArmingKill, out)
		entry.Reason = rep.Kill.Reason
		if err := s.commit(&journal.Batch{Audit: []node.AuditEntry{entry}}); err != nil {
			aerr = node.Errorf(node.KindUnavailable, "journal", "the kill was done (%s) but its audit entry could not be recorded: %v", rep.Detail, err)
		}
	})
	if derr == nil {
		derr = aerr
	}
	if derr != nil {
		writeError(w, derr)
		return
	}
	s.log.Warn("kill done", "detail", rep.Detail)
	writeJSON(w, http.StatusOK, rep)
}

// qualified names each order id with its venue.
func qualified(venue string, ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = venue + ":" + id
	}
	return out
}

// killPart is what the kill did at one real venue.
type killPart struct {
	canceled, unconfirmed, flattened []string
	note                             string
}

// killVenue cancels every working order of the node's at one real venue
// (on its lane: the commands queued before it are refused at their turn,
// since the node is halted), and with flatten, while the venue is armed,
// closes its positions.
func (s *Server) killVenue(name string, flatten bool) killPart {
	var p killPart
	var open []node.Order
	armed := false
	s.onFold(func() {
		armed = s.eng.armed(name, s.cfg.Now())
		open = cancelable(s.eng.remotes[name], "", "")
	})
	if ca := cancelAller(s.cfg.Exchanges[name]); ca != nil && len(open) > 0 {
		open = s.cancelAllAt(name, ca, open, &p)
	}
	for _, o := range open {
		cur, _ := s.cancelRemote(name, o, "canceled by the kill switch")
		if cur.Status == node.OrderCanceled {
			p.canceled = append(p.canceled, o.ID)
		} else {
			p.unconfirmed = append(p.unconfirmed, o.ID)
		}
	}
	if !flatten {
		return p
	}
	if !armed {
		p.note = "not flattened: " + disarmedReason(name)
		return p
	}
	var closing []node.Order
	s.onFold(func() { closing = s.closing(name, s.eng.remotes[name].Held(), "kill --flatten") })
	ids, note, err := s.placeEach(name, closing, "kill")
	p.flattened, p.note = ids, strings.TrimPrefix(note, "; ")
	if err != nil {
		p.note = "flatten stopped: " + err.Error()
	}
	return p
}

// pauseDeployments pauses the deployments through Config.Deployments
// (off the fold); none when the node runs none.
func (s *Server) pauseDeployments(why string, autoOnly bool, venue string) []node.PausedDeployment {
	p, ok := s.cfg.Deployments.(DeploymentPauser)
	if !ok {
		return nil
	}
	paused := p.PauseDeployments(why, autoOnly, venue)
	for _, d := range paused {
		s.log.Warn("deployment paused", "deployment", d.ID, "why", why)
	}
	return paused
}

// resumeTrading ends a kill (operator-signed): the trading state goes
// back to what it was before the kill. Paused deployments stay paused
// until an operator resumes each (wicket node resume DEPLOYMENT).
func (s *Server) resumeTrading(w http.ResponseWriter, r *http.Request) {
	req, berr := readOperator(r)
	if berr != nil {
		writeError(w, berr)
		return
	}
	var st node.RiskStatus
	var ierr *node.Error
	derr := s.do(r.Context(), func() {
		now := s.cfg.Now()
		if ierr = s.operatorRisk(node.ActResumeTrading, req, now); ierr != nil {
			return
		}
		e := s.eng
		k := e.risk.kill
		if k == nil {
			ierr = node.Errorf(node.KindRejected, "not_killed", "the node is not killed: nothing to resume (its trading state is %s)", e.state)
			return
		}
		detail := fmt.Sprintf("kill of %s ended by an operator (signed with the operator key); trading state %s restored; paused deployments stay paused until an operator resumes each",
			k.Since.UTC().Format("2006-01-02T15:04:05Z"), k.Prior)
		e.emit(node.Event{Time: now, Kind: node.EventKillEnded, State: k.Prior, Note: detail})
		if e.state != k.Prior {
			e.emit(node.Event{Time: now, Kind: node.EventTradingState, State: k.Prior, Note: "restored by resume-trading"})
		}
		entry := operatorAudit(now, "resume-"+s.cfg.NewID(), node.KeyOperator, node.ArmingResumeTrading,
			node.Outcome{Status: node.Accepted, TradingState: k.Prior, Detail: detail})
		entry.Reason = command.SanitizeReason(req.Reason)
		if err := s.commit(&journal.Batch{Events: e.take(), Audit: []node.AuditEntry{entry}}); err != nil {
			ierr = node.Errorf(node.KindUnavailable, "journal", "the journal could not record the resume, so the node stays killed: %v", err)
			return
		}
		s.log.Warn("kill ended: trading resumed", "state", string(k.Prior))
		st = e.riskStatus(now)
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

// CancelAller is an Exchange with the venue's own cancel-all (Binance's
// DELETE /api/v3/openOrders): the kill switch uses it, one request per
// symbol instead of one per order, and cancels one by one only the
// orders its answer does not settle.
type CancelAller interface {
	CancelAll(ctx context.Context, symbols []string) ([]node.VenueOrder, error)
}

// cancelAllAt cancels open at venue name with its cancel-all, settles
// the orders the answer names (in one hop to the fold, one commit), and
// returns those left for cancelRemote.
func (s *Server) cancelAllAt(name string, ca CancelAller, open []node.Order, p *killPart) []node.Order {
	var symbols []string
	for _, o := range open {
		if !slices.Contains(symbols, o.Symbol) {
			symbols = append(symbols, o.Symbol)
		}
	}
	ctx, cancel := s.venueCall()
	answered, err := ca.CancelAll(ctx, symbols)
	cancel()
	if err != nil {
		s.log.Warn("venue cancel-all failed; canceling one by one", "venue", name, "err", err)
	}
	byID := map[string]node.VenueOrder{}
	for _, vo := range answered {
		byID[vo.VenueOrderID] = vo
	}
	const note = "canceled by the kill switch (the venue's cancel-all)"
	var rest []node.Order
	s.onFold(func() {
		r := s.eng.remotes[name]
		for _, o := range open {
			vo, hit := byID[o.VenueOrderID]
			if !hit || o.VenueOrderID == "" {
				rest = append(rest, o)
				continue
			}
			if vo.Reason == "" {
				vo.Reason = note
			}
			s.eng.settle(r, current(r, o), vo, note, s.cfg.Now())
			cur := current(r, o)
			if cur.Leg == command.LegEntry && cur.Status == node.OrderCanceled {
				s.cancelKept(r, o.ID, fmt.Sprintf("its entry %s was canceled (%s), so it was never sent", o.ID, note))
			}
			switch cur.Status {
			case node.OrderCanceled:
				p.canceled = append(p.canceled, o.ID)
			case node.OrderOpen, node.OrderPending:
				rest = append(rest, o)
			} // filled before the cancel-all reached it: nothing to cancel
		}
		s.commitStep(name) //nolint:errcheck // a failure rebuilt the engine, which reconciles
	})
	return rest
}

// cancelAller is ex's cancel-all, scrubbed as its other answers are; nil
// when the adapter has none.
func cancelAller(ex Exchange) CancelAller {
	if x, ok := ex.(scrubbedExchange); ok {
		if ca := cancelAller(x.ex); ca != nil {
			return scrubbedCancelAll{ca, x}
		}
		return nil
	}
	ca, _ := ex.(CancelAller)
	return ca
}

type scrubbedCancelAll struct {
	ca CancelAller
	x  scrubbedExchange
}

func (c scrubbedCancelAll) CancelAll(ctx context.Context, symbols []string) ([]node.VenueOrder, error) {
	vos, err := c.ca.CancelAll(ctx, symbols)
	for i := range vos {
		vos[i], _ = c.x.order(vos[i], nil)
	}
	return vos, c.x.sc.Error(err)
}
