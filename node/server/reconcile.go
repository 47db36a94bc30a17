package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"wicket/node"
	"wicket/node/command"
	"wicket/node/guardrail"
	"wicket/node/journal"
)

// Reconciliation: reading a real venue's account, instruments and orders
// on its lane, applying what it says to the book on the fold, and settling
// the tickets whose answers were lost.

// reconcileLater reconciles a venue again once any request still in
// flight must have been answered or dropped.
func (s *Server) reconcileLater(name string) {
	time.AfterFunc(2*s.cfg.VenueTimeout, func() { s.reconcile(name, "a lost answer") })
}

// reconcile queues a reconciliation of the venue on its lane (one waits
// at a time: a second would read the same): it reads the venue's account,
// instruments and open orders, and settles every working node order by
// its client order id: found → adopted with its real state and fills;
// provably absent → failed. It never resubmits. Its reads begin once the
// venue's commands queued before it are answered, and the fold answers
// everything else meanwhile. It may be called from any goroutine.
func (s *Server) reconcile(name, why string) {
	s.background(name, "reconcile", func() { s.reconcileNow(name, why) })
}

// reconcileNow is a reconciliation's turn on the venue's lane.
func (s *Server) reconcileNow(name, why string) {
	var orders []node.Order
	var symbols []string
	needInstruments, ok := false, false
	s.onFold(func() {
		r := s.eng.remotes[name]
		if r == nil || s.fault != nil {
			return
		}
		ok, orders, symbols, needInstruments = true, r.atVenue(), r.cfg.Symbols, r.instruments == nil // the working orders now (open and pending) that the venue holds
	})
	if !ok {
		return
	}
	seq := s.readSeq[name].Add(1)
	rd := s.readVenue(name, s.cfg.Exchanges[name], symbols, needInstruments, orders)
	s.onFold(func() { s.applyReconcile(name, why, seq, rd) })
}

// venueRead is what reconcile read from a venue, and what it began from.
type venueRead struct {
	began       time.Time // when the reads began
	start       readStart
	instruments map[string]guardrail.Instrument
	account     *node.Account
	lookups     []lookup
	open        []node.VenueOrder
	openErr     error
}

type lookup struct {
	order node.Order
	vo    node.VenueOrder
	err   error
}

// readVenue does a reconciliation's reads (bounded, retried reads only).
func (s *Server) readVenue(name string, ex Exchange, symbols []string, needInstruments bool, orders []node.Order) venueRead {
	rd := venueRead{began: s.cfg.Now(), start: readStart{}}
	for _, o := range orders {
		rd.start[o.ID] = o.VenueOrderID
	}
	call := func(f func(ctx context.Context)) {
		ctx, cancel := s.venueCall()
		defer cancel()
		f(ctx)
	}
	if needInstruments {
		call(func(ctx context.Context) {
			in, err := ex.Instruments(ctx, symbols)
			if err != nil {
				s.log.Warn("venue instruments unreadable; orders wait for them", "venue", name, "err", err)
				return
			}
			rd.instruments = in
		})
	}
	call(func(ctx context.Context) {
		if acct, err := ex.Account(ctx); err == nil {
			rd.account = &acct
		} else {
			s.log.Warn("venue account unreadable", "venue", name, "err", err)
		}
	})
	for _, o := range orders {
		call(func(ctx context.Context) {
			vo, err := ex.Lookup(ctx, orderOf(o).venueOrder())
			rd.lookups = append(rd.lookups, lookup{o, vo, err})
		})
	}
	call(func(ctx context.Context) { rd.open, rd.openErr = ex.OpenOrders(ctx, symbols) })
	return rd
}

