package server

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"wicket/node"
	"wicket/node/command"
	"wicket/node/journal"
)

// Real venues are driven off the fold, each on its own lane (lanes.go).
// A command to a real venue is queued on its venue's lane when it arrives.
// At its turn a hop to the fold checks it against the node's rules and
// state as they are then, and commits its intent (a submit's order,
// pending; a cancel's or modify's audit entry, pending) to the journal
// before the venue hears of it; the lane calls the venue, bounded by
// VenueTimeout; and a last hop applies the answer, commits it and resolves
// the ticket. Commands to one venue are checked, sent and settled in the
// order they arrived, each after the answer to the one before is applied,
// so no two of them pass a limit only one passes; meanwhile the fold
// answers snapshots, dry-runs, paper venues and the other real venues. An
// answer that never comes leaves the order and the ticket pending; it is
// never resent, and reconciliation by client order id (at start, after
// every stream reconnect, and once the timeout has passed) adopts the
// order or proves it absent, and settles the ticket.

// touchesRemote reports whether c writes to a real venue.
func (e *engine) touchesRemote(c command.Command) bool {
	if c.Verb == command.SetTradingState {
		return false
	}
	if c.Venue == "" {
		return c.Verb == command.MarketExit && len(e.remotes) > 0
	}
	return e.remotes[c.Venue] != nil
}

// venueCall is the context of one call to a real venue.
func (s *Server) venueCall() (context.Context, context.CancelFunc) {
	return context.WithTimeout(s.calls, s.cfg.VenueTimeout)
}

// pendingAdvice is what a pending real-venue order's detail ends with.
const pendingAdvice = "the node never resends it and reconciles it by client order id; " + node.PendingAdvice

// applyRemote queues a command that writes to a real venue on that
// venue's lane, on the fold; market_exit over every venue goes to every
// real venue's lane (exitEverywhere).
func (s *Server) applyRemote(id, keyID string, c command.Command, reason string, now time.Time) {
	if c.Venue == "" {
		s.exitEverywhere(id, keyID, c, reason, now)
		return
	}
	drop := func() {
		s.log.Info("command dropped: the node stopped before its turn at the venue; nothing was sent", "ticket", id, "venue", c.Venue,
			"verb", string(c.Verb), "client_order_id", c.ClientOrderID)
		s.tickets.resolve(id, stoppedOutcome(c, s.cfg.Now()))
	}
	queued := func(ahead int) {
		if ahead > 0 {
			s.tickets.note(id, fmt.Sprintf("waiting for its turn at %s behind %d command(s); it is checked and sent then, and nothing has been sent yet", c.Venue, ahead))
		}
	}
	switch s.lanes[c.Venue].command(func() { s.runRemote(id, keyID, c, reason) }, drop, c.Verb == command.MarketExit, queued) {
	case "busy":
		out := node.Outcome{Status: node.Rejected, Verb: c.Verb, ClientOrderID: c.ClientOrderID, Time: now, Code: "venue_busy", Reason: busyReason(c.Venue)}
		s.finishRemote(id, keyID, c, reason, out, false)
	case "stopping":
		s.tickets.resolve(id, stoppedOutcome(c, now))
	}
}

// stoppedOutcome is the ticket of a command the node stopped before its
// turn at the venue.
func stoppedOutcome(c command.Command, now time.Time) node.Outcome {
	return node.Outcome{Status: node.Rejected, Verb: c.Verb, ClientOrderID: c.ClientOrderID, Time: now, Code: "stopping",
		Reason: "the node stopped before the command's turn at " + c.Venue + ": nothing was sent; send it again once the node is back"}
}

// journalRefusal is the outcome of a command one of whose orders could
// not be journaled, so was not sent; the engine has been rebuilt from the
// journal.
func journalRefusal(c command.Command, now time.Time, err error) node.Outcome {
	return node.Outcome{Status: node.Rejected, Verb: c.Verb, ClientOrderID: c.ClientOrderID, Time: now, Code: "journal",
		Reason: "the journal could not record an order before sending it, so that order was not sent (any sent before it by this command are in node_snapshot): " + err.Error()}
}

