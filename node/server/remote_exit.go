package server

import (
	"fmt"
	"time"
	"wicket/node"
	"wicket/node/command"
)

// cancelEach cancels each listed order at the venue, on the lane; it
// returns the ids canceled and a note of those the venue did not confirm.
func (s *Server) cancelEach(name string, orders []node.Order, note string) ([]string, string) {
	var ids []string
	failed := 0
	for _, o := range orders {
		cur, _ := s.cancelRemote(name, o, "canceled by "+note) // a refusal or lost answer is counted below
		if cur.Status == node.OrderCanceled {
			ids = append(ids, o.ID)
		} else {
			failed++
		}
	}
	if failed > 0 {
		return ids, fmt.Sprintf("; %d cancel(s) not confirmed by the venue (see node_snapshot)", failed)
	}
	return ids, ""
}

// placeEach sends each listed closing order, on the lane; it returns the
// ids placed and a note of those pending. An error is an order that could
// not be journaled, so was not sent (nor any after it).
func (s *Server) placeEach(name string, orders []node.Order, ticket string) ([]string, string, error) {
	var ids []string
	pending := 0
	for _, o := range orders {
		o, err := s.placeRemote(name, o, ticket)
		if err != nil {
			return ids, "", err
		}
		ids = append(ids, o.ID)
		if o.Status == node.OrderPending {
			pending++
		}
	}
	if pending > 0 {
		return ids, fmt.Sprintf("; %d closing order(s) pending at the venue: %s", pending, pendingAdvice), nil
	}
	return ids, "", nil
}

// exitPart is what market_exit did at one real venue.
type exitPart struct {
	canceled, ids []string
	detail        string
	skipped       bool // disarmed
	stopped       bool // the node stopped before its turn
	err           error
}

// exitVenue cancels every open order at one real venue, then flattens
// every position it holds: on the lane, with hops to the fold. A disarmed
// venue is skipped.
func (s *Server) exitVenue(name, ticket string) exitPart {
	var p exitPart
	var open []node.Order
	s.onFold(func() {
		if !s.eng.armed(name, s.cfg.Now()) {
			p.skipped = true
			return
		}
		open = cancelable(s.eng.remotes[name], "", "")
	})
	if p.skipped {
		return p
	}
	var canceledNote, placedNote string
	p.canceled, canceledNote = s.cancelEach(name, open, "market_exit")
	var closing []node.Order
	s.onFold(func() { closing = s.closing(name, s.eng.remotes[name].Held(), "market_exit") })
	p.ids, placedNote, p.err = s.placeEach(name, closing, ticket)
	p.detail = canceledNote + placedNote
	return p
}

// exitAll gathers market_exit over every venue; only the fold touches it.
type exitAll struct {
	out              node.Outcome
	skipped, stopped []string
	extra            string
	err              error
	left             int // real venues still to answer
}

func (x *exitAll) add(name string, p exitPart) {
	x.left--
	switch {
	case p.skipped:
		x.skipped = append(x.skipped, name)
	case p.stopped:
		x.stopped = append(x.stopped, name)
	}
	x.out.Canceled, x.out.OrderIDs = append(x.out.Canceled, p.canceled...), append(x.out.OrderIDs, p.ids...)
	x.extra += p.detail
	if x.err == nil {
		x.err = p.err
	}
}

// exitEverywhere runs market_exit over every venue, on the fold: the
// paper venues at once, and each real venue on its own lane, all lanes at
// once (never refused as busy); the last to finish resolves the ticket.
func (s *Server) exitEverywhere(id, keyID string, c command.Command, reason string, now time.Time) {
	x := &exitAll{out: node.Outcome{Status: node.Accepted, Verb: c.Verb, ClientOrderID: c.ClientOrderID, Time: now}}
	if _, r := s.eng.check(c); r != nil {
		x.out.Status, x.out.Code, x.out.Reason, x.out.ExistingOrder = node.Rejected, r.code, r.reason, r.existing
		s.finishRemote(id, keyID, c, reason, x.out, false)
		return
	}
	paperOut := s.eng.execute(c, now) // the paper venues
	x.out.Canceled, x.out.OrderIDs = paperOut.Canceled, paperOut.OrderIDs
	if err := s.commitStep(""); err != nil {
		x.out.Canceled, x.out.OrderIDs = nil, nil
		x.extra = "; the paper venues' exit could not be journaled, so it was not done: " + err.Error()
	}
	finish := func() {
		if x.left > 0 {
			return
		}
		out := x.out
		out.Detail = fmt.Sprintf("canceled %d order(s) and flattened %d position(s)", len(out.Canceled), len(out.OrderIDs)) + x.extra
		if len(x.skipped) > 0 {
			out.Detail += fmt.Sprintf("; skipped disarmed venue(s) %v: %s", x.skipped, disarmedReason(x.skipped[0]))
		}
		if len(x.stopped) > 0 {
			out.Detail += fmt.Sprintf("; the node stopped before venue(s) %v had their turn: nothing was sent there", x.stopped)
		}
		if x.err != nil {
			out = journalRefusal(c, now, x.err)
		}
		s.finishRemote(id, keyID, c, reason, out, false)
	}
	var names []string
	for _, name := range s.eng.names {
		if s.eng.remotes[name] != nil {
			names = append(names, name)
		}
	}
	x.left = len(names)
	for _, name := range names {
		part := func() {
			p := s.exitVenue(name, id)
			s.onFold(func() { x.add(name, p); finish() })
		}
		drop := func() { s.onFold(func() { x.add(name, exitPart{stopped: true}); finish() }) }
		if s.lanes[name].command(part, drop, true, nil) != "" {
			x.add(name, exitPart{stopped: true})
		}
	}
	finish()
}