// applyReconcile applies what readVenue found, on the fold, to the orders
// as they are now (a stream report may have settled some meanwhile).
func (s *Server) applyReconcile(name, why string, seq int64, rd venueRead) {
	e := s.eng
	r := e.remotes[name]
	if r == nil || s.fault != nil {
		return
	}
	if rd.instruments != nil && r.instruments == nil {
		r.instruments = rd.instruments
	}
	if rd.account != nil {
		r.setAccount(*rd.account, seq)
	}
	now := s.cfg.Now()
	var settled []node.Event
	read := map[string]bool{} // the orders this reconciliation read from the venue
	for _, l := range rd.lookups {
		if l.err == nil {
			read[l.order.ID] = true
		}
		o, ok := r.Order(l.order.ID)
		if !ok || !o.Status.Working() {
			continue
		}
		switch {
		case l.err == nil:
			e.settleRead(r, o, l.vo, "adopted by reconciliation after "+why, rd.start, now)
		case errors.Is(l.err, node.ErrVenueNotFound) && o.Status == node.OrderPending && now.Sub(r.sentAt(o)) >= s.cfg.VenueTimeout:
			e.emit(node.Event{Time: now, Kind: node.EventFailed, Venue: name, OrderID: o.ID, ClientOrderID: o.ClientOrderID, Symbol: o.Symbol, Side: o.Side,
				Note: fmt.Sprintf("not at %s by its client order id after %s: it was never placed, and is never resubmitted", name, why)})
		case errors.Is(l.err, node.ErrVenueNotFound) && o.Status == node.OrderPending:
			s.reconcileLater(name) // possibly still in flight: not yet provably absent
		case errors.Is(l.err, node.ErrVenueNotFound):
			e.emit(node.Event{Time: now, Kind: node.EventCanceled, Venue: name, OrderID: o.ID, ClientOrderID: o.ClientOrderID, Symbol: o.Symbol, Side: o.Side,
				Quantity: o.Remaining(), Note: "the venue no longer knows this order (reconciliation after " + why + ")"})
		default:
			s.log.Warn("reconciliation lookup failed; the order stays as it is until the next resync", "venue", name, "order_id", o.ID, "err", l.err)
			continue
		}
		if o.Status == node.OrderPending {
			settled = append(settled, node.Event{OrderID: o.ID})
		}
	}
	if rd.openErr == nil {
		r.external = r.external[:0]
		for _, vo := range rd.open {
			e.observe(r, vo, rd.start, now)
		}
	}
	settle, wait := s.settleTickets(r, why, rd.began, read, now)
	events := e.take()
	if len(events) > 0 || len(settle) > 0 {
		if s.commit(&journal.Batch{Events: events, Settle: settle}) != nil {
			return
		}
		s.logFills(events)
	}
	for _, out := range settle {
		delete(e.unsettled, out.Ticket)
		s.tickets.settle(out.Ticket, out)
		s.log.Info("ticket settled", "ticket", out.Ticket, "verb", string(out.Verb), "venue", name, "status", string(out.Status), "code", out.Code, "detail", out.Detail)
	}
	if wait {
		s.reconcileLater(name) // a ticket's answer may still be on its way
	}
	s.auditSettled(r, settled, why, now)
	s.checkLinkedLater(name, "reconciliation after "+why) // an orphaned leg: its group filled, the venue left it open
	s.exitsLater(name)                                    // a bracket's entry done while the node was away: its kept exits go out
	s.log.Info("venue reconciled", "venue", name, "after", why, "events", len(events), "external_orders", len(r.external))
}

// settlesTickets reports whether reconciliation settles a pending ticket
// of verb v: each of these names one node order at a real venue.
func settlesTickets(v command.Verb) bool {
	return v == command.SubmitOrder || v == command.CancelOrder || v == command.Modify
}

// await keeps a command to a real venue whose outcome was committed
// pending, for reconciliation to settle.
func (e *engine) await(en node.AuditEntry) {
	if settlesTickets(en.Command.Verb) && e.remotes[en.Command.Venue] != nil && en.Outcome.Order != nil {
		e.unsettled[en.Ticket] = en
	}
}

// settleTickets decides the pending tickets of venue r from its orders as
// reconciliation left them, oldest first; read holds the orders it read
// from the venue. wait is true when one cannot be decided yet because its
// answer may still be on its way or its order could not be read: another
// reconciliation is then due.
func (s *Server) settleTickets(r *remote, why string, began time.Time, read map[string]bool, now time.Time) (settle []node.Outcome, wait bool) {
	var pending []node.AuditEntry
	for _, en := range s.eng.unsettled {
		if _, known := r.Order(en.Outcome.Order.ID); known && en.Command.Venue == r.cfg.Name {
			pending = append(pending, en)
		}
	}
	slices.SortFunc(pending, func(a, b node.AuditEntry) int { return strings.Compare(a.Ticket, b.Ticket) })
	for _, en := range pending {
		answered := began.Sub(en.Time) >= s.cfg.VenueTimeout && read[en.Outcome.Order.ID]
		out, decided := s.settleTicket(r, en, answered, now)
		if !decided {
			wait = wait || !answered // its answer may be on its way, or the venue was not read
			continue
		}
		out.Detail = "settled by reconciliation after " + why + ": " + out.Detail
		settle = append(settle, out)
	}
	return settle, wait
}