// runRemote is a command's turn on its venue's lane: a hop to check it
// and journal its intent (dispatch on remoteVerbs), the venue's calls, a
// hop to apply the answer.
func (s *Server) runRemote(id, keyID string, c command.Command, reason string) {
	v := &remoteVerbs{s: s, id: id, keyID: keyID, reason: reason}
	var call laneCall
	s.tickets.note(id, "") // no longer waiting for its turn
	s.onFold(func() {
		now := s.cfg.Now()
		if s.refused(id, c, now) {
			return
		}
		v.out = node.Outcome{Status: node.Accepted, Verb: c.Verb, ClientOrderID: c.ClientOrderID, Time: now}
		s.eng.risk.origin, s.eng.risk.key = deploymentOf(reason), keyID
		_, r := s.eng.admit(c)
		s.eng.risk.origin, s.eng.risk.key = "", ""
		if r != nil {
			v.out.Status, v.out.Code, v.out.Reason, v.out.ExistingOrder = node.Rejected, r.code, r.reason, r.existing
			s.finishRemote(id, keyID, c, reason, v.out, false)
			return
		}
		call = dispatch(c, v)
	})
	if call == nil {
		return
	}
	answer := call()
	s.onFold(func() {
		answer()
		if v.err != nil {
			v.out = journalRefusal(c, v.out.Time, v.err)
		}
		s.finishRemote(id, keyID, c, reason, v.out, v.written)
	})
}

// mustExternal is the external order a cancel names (check found it).
func (e *engine) mustExternal(name, clientOrderID string) node.Order {
	x, _ := e.external(name, clientOrderID)
	return x
}

// cancelable lists r's open orders a cancel of symbol and side (empty:
// any) reaches.
func cancelable(r *remote, symbol string, side command.Side) []node.Order {
	var out []node.Order
	for _, o := range r.OpenOrders() {
		if o.Status == node.OrderOpen && (symbol == "" || o.Symbol == symbol) && (side == "" || o.Side == side) {
			out = append(out, o)
		}
	}
	return out
}

// closing is closingOrders on a real venue, each with a client order id.
func (s *Server) closing(name string, symbols []string, note string) []node.Order {
	orders := closingOrders(s.eng.remotes[name], symbols, note)
	for i := range orders {
		orders[i].ClientOrderID = "wk-" + s.cfg.NewID()
	}
	return orders
}

// current is order o as r's book holds it now.
func current(r *remote, o node.Order) node.Order {
	if cur, ok := r.Order(o.ID); ok {
		return cur
	}
	return o
}

// commitStep commits the events the fold's current job emitted, on the
// fold; a fill makes the venue's account read again. On a failure the
// engine has been rebuilt from the journal, without them.
func (s *Server) commitStep(name string) error {
	events := s.eng.take()
	if len(events) == 0 {
		return nil
	}
	if err := s.commit(&journal.Batch{Events: events}); err != nil {
		return err
	}
	s.logFills(events)
	for _, ev := range events {
		if ev.Kind == node.EventFilled && name != "" {
			s.refreshLater(name)
			break
		}
	}
	s.exitsLater(name)
	return nil
}

// recordIntent commits a cancel's or modify's audit entry, pending, before
// the venue hears of it, so a node that dies during the call still knows
// the ticket and reconciliation settles it. When the journal cannot record
// it, out says so and the venue is not called.
func (s *Server) recordIntent(id, keyID string, c command.Command, reason string, o node.Order, out *node.Outcome) bool {
	pending := node.Outcome{Ticket: id, Status: node.Pending, Verb: c.Verb, ClientOrderID: o.ClientOrderID, OrderID: o.ID, Order: &o,
		Time: out.Time, TradingState: s.eng.state,
		Detail: fmt.Sprintf("%s of %s was sent to %s and its answer is not recorded: the ticket settles when it is, or by reconciliation; %s", c.Verb, o.ID, c.Venue, pendingAdvice)}
	entry := node.AuditEntry{Time: out.Time, Ticket: id, KeyID: keyID, Command: c, Reason: reason, ClientOrderID: o.ClientOrderID, Outcome: pending}
	if err := s.commit(&journal.Batch{Entry: &entry, Events: s.eng.take()}); err != nil {
		*out = node.Outcome{Status: node.Rejected, Verb: c.Verb, ClientOrderID: c.ClientOrderID, Time: out.Time, Code: "journal",
			Reason: fmt.Sprintf("the journal could not record the %s before sending it, so it was not sent: %v", c.Verb, err)}
		return false
	}
	s.eng.await(entry)
	return true
}

