package server

import (
	"fmt"
	"strings"

	"wicket/node"
	"wicket/node/command"
)

// remoteVerbs runs one command at a real venue (runRemote): each method
// is its first hop on the fold — the intent journaled before the venue
// hears of it — and returns the calls the venue's lane makes, whose answer
// is applied on the fold into out before the ticket resolves.
type remoteVerbs struct {
	s                 *Server
	id, keyID, reason string
	out               node.Outcome
	written           bool  // the command's audit entry was committed pending before the call
	err               error // an order's intent could not be journaled, so it was not sent
}

var _ venueVerbs = (*remoteVerbs)(nil)

// finish resolves the command's ticket now, with nothing sent.
func (v *remoteVerbs) finish(c command.Command, out node.Outcome) laneCall {
	v.s.finishRemote(v.id, v.keyID, c, v.reason, out, false)
	return nil
}

func (v *remoteVerbs) submit(c command.Command) laneCall {
	s, name := v.s, c.Venue
	if pos, split := s.eng.splits(c); split { // flip = "split" (flip.go)
		return v.splitSubmit(c, pos)
	}
	target, list, held, err := s.submitIntent(c, v.id, &v.out)
	switch {
	case err != nil:
		return v.finish(c, journalRefusal(c, v.out.Time, err))
	case held: // booked in the node's book, with the command's audit entry: the venue hears nothing
		return v.finish(c, v.out)
	}
	return func() func() {
		if len(list) > 0 && s.keptLegs(name, list) { // a bracket's entry alone: the node keeps its exits until it fills
			vo, verr := s.submitCall(name, list[0])
			return func() {
				s.applySubmit(name, list[0], vo, verr)
				s.describeGroup(c, list, &v.out)
			}
		}
		if len(list) > 0 { // an oco's or a bracket's legs, in one request
			legs, verr := s.groupCall(c)
			return func() { s.applyGroup(c, list, legs, verr, &v.out) }
		}
		vo, verr := s.submitCall(name, target)
		return func() { s.describeRemote(&v.out, s.applySubmit(name, target, vo, verr)) }
	}
}

// named is the node order a cancel or modify names (a cancel naming a
// leg no longer open, or kept, reaches its group's open leg).
func (v *remoteVerbs) named(c command.Command) (node.Order, bool) {
	t := v.s.eng.groupTarget(c)
	return v.s.eng.find(c.Venue, t.OrderID, t.ClientOrderID)
}

func (v *remoteVerbs) cancel(c command.Command) laneCall {
	s, name := v.s, c.Venue
	target, ok := v.named(c)
	if !ok { // an order the node did not place, named by the command (check found it)
		x := s.eng.mustExternal(name, c.ClientOrderID)
		return func() func() {
			vo, verr := s.cancelCall(name, x)
			return func() { s.externalCanceled(name, x, vo, verr, &v.out) }
		}
	}
	if !s.recordIntent(v.id, v.keyID, c, v.reason, target, &v.out) {
		return v.finish(c, v.out)
	}
	v.written = true
	return func() func() {
		if target.Group != "" { // one leg names its group: every leg is canceled
			cur, canceled, verr := s.cancelGroupRemote(name, target, "canceled by cancel_order ("+target.Group+")")
			return func() {
				s.describeRemote(&v.out, cur)
				venueOutcome(&v.out, cur, verr)
				v.out.Canceled = canceled
				v.out.Detail = fmt.Sprintf("canceled group %s: %s; %s", target.Group, strings.Join(canceled, ", "), v.out.Detail)
			}
		}
		cur, verr := s.cancelRemote(name, target, "canceled by cancel_order")
		return func() { s.describeRemote(&v.out, cur); venueOutcome(&v.out, cur, verr) }
	}
}

func (v *remoteVerbs) modify(c command.Command) laneCall {
	s, name := v.s, c.Venue
	e := s.eng
	target, _ := v.named(c)
	if heldByNode(target) { // a trigger the node holds: the move is journaled, the venue hears nothing
		if err := e.remotes[name].Amend(target.ID, c, v.out.Time, e.emit); err != nil {
			v.out.Status, v.out.Code, v.out.Reason = node.Rejected, "not_modifiable", err.Error()
		} else {
			e.describeOrder(&v.out, name, target.ID)
			v.out.Detail += "; moved by the node, which holds this trigger (the venue never heard of it)"
		}
		return v.finish(c, v.out)
	}
	if !s.recordIntent(v.id, v.keyID, c, v.reason, target, &v.out) {
		return v.finish(c, v.out)
	}
	v.written = true
	return func() func() {
		cur, verr := s.modifyRemote(name, target, c)
		return func() { s.describeRemote(&v.out, cur); venueOutcome(&v.out, cur, verr) }
	}
}

func (v *remoteVerbs) massCancel(c command.Command) laneCall {
	s, name := v.s, c.Venue
	list := cancelable(s.eng.remotes[name], c.Symbol, c.Side)
	return func() func() {
		ids, detail := s.cancelEach(name, list, "mass_cancel")
		return func() {
			v.out.Canceled, v.out.Detail = ids, fmt.Sprintf("canceled %d order(s) on %s%s", len(ids), name, detail)
		}
	}
}

func (v *remoteVerbs) flatten(c command.Command) laneCall {
	s, name := v.s, c.Venue
	list := s.closing(name, flattenSymbols(s.eng.remotes[name], c), "flatten")
	return func() func() {
		var ids []string
		var detail string
		ids, detail, v.err = s.placeEach(name, list, v.id)
		return func() {
			v.out.OrderIDs, v.out.Detail = ids, fmt.Sprintf("sent %d closing order(s) on %s%s", len(ids), name, detail)
		}
	}
}

// marketExit exits one real venue (market_exit over every venue is
// exitEverywhere's, each real venue's part exitVenue).
func (v *remoteVerbs) marketExit(c command.Command) laneCall {
	s, name := v.s, c.Venue
	return func() func() {
		p := s.exitVenue(name, v.id)
		v.err = p.err
		return func() {
			v.out.Canceled, v.out.OrderIDs = p.canceled, p.ids
			v.out.Detail = fmt.Sprintf("canceled %d order(s) and flattened %d position(s)", len(p.canceled), len(p.ids)) + p.detail
			if p.skipped {
				v.out.Detail += fmt.Sprintf("; skipped disarmed venue(s) [%s]: %s", name, disarmedReason(name))
			}
		}
	}
}