// settleTicket decides one pending ticket from its order now: a submit
// once the order is no longer pending; a cancel once the order is
// canceled, or filled; a modify once the venue shows the order replaced,
// or ended. A cancel or modify whose order is unchanged is taken as not
// applied only when the venue was read, showing it so, after the answer
// must have come (answered): the node never resends it.
func (s *Server) settleTicket(r *remote, en node.AuditEntry, answered bool, now time.Time) (node.Outcome, bool) {
	before := *en.Outcome.Order
	o, _ := r.Order(before.ID) // known (settleTickets)
	out := node.Outcome{Ticket: en.Ticket, Status: node.Accepted, Verb: en.Command.Verb, ClientOrderID: o.ClientOrderID, Time: now, TradingState: s.eng.state}
	s.eng.describeOrder(&out, o.Venue, o.ID)
	notApplied := func(what string) {
		out.Status, out.Code = node.Rejected, "not_applied"
		out.Reason = fmt.Sprintf("%s still shows order %s %s after the %s's answer was lost: the %s did not take effect, and the node never resends it; send %s again if you still want it",
			r.cfg.Name, o.ID, o.Status, what, what, en.Command.Verb)
	}
	switch en.Command.Verb {
	case command.SubmitOrder:
		switch o.Status {
		case node.OrderPending:
			return out, false
		case node.OrderFailed:
			out.Status, out.Code, out.Reason = node.Rejected, "venue_rejected", o.Note
		}
	case command.CancelOrder:
		switch {
		case o.Status == node.OrderCanceled:
		case !o.Status.Working():
			out.Status, out.Code, out.Reason = node.Rejected, "order_not_open", fmt.Sprintf("order %s is %s: the cancel did not take effect", o.ID, o.Status)
		case !answered:
			return out, false
		default:
			notApplied("cancel")
		}
	case command.Modify:
		switch {
		case o.VenueOrderID != before.VenueOrderID:
		case !o.Status.Working():
			out.Status, out.Code, out.Reason = node.Rejected, "order_not_open", fmt.Sprintf("order %s is %s: the modify did not take effect", o.ID, o.Status)
		case !answered:
			return out, false
		default:
			notApplied("modify")
		}
	}
	return out, true
}

// auditSettled writes the audit entry of each settled order whose command
// never got one (the node died between sending and recording the answer).
func (s *Server) auditSettled(r *remote, settled []node.Event, why string, now time.Time) {
	for _, ref := range settled {
		o, _ := r.Order(ref.OrderID)
		ticket := s.eng.ticketOf[o.ID]
		if ticket == "" {
			continue
		}
		if _, found, err := s.j.Ticket(ticket); err != nil || found {
			continue
		}
		c := command.Command{Verb: command.SubmitOrder, Venue: o.Venue, Symbol: o.Symbol, Side: o.Side, Type: o.Type,
			Quantity: o.Quantity, Price: o.Price, TimeInForce: o.TimeInForce, ClientOrderID: o.ClientOrderID}
		if c.Type == command.Market {
			c.TimeInForce = ""
		}
		out := node.Outcome{Ticket: ticket, Status: node.Accepted, Verb: c.Verb, ClientOrderID: o.ClientOrderID, Time: now, TradingState: s.eng.state}
		s.describeRemote(&out, o)
		out.Detail = "settled by reconciliation after " + why + ": " + out.Detail
		entry := &node.AuditEntry{Time: now, Ticket: ticket, KeyID: node.KeyControl, Command: c, ClientOrderID: o.ClientOrderID, Outcome: out}
		if s.commit(&journal.Batch{Entry: entry}) != nil {
			return
		}
	}
}

// refreshLater reads the venue's account on its lane and hands it to the
// fold; the newest read wins. It may be called from any goroutine.
func (s *Server) refreshLater(name string) {
	s.background(name, "account", func() {
		seq := s.readSeq[name].Add(1)
		ctx, cancel := s.venueCall()
		acct, err := s.cfg.Exchanges[name].Account(ctx)
		cancel()
		if err != nil {
			return
		}
		s.onFold(func() {
			if r := s.eng.remotes[name]; r != nil {
				r.setAccount(acct, seq)
			}
		})
	})
}

// setAccount keeps the newest account read: a poll that began before a
// refresh must not overwrite it when it lands later.
func (r *remote) setAccount(acct node.Account, seq int64) {
	if seq > r.accountSeq {
		r.account, r.synced, r.accountSeq = acct, true, seq
	}
}

// settled brings a pending submit's outcome up to date: once
// reconciliation has settled the order, the ticket reports what became of
// it.
func (s *Server) settled(ctx context.Context, out node.Outcome) node.Outcome {
	if out.Status != node.Pending || out.Verb != command.SubmitOrder || out.Order == nil {
		return out
	}
	venue, id := out.Order.Venue, out.Order.ID
	var o node.Order
	var ok bool
	if s.do(ctx, func() { o, ok = s.eng.find(venue, id, "") }) != nil || !ok || o.Status == node.OrderPending {
		return out
	}
	if o.Status.Working() && o.Filled.IsZero() && (o.Type == command.Market || o.TimeInForce == command.IOC) {
		return out // taken by the venue, not traded yet: "open, 0 filled" is no outcome for an order that cannot rest
	}
	out.Order = &o
	if o.Status == node.OrderFailed {
		out.Status, out.Code, out.Reason = node.Rejected, "venue_rejected", o.Note
		out.Detail = "settled by reconciliation: " + o.Note
		return out
	}
	out.Status = node.Accepted
	out.Detail = fmt.Sprintf("settled by reconciliation after its answer was lost: %s is %s, %s of %s filled", o.ID, o.Status, o.Filled, o.Quantity)
	return out
}