// finishRemote journals the command's audit entry with every event not yet
// committed, and resolves its ticket. When the entry was committed pending
// before the venue call (written), the answer settles it instead, unless
// the answer is still unknown.
func (s *Server) finishRemote(id, keyID string, c command.Command, reason string, out node.Outcome, written bool) {
	out.Ticket, out.TradingState = id, s.eng.state
	entry := &node.AuditEntry{Time: out.Time, Ticket: id, KeyID: keyID, Command: c, Reason: reason, ClientOrderID: out.ClientOrderID, Outcome: out}
	events := s.eng.take()
	filled := false
	for _, ev := range events {
		filled = filled || ev.Kind == node.EventFilled
	}
	if filled && c.Venue != "" {
		defer s.refreshLater(c.Venue) // the next checks see the new position
	}
	b := &journal.Batch{Entry: entry, Events: events}
	if written {
		b.Entry = nil
		if out.Status != node.Pending {
			b.Settle = []node.Outcome{out}
		}
	}
	if err := s.commit(b); err != nil {
		out = node.Outcome{Ticket: id, Status: node.Pending, Verb: c.Verb, ClientOrderID: c.ClientOrderID, Time: out.Time, Code: "journal",
			Detail: "the venue was called but the journal could not record its answer (" + err.Error() + "); the node reconciles at its next start; " + pendingAdvice}
	} else if written && out.Status != node.Pending {
		delete(s.eng.unsettled, id)
	} else if !written && out.Status == node.Pending {
		s.eng.await(*entry)
	}
	s.logFills(events)
	s.exitsLater(c.Venue)
	s.log.Info("command", "ticket", id, "key_id", keyID, "verb", string(c.Verb), "venue", c.Venue, "client_order_id", out.ClientOrderID,
		"status", string(out.Status), "code", out.Code, "detail", out.Detail)
	s.tickets.resolve(id, out)
}

func (s *Server) logFills(events []node.Event) {
	for _, ev := range events {
		if ev.Kind == node.EventFilled {
			s.log.Info("fill", "venue", ev.Venue, "order_id", ev.OrderID, "client_order_id", ev.ClientOrderID,
				"side", string(ev.Side), "quantity", ev.Quantity.String(), "symbol", ev.Symbol, "price", ev.Price.String())
		}
	}
}

// describeRemote fills the outcome from the order's state after the call.
func (s *Server) describeRemote(out *node.Outcome, o node.Order) {
	s.eng.describeOrder(out, o.Venue, o.ID)
	switch o.Status {
	case node.OrderPending:
		out.Status = node.Pending
		out.Detail = fmt.Sprintf("%s %s %s %s %s was sent to %s but its answer did not arrive; the order is pending and %s",
			o.ID, o.Type, o.Side, o.Quantity, o.Symbol, o.Venue, pendingAdvice)
	case node.OrderFailed:
		out.Status, out.Code, out.Reason = node.Rejected, "venue_rejected", o.Note
	case node.OrderOpen:
		if o.Filled.IsPositive() {
			out.Detail = fmt.Sprintf("%s %s %s %s %s partly filled: %s at %s, %s still open", o.ID, o.Type, o.Side, o.Quantity, o.Symbol,
				o.Filled, o.AveragePrice, o.Remaining())
		}
	}
}

// cancelCall asks the venue to cancel an order the node did not place,
// because the command named it (x, from the venue's open orders).
func (s *Server) cancelCall(name string, x node.Order) (node.VenueOrder, error) {
	ctx, cancel := s.venueCall()
	defer cancel()
	return s.cfg.Exchanges[name].Cancel(ctx, node.VenueOrder{ClientOrderID: x.ClientOrderID, VenueOrderID: x.VenueOrderID, Symbol: x.Symbol})
}

// externalCanceled applies the answer to cancelCall, on the fold. The book
// does not hold an external order, so nothing is journaled but the
// command's audit entry.
func (s *Server) externalCanceled(name string, x node.Order, vo node.VenueOrder, err error, out *node.Outcome) {
	switch {
	case err == nil:
		if r := s.eng.remotes[name]; r != nil {
			s.eng.observe(r, vo, nil, s.cfg.Now())
		}
		out.Detail = fmt.Sprintf("external order %s (%s at %s) canceled because the command named it", x.ClientOrderID, x.VenueOrderID, name)
	case errors.Is(err, node.ErrVenueRejected), errors.Is(err, node.ErrVenueNotFound):
		out.Status, out.Code, out.Reason = node.Rejected, "venue_rejected", command.SanitizeReason(err.Error())
	default:
		out.Status, out.Detail = node.Pending, "the cancel of external order "+x.ClientOrderID+" was sent but its answer was lost; "+pendingAdvice
	}
}

