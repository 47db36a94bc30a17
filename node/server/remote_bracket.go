package server

import (
	"errors"
	"fmt"
	"time"

	"wicket/node"
	"wicket/node/command"
	"wicket/node/journal"
)

// Brackets at real venues. A venue that takes a bracket as one order
// (Alpaca's order_class bracket) gets one request: its three legs are
// journaled pending first, the exits inactive and marked sent with it
// (order_sent), and the one answer settles each. A venue that takes a
// bracket's exits only once its entry has filled (Binance spot:
// node.HoldAfterEntry) gets the entry alone; its exits are journaled
// beside it, pending and kept by the node (keptExit: never looked up at
// the venue, never sent). Once the entry is done — filled in full, or
// ended after a partial fill — the exits are sized to what filled (the
// book does that on each fill) and sent as one oco: their order_sent
// events are committed first, so a node killed at any point either never
// sent them (they are still kept, and sent at its restart) or finds them
// at the venue by their client order ids, which derive from the group's,
// when it reconciles (or proves them absent: failed, never resent, and
// the position is flagged unprotected with the reason). An entry that
// ends with nothing filled takes its kept exits with it; so does a cancel
// of the entry by a command.

// keptExit reports whether o is a bracket's exit the node keeps, unsent,
// until its entry fills.
func (r *remote) keptExit(o node.Order) bool {
	_, sent := r.sent[o.ID]
	return o.Parent != "" && o.Status == node.OrderPending && !sent
}

// sentAt is when pending order o was sent to the venue: its creation, or
// for a bracket's exit its order_sent.
func (r *remote) sentAt(o node.Order) time.Time {
	if at, ok := r.sent[o.ID]; ok {
		return at
	}
	return o.Created
}

// waiting reports whether o is a bracket's exit that does not work yet at
// the venue: kept by the node, or held by the venue while its entry works
// (Alpaca holds the legs until the entry has filled in full).
func (r *remote) waiting(o node.Order) bool {
	if r.keptExit(o) {
		return true
	}
	entry, ok := r.Order(o.Parent)
	return o.Parent != "" && o.Status.Working() && ok && entry.Status.Working()
}

// keptOf lists the exits of group that the node keeps, in placement order.
func (r *remote) keptOf(group string) []node.Order {
	var out []node.Order
	for _, o := range r.OpenOrders() {
		if o.Parent == group && r.keptExit(o) {
			out = append(out, o)
		}
	}
	return out
}

// keeps reports whether the node keeps exits of group.
func (r *remote) keeps(group string) bool { return len(r.keptOf(group)) > 0 }

// unprotectedWhy is the snapshot's reason for an open position of symbol
// that no protective order protects ("" for the default).
func (r *remote) unprotectedWhy(symbol string) string {
	for _, o := range r.OpenOrders() {
		if o.Symbol != symbol || o.Leg != command.LegEntry || !o.Filled.IsPositive() {
			continue
		}
		if r.keeps(o.ID) {
			return fmt.Sprintf("the entry %s of bracket %s is partly filled (%s of %s) and still working: %s takes the exits only once it is done, so the node sends them then, for what filled",
				o.ID, o.Group, o.Filled, o.Quantity, r.cfg.Name)
		}
		return fmt.Sprintf("the entry %s of bracket %s is partly filled (%s of %s) and still working: %s holds its exits until the entry has filled",
			o.ID, o.Group, o.Filled, o.Quantity, r.cfg.Name)
	}
	if why, ok := r.unguarded[symbol]; ok {
		return "no protective order is working; " + why
	}
	return ""
}

// exitsLater queues the placement of kept exits at venue name on its
// lane when an entry of theirs is done; on the fold. One waits at a time.
func (s *Server) exitsLater(name string) {
	r := s.eng.remotes[name]
	if r == nil || s.fault != nil {
		return
	}
	for _, o := range r.OpenOrders() {
		if r.keptExit(o) {
			if entry, ok := r.Order(o.Parent); !ok || !entry.Status.Working() {
				s.background(name, "exits", func() { s.placeExits(name) })
				return
			}
		}
	}
}

// exitsDue lists, per group, the kept exits whose entry is done with a
// fill, to be sent; the kept exits of an entry that ended with nothing
// filled are canceled (committed here). On the fold.
func (s *Server) exitsDue(name string) [][]node.Order {
	e := s.eng
	r := e.remotes[name]
	if r == nil || s.fault != nil {
		return nil
	}
	var due [][]node.Order
	seen := map[string]bool{}
	for _, o := range r.OpenOrders() {
		if !r.keptExit(o) || seen[o.Parent] {
			continue
		}
		seen[o.Parent] = true
		entry, ok := r.Order(o.Parent)
		switch {
		case ok && entry.Status.Working():
		case ok && entry.Filled.IsPositive():
			due = append(due, r.keptOf(o.Parent))
		default:
			s.cancelKept(r, o.Parent, fmt.Sprintf("its entry %s ended %s before it filled (%s): nothing to protect, so it was never sent", o.Parent, entry.Status, entry.Note))
		}
	}
	s.commitStep(name) //nolint:errcheck // a failure rebuilt the engine: the exits are still kept
	return due
}

