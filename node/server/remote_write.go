package server

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"wicket/node"
	"wicket/node/command"
	"wicket/node/journal"
)

// Real venues are driven from the fold like everything else: a command's
// intent (a submit's order, pending; a cancel's or modify's audit entry,
// pending) is committed to the journal before the venue hears of it, the
// venue call is bounded by VenueTimeout, and its answer is committed before
// the ticket resolves. An answer that never comes leaves the order and the
// ticket pending; it is never resent, and reconciliation by client order id
// (at start, after every stream reconnect, and once the timeout has passed)
// adopts the order or proves it absent, and settles the ticket.

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
	return context.WithTimeout(s.bg, s.cfg.VenueTimeout)
}

// pendingAdvice is what a pending real-venue order's detail ends with.
const pendingAdvice = "the node never resends it and reconciles it by client order id; " + node.PendingAdvice

// applyRemote runs a command that writes to a real venue, on the fold.
func (s *Server) applyRemote(id, keyID string, c command.Command, reason string, now time.Time) {
	e := s.eng
	out := node.Outcome{Status: node.Accepted, Verb: c.Verb, ClientOrderID: c.ClientOrderID, Time: now}
	if _, r := e.check(c); r != nil {
		out.Status, out.Code, out.Reason, out.ExistingOrder = node.Rejected, r.code, r.reason, r.existing
		s.finishRemote(id, keyID, c, reason, out, false)
		return
	}
	var err error
	written := false // the audit entry was committed pending before the call
	switch c.Verb {
	case command.SubmitOrder:
		err = s.submitRemote(c, id, &out)
	case command.CancelOrder:
		o, ok := e.find(c.Venue, c.OrderID, c.ClientOrderID)
		if !ok {
			s.cancelExternal(c.Venue, c.ClientOrderID, &out)
			break
		}
		if !s.recordIntent(id, keyID, c, reason, o, &out) {
			break
		}
		written = true
		if o.Group != "" { // one leg names its group: every leg is canceled
			vo, canceled, verr := s.cancelGroupRemote(c.Venue, o, "canceled by cancel_order ("+o.Group+")")
			s.describeRemote(&out, vo)
			venueOutcome(&out, vo, verr)
			out.Canceled = canceled
			out.Detail = fmt.Sprintf("canceled group %s: %s; %s", o.Group, strings.Join(canceled, ", "), out.Detail)
			break
		}
		vo, verr := s.cancelRemote(c.Venue, o, "canceled by cancel_order")
		s.describeRemote(&out, vo)
		venueOutcome(&out, vo, verr)
	case command.Modify:
		o, _ := e.find(c.Venue, c.OrderID, c.ClientOrderID)
		if heldByNode(o) {
			out.Status, out.Code = node.Rejected, "held_by_node"
			out.Reason = fmt.Sprintf("order %s is a trigger the node holds for %s (the venue cannot hold it): cancel it and submit a new one to move it", o.ID, c.Venue)
			break
		}
		if !s.recordIntent(id, keyID, c, reason, o, &out) {
			break
		}
		written = true
		vo, verr := s.modifyRemote(c.Venue, o, c)
		s.describeRemote(&out, vo)
		venueOutcome(&out, vo, verr)
	case command.MassCancel:
		out.Canceled, err = s.cancelWhereRemote(c.Venue, c.Symbol, c.Side, "mass_cancel", &out)
		out.Detail = fmt.Sprintf("canceled %d order(s) on %s%s", len(out.Canceled), c.Venue, out.Detail)
	case command.Flatten:
		out.OrderIDs, err = s.flattenRemote(c.Venue, flattenSymbols(s.eng.remotes[c.Venue], c), "flatten", id, &out)
		out.Detail = fmt.Sprintf("sent %d closing order(s) on %s%s", len(out.OrderIDs), c.Venue, out.Detail)
	case command.MarketExit:
		err = s.marketExit(c, id, now, &out)
	}
	if err != nil {
		// An order's intent could not be journaled, so that order was not
		// sent; the engine has been rebuilt from the journal.
		out = node.Outcome{Status: node.Rejected, Verb: c.Verb, ClientOrderID: c.ClientOrderID, Time: now, Code: "journal",
			Reason: "the journal could not record an order before sending it, so that order was not sent (any sent before it by this command are in node_snapshot): " + err.Error()}
	}
	s.finishRemote(id, keyID, c, reason, out, written)
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

// cancelExternal cancels an order the node did not place, because the
// command named it. The book does not hold it, so nothing is journaled
// but the command's audit entry.
func (s *Server) cancelExternal(name, clientOrderID string, out *node.Outcome) {
	r := s.eng.remotes[name]
	x, _ := s.eng.external(name, clientOrderID)
	ctx, cancel := s.venueCall()
	vo, err := r.ex.Cancel(ctx, node.VenueOrder{ClientOrderID: x.ClientOrderID, VenueOrderID: x.VenueOrderID, Symbol: x.Symbol})
	cancel()
	switch {
	case err == nil:
		s.eng.observe(r, vo, nil, s.cfg.Now())
		out.Detail = fmt.Sprintf("external order %s (%s at %s) canceled because the command named it", clientOrderID, x.VenueOrderID, name)
	case errors.Is(err, node.ErrVenueRejected), errors.Is(err, node.ErrVenueNotFound):
		out.Status, out.Code, out.Reason = node.Rejected, "venue_rejected", command.SanitizeReason(err.Error())
	default:
		out.Status, out.Detail = node.Pending, "the cancel of external order "+clientOrderID+" was sent but its answer was lost; "+pendingAdvice
	}
}

// placeRemote journals a new pending order, then sends it to the venue,
// once, and applies the answer.
func (s *Server) placeRemote(name string, o node.Order, ticket string) (node.Order, error) {
	e := s.eng
	r := e.remotes[name]
	now := s.cfg.Now()
	o.ID, o.Venue, o.Status, o.Created, o.Updated = e.nextOrderID(), name, node.OrderPending, now, now
	if o.TimeInForce == "" {
		o.TimeInForce = command.GTC
	}
	acc := o
	e.emit(node.Event{Time: now, Kind: node.EventAccepted, Venue: name, OrderID: o.ID, ClientOrderID: o.ClientOrderID,
		Symbol: o.Symbol, Side: o.Side, Quantity: o.Quantity, Price: o.Price, Order: &acc, Ticket: ticket, Note: o.Note})
	if err := s.commit(&journal.Batch{Events: e.take()}); err != nil {
		return o, err
	}
	ctx, cancel := s.venueCall()
	vo, err := r.ex.Submit(ctx, orderOf(o).request())
	cancel()
	now = s.cfg.Now()
	switch {
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
	cur, _ := r.Order(o.ID)
	return cur, nil
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
// the venue's error, if any. A refusal is looked up, so the book follows
// the venue's truth (it may have filled).
func (s *Server) cancelRemote(name string, o node.Order, note string) (node.Order, error) {
	e := s.eng
	r := e.remotes[name]
	if heldByNode(o) { // the venue never heard of it
		e.emit(node.Event{Time: s.cfg.Now(), Kind: node.EventCanceled, Venue: name, OrderID: o.ID, ClientOrderID: o.ClientOrderID,
			Symbol: o.Symbol, Side: o.Side, Quantity: o.Remaining(), Note: note})
		cur, _ := r.Order(o.ID)
		return cur, nil
	}
	ctx, cancel := s.venueCall()
	vo, err := r.ex.Cancel(ctx, orderOf(o).venueOrder())
	cancel()
	switch {
	case err == nil:
		if vo.Reason == "" {
			vo.Reason = note // the cancel's own reason, in its event's note
		}
		e.settle(r, o, vo, note, s.cfg.Now())
	case errors.Is(err, node.ErrVenueRejected), errors.Is(err, node.ErrVenueNotFound):
		s.lookupAndSettle(r, o)
	default:
		s.log.Warn("venue answer to a cancel lost; reconciling", "venue", name, "order_id", o.ID, "err", err)
		s.reconcileLater(name)
	}
	cur, _ := r.Order(o.ID)
	if err != nil {
		cur.Note = "the cancel did not take effect: " + command.SanitizeReason(err.Error())
	}
	return cur, err
}

// modifyRemote replaces an open order at the venue.
func (s *Server) modifyRemote(name string, o node.Order, c command.Command) (node.Order, error) {
	e := s.eng
	r := e.remotes[name]
	ctx, cancel := s.venueCall()
	vo, err := r.ex.Replace(ctx, orderOf(o).venueOrder(), c.Quantity, c.Price)
	cancel()
	now := s.cfg.Now()
	if err == nil {
		e.emit(node.Event{Time: now, Kind: node.EventModified, Venue: name, OrderID: o.ID, ClientOrderID: o.ClientOrderID,
			Symbol: o.Symbol, Side: o.Side, Quantity: c.Quantity, Price: c.Price, VenueOrderID: vo.VenueOrderID})
		cur, _ := r.Order(o.ID)
		e.settle(r, cur, vo, "modified", now)
	} else {
		s.lookupAndSettle(r, o)
	}
	cur, _ := r.Order(o.ID)
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
	return cur, err
}

// lookupAndSettle reads one order back from the venue (a bounded, retried
// read) and applies what it says.
func (s *Server) lookupAndSettle(r *remote, o node.Order) {
	ctx, cancel := s.venueCall()
	vo, err := r.ex.Lookup(ctx, orderOf(o).venueOrder())
	cancel()
	if err == nil {
		s.eng.settle(r, o, vo, "looked up at the venue", s.cfg.Now())
	}
}

func (s *Server) cancelWhereRemote(name, symbol string, side command.Side, note string, out *node.Outcome) ([]string, error) {
	r := s.eng.remotes[name]
	var ids []string
	failed := 0
	for _, o := range r.OpenOrders() {
		if o.Status != node.OrderOpen || (symbol != "" && o.Symbol != symbol) || (side != "" && o.Side != side) {
			continue
		}
		cur, _ := s.cancelRemote(name, o, "canceled by "+note) // a refusal or lost answer is counted below
		if cur.Status == node.OrderCanceled {
			ids = append(ids, o.ID)
		} else {
			failed++
		}
	}
	if failed > 0 {
		out.Detail += fmt.Sprintf("; %d cancel(s) not confirmed by the venue (see node_snapshot)", failed)
	}
	return ids, nil
}

// flattenRemote sends a market order against each listed position.
func (s *Server) flattenRemote(name string, symbols []string, note, ticket string, out *node.Outcome) ([]string, error) {
	r := s.eng.remotes[name]
	var ids []string
	pending := 0
	for _, o := range closingOrders(r, symbols, note) {
		o.ClientOrderID = "wk-" + s.cfg.NewID()
		o, err := s.placeRemote(name, o, ticket)
		if err != nil {
			return ids, err
		}
		ids = append(ids, o.ID)
		if o.Status == node.OrderPending {
			pending++
		}
	}
	if pending > 0 {
		out.Detail += fmt.Sprintf("; %d closing order(s) pending at the venue: %s", pending, pendingAdvice)
	}
	return ids, nil
}

// marketExit cancels and flattens on one real venue, or on every venue
// (skipping disarmed real ones, and saying so).
func (s *Server) marketExit(c command.Command, ticket string, now time.Time, out *node.Outcome) error {
	names := []string{c.Venue}
	if c.Venue == "" {
		names = s.eng.names
	}
	var skipped []string
	var extra string
	for _, name := range names {
		if s.eng.remotes[name] == nil {
			continue
		}
		if !s.eng.armed(name, now) {
			skipped = append(skipped, name)
			continue
		}
		canceled, err := s.cancelWhereRemote(name, "", "", "market_exit", out)
		if err != nil {
			return err
		}
		ids, err := s.flattenRemote(name, s.eng.remotes[name].Held(), "market_exit", ticket, out)
		if err != nil {
			return err
		}
		out.Canceled, out.OrderIDs = append(out.Canceled, canceled...), append(out.OrderIDs, ids...)
	}
	extra, out.Detail = out.Detail, ""
	if c.Venue == "" {
		paperOut := s.eng.execute(c, now) // the paper venues
		out.Canceled, out.OrderIDs = append(out.Canceled, paperOut.Canceled...), append(out.OrderIDs, paperOut.OrderIDs...)
	}
	out.Detail = fmt.Sprintf("canceled %d order(s) and flattened %d position(s)", len(out.Canceled), len(out.OrderIDs)) + extra
	if len(skipped) > 0 {
		out.Detail += fmt.Sprintf("; skipped disarmed venue(s) %v: %s", skipped, disarmedReason(skipped[0]))
	}
	return nil
}