// placeIntent journals a new pending order, on the fold, before the venue
// hears of it.
func (s *Server) placeIntent(name string, o node.Order, ticket string) (node.Order, error) {
	e := s.eng
	now := s.cfg.Now()
	o.ID, o.Venue, o.Status, o.Created, o.Updated = e.nextOrderID(), name, node.OrderPending, now, now
	if o.TimeInForce == "" {
		o.TimeInForce = command.GTC
	}
	acc := o
	e.emit(node.Event{Time: now, Kind: node.EventAccepted, Venue: name, OrderID: o.ID, ClientOrderID: o.ClientOrderID,
		Symbol: o.Symbol, Side: o.Side, Quantity: o.Quantity, Price: o.Price, Order: &acc, Ticket: ticket, Note: o.Note})
	return o, s.commit(&journal.Batch{Events: e.take()})
}

// submitCall sends a journaled order to the venue, once, from its lane.
func (s *Server) submitCall(name string, o node.Order) (node.VenueOrder, error) {
	ctx, cancel := s.venueCall()
	defer cancel()
	return s.cfg.Exchanges[name].Submit(ctx, orderOf(o).request())
}

// applySubmit applies the venue's answer to order o, on the fold, and
// returns the order as it is now; the events are left for the caller to
// commit.
func (s *Server) applySubmit(name string, o node.Order, vo node.VenueOrder, err error) node.Order {
	e := s.eng
	r := e.remotes[name]
	o = current(r, o)
	now := s.cfg.Now()
	switch {
	case o.Status != node.OrderPending: // a rebuilt engine reconciled it meanwhile
	case err == nil:
		e.settle(r, o, vo, "accepted by "+name, now)
	case errors.Is(err, node.ErrVenueRejected):
		e.emit(node.Event{Time: now, Kind: node.EventFailed, Venue: name, OrderID: o.ID, ClientOrderID: o.ClientOrderID,
			Symbol: o.Symbol, Side: o.Side, Note: command.SanitizeReason(err.Error())})
	default:
		s.log.Warn("venue answer lost: the order stays pending and is reconciled, never resent", "venue", name,
			"order_id", o.ID, "client_order_id", o.ClientOrderID, "err", err)
		s.reconcileLater(name)
	}
	return current(r, o)
}

// placeRemote journals a new pending order, then sends it to the venue,
// once, and applies the answer: on the lane, with hops to the fold.
func (s *Server) placeRemote(name string, o node.Order, ticket string) (node.Order, error) {
	var err error
	s.onFold(func() { o, err = s.placeIntent(name, o, ticket) })
	if err != nil {
		return o, err
	}
	vo, verr := s.submitCall(name, o)
	s.onFold(func() {
		o = s.applySubmit(name, o, vo, verr)
		s.commitStep(name) //nolint:errcheck // a failure rebuilt the engine, which reconciles
	})
	return o, nil
}

// venueOutcome tells a cancel or modify the venue did not confirm: refused
// (the order as the venue now shows it, in the reason), or its answer lost
// (pending).
func venueOutcome(out *node.Outcome, o node.Order, verr error) {
	switch {
	case verr == nil:
	case errors.Is(verr, node.ErrVenueUnknown) && o.Note != "" && strings.Contains(o.Note, "shows the order replaced"):
		out.Detail += "; " + o.Note
	case errors.Is(verr, node.ErrVenueUnknown):
		out.Status, out.Detail = node.Pending, o.Note+"; "+pendingAdvice
	default:
		out.Status, out.Code, out.Reason = node.Rejected, "venue_rejected", fmt.Sprintf("%s; the order is now %s", o.Note, o.Status)
	}
}

// cancelRemote cancels one node order at the venue and returns it with
// the venue's error, if any: on the lane, with hops to the fold. A refusal
// is looked up, so the book follows the venue's truth (it may have
// filled).
func (s *Server) cancelRemote(name string, o node.Order, note string) (node.Order, error) {
	if heldByNode(o) { // the venue never heard of it
		var cur node.Order
		s.onFold(func() {
			e := s.eng
			r := e.remotes[name]
			if now := current(r, o); now.Status == node.OrderOpen {
				e.emit(node.Event{Time: s.cfg.Now(), Kind: node.EventCanceled, Venue: name, OrderID: o.ID, ClientOrderID: o.ClientOrderID,
					Symbol: o.Symbol, Side: o.Side, Quantity: now.Remaining(), Note: note})
				s.commitStep(name) //nolint:errcheck // a failure rebuilt the engine, which reconciles
			}
			cur = current(r, o)
		})
		return cur, nil
	}
	ctx, cancel := s.venueCall()
	vo, err := s.cfg.Exchanges[name].Cancel(ctx, orderOf(o).venueOrder())
	cancel()
	refused := errors.Is(err, node.ErrVenueRejected) || errors.Is(err, node.ErrVenueNotFound)
	if refused {
		s.lookupAndSettle(name, o)
	}
	var cur node.Order
	s.onFold(func() {
		r := s.eng.remotes[name]
		switch {
		case err == nil:
			if vo.Reason == "" {
				vo.Reason = note // the cancel's own reason, in its event's note
			}
			s.eng.settle(r, current(r, o), vo, note, s.cfg.Now())
			if cur := current(r, o); cur.Leg == command.LegEntry && cur.Status == node.OrderCanceled { // its kept exits go with it
				s.cancelKept(r, o.ID, fmt.Sprintf("its entry %s was canceled (%s), so it was never sent", o.ID, note))
			}
			s.commitStep(name) //nolint:errcheck // a failure rebuilt the engine, which reconciles
		case !refused:
			s.log.Warn("venue answer to a cancel lost; reconciling", "venue", name, "order_id", o.ID, "err", err)
			s.reconcileLater(name)
		}
		cur = current(r, o)
	})
	if err != nil {
		cur.Note = "the cancel did not take effect: " + command.SanitizeReason(err.Error())
	}
	return cur, err
}