// cancelKept cancels the exits of group the node keeps, on the fold; the
// events are left for the caller to commit.
func (s *Server) cancelKept(r *remote, group, note string) []string {
	var ids []string
	for _, o := range r.keptOf(group) {
		s.eng.emit(node.Event{Time: s.cfg.Now(), Kind: node.EventCanceled, Venue: r.cfg.Name, OrderID: o.ID, ClientOrderID: o.ClientOrderID,
			Symbol: o.Symbol, Side: o.Side, Quantity: o.Remaining(), Note: note})
		ids = append(ids, o.ID)
	}
	return ids
}

// placeExits sends each group of kept exits that is due as one oco, once:
// its order_sent events are committed on the fold before the call. On
// the venue's lane.
func (s *Server) placeExits(name string) {
	var due [][]node.Order
	s.onFold(func() { due = s.exitsDue(name) })
	for _, legs := range due {
		var sent []node.Order
		s.onFold(func() { sent = s.sendIntent(name, legs) })
		if len(sent) == 0 {
			continue
		}
		g := node.GroupRequest{Class: node.GroupOCO}
		for _, o := range sent {
			g.Legs = append(g.Legs, orderOf(o).request())
		}
		ctx, cancel := s.venueCall()
		answer, err := s.cfg.Exchanges[name].SubmitGroup(ctx, g)
		cancel()
		s.onFold(func() {
			s.applyExits(name, sent, answer, err)
			s.commitStep(name) //nolint:errcheck // a failure rebuilt the engine, which reconciles
		})
	}
}

// sendIntent commits the order_sent of each of legs still kept, on the
// fold, and returns them as they are now (sized to what the entry
// filled); none when they are no longer kept, or the journal refused.
func (s *Server) sendIntent(name string, legs []node.Order) []node.Order {
	e := s.eng
	r := e.remotes[name]
	if r == nil || s.fault != nil {
		return nil
	}
	now := s.cfg.Now()
	var out []node.Order
	for _, o := range legs {
		o = current(r, o)
		if !r.keptExit(o) {
			return nil
		}
		out = append(out, o)
	}
	entry, _ := r.Order(legs[0].Parent)
	for _, o := range out {
		e.emit(node.Event{Time: now, Kind: node.EventSent, Venue: name, OrderID: o.ID, ClientOrderID: o.ClientOrderID, Symbol: o.Symbol, Side: o.Side,
			Quantity: o.Quantity, Note: fmt.Sprintf("sent to %s with the other exit as one oco: entry %s filled %s", name, entry.ID, entry.Filled)})
	}
	if err := s.commit(&journal.Batch{Events: e.take()}); err != nil {
		s.log.Warn("bracket exits not sent: the journal could not record their sending; they stay kept", "venue", name, "group", entry.ID, "err", err)
		return nil
	}
	return out
}

// applyExits applies the venue's one answer to a bracket's exits, on the
// fold; the events are left for the caller to commit.
func (s *Server) applyExits(name string, legs []node.Order, answer []node.VenueOrder, err error) {
	e := s.eng
	r := e.remotes[name]
	now := s.cfg.Now()
	group := legs[0].Group
	switch {
	case err == nil && len(answer) == len(legs):
		for i, o := range legs {
			if o = current(r, o); o.Status == node.OrderPending {
				e.settle(r, o, answer[i], fmt.Sprintf("placed at %s as one oco once entry %s filled", name, group), now)
			}
		}
		s.log.Info("bracket exits placed", "venue", name, "group", group, "quantity", legs[0].Quantity.String())
	case errors.Is(err, node.ErrVenueRejected):
		for _, o := range legs {
			if o = current(r, o); o.Status == node.OrderPending {
				e.emit(node.Event{Time: now, Kind: node.EventFailed, Venue: name, OrderID: o.ID, ClientOrderID: o.ClientOrderID, Symbol: o.Symbol, Side: o.Side,
					Note: "the venue refused the bracket's exits, so what its entry filled is unprotected: " + command.SanitizeReason(err.Error())})
			}
		}
		s.log.Warn("bracket exits refused: the position is unprotected", "venue", name, "group", group, "err", err)
	default:
		s.log.Warn("venue answer to a bracket's exits lost: they stay pending and are reconciled, never resent", "venue", name, "group", group, "err", err)
		s.reconcileLater(name)
	}
}