// modifyRemote replaces an open order at the venue: on the lane, with
// hops to the fold.
func (s *Server) modifyRemote(name string, o node.Order, c command.Command) (node.Order, error) {
	ch := replacementOf(c)
	ctx, cancel := s.venueCall()
	vo, err := s.cfg.Exchanges[name].Replace(ctx, orderOf(o).venueOrder(), ch)
	cancel()
	if err != nil {
		s.lookupAndSettle(name, o)
	}
	var cur node.Order
	s.onFold(func() {
		e := s.eng
		r := e.remotes[name]
		if err == nil {
			now := s.cfg.Now()
			ev := node.Event{Time: now, Kind: node.EventModified, Venue: name, OrderID: o.ID, ClientOrderID: o.ClientOrderID,
				Symbol: o.Symbol, Side: o.Side, Quantity: ch.Quantity, Price: ch.Price, StopPrice: ch.StopPrice,
				TrailAmount: ch.TrailAmount, TrailPercent: ch.TrailPercent, VenueOrderID: vo.VenueOrderID}
			e.emit(ev)
			if o.Type == command.TrailingStop && vo.StopPrice.IsPositive() { // the venue trails it: its stop is the venue's
				ev.Seq, ev.Quantity, ev.Price, ev.TrailAmount, ev.TrailPercent, ev.StopPrice = 0, decimal.Zero, decimal.Zero, decimal.Zero, decimal.Zero, vo.StopPrice
				ev.Note = "the venue's stop for the new trail"
				e.emit(ev)
			}
			e.settle(r, current(r, o), vo, "modified", now)
			s.commitStep(name) //nolint:errcheck // a failure rebuilt the engine, which reconciles
		}
		cur = current(r, o)
		switch {
		case err == nil:
		case cur.VenueOrderID != o.VenueOrderID:
			cur.Note = "the modify's answer was lost, but the venue shows the order replaced: " + command.SanitizeReason(err.Error())
		case errors.Is(err, node.ErrVenueUnknown):
			cur.Note = "the modify's answer was lost and the venue shows no replacement yet; it is not resent, and the node reconciles: " + command.SanitizeReason(err.Error())
			s.reconcileLater(name)
		default:
			cur.Note = "the modify did not take effect: " + command.SanitizeReason(err.Error())
		}
	})
	return cur, err
}

// replacementOf is what modify c changes, as the venue's replace takes it:
// a limit's price or a stop_limit's limit_price as Price.
func replacementOf(c command.Command) node.Replacement {
	return node.Replacement{Quantity: c.Quantity, Price: c.Price.Add(c.LimitPrice), StopPrice: c.StopPrice, TrailAmount: c.TrailAmount, TrailPercent: c.TrailPercent}
}

// lookupAndSettle reads one order back from the venue (a bounded, retried
// read) and applies what it says: on the lane, with a hop to the fold.
func (s *Server) lookupAndSettle(name string, o node.Order) {
	ctx, cancel := s.venueCall()
	vo, err := s.cfg.Exchanges[name].Lookup(ctx, orderOf(o).venueOrder())
	cancel()
	if err != nil {
		return
	}
	s.onFold(func() {
		r := s.eng.remotes[name]
		s.eng.settle(r, current(r, o), vo, "looked up at the venue", s.cfg.Now())
		s.commitStep(name) //nolint:errcheck // a failure rebuilt the engine, which reconciles
	})
}
