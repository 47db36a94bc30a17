package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"wicket/internal/project"
	"wicket/node"
	"wicket/node/command"
	"wicket/node/guardrail"
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

// checkExchanges refuses a configuration whose real venues have no
// adapter, or an adapter of another kind or environment.
func checkExchanges(cfg Config) error {
	for _, vc := range cfg.Project.Venues {
		ex := cfg.Exchanges[vc.Name]
		switch {
		case !vc.Real() && ex != nil:
			return fmt.Errorf("node: venue %q is a paper venue but was given a %s adapter", vc.Name, ex.Kind())
		case !vc.Real():
		case ex == nil:
			return fmt.Errorf("node: venue %q (kind %s) has no adapter", vc.Name, vc.Kind)
		case ex.Kind() != vc.Kind || ex.Environment() != vc.Environment:
			return fmt.Errorf("node: venue %q is %s/%s in wicket.toml but its adapter is %s/%s", vc.Name, vc.Kind, vc.Environment, ex.Kind(), ex.Environment())
		}
	}
	return nil
}

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
		var o node.Order
		o, err = s.placeRemote(c.Venue, node.Order{ClientOrderID: c.ClientOrderID, Symbol: c.Symbol, Side: c.Side, Type: c.Type,
			Quantity: c.Quantity, Price: c.Price, TimeInForce: c.TIF()}, id)
		if err == nil {
			s.describeRemote(&out, o)
		}
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
		vo, verr := s.cancelRemote(c.Venue, o, "canceled by cancel_order")
		s.describeRemote(&out, vo)
		venueOutcome(&out, vo, verr)
	case command.Modify:
		o, _ := e.find(c.Venue, c.OrderID, c.ClientOrderID)
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
		symbols := s.eng.remotes[c.Venue].Held()
		if c.Symbol != "" {
			symbols = []string{c.Symbol}
		}
		out.OrderIDs, err = s.flattenRemote(c.Venue, symbols, "flatten", id, &out)
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
	ctx, cancel := s.venueCall()
	vo, err := r.ex.Cancel(ctx, orderOf(o).venueOrder())
	cancel()
	switch {
	case err == nil:
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
	for _, sym := range symbols {
		pos := r.Position(sym)
		if pos.IsZero() {
			continue
		}
		side := command.Sell
		if pos.IsNegative() {
			side = command.Buy
		}
		o, err := s.placeRemote(name, node.Order{ClientOrderID: "wk-" + s.cfg.NewID(), Symbol: sym, Side: side, Type: command.Market,
			Quantity: pos.Abs(), TimeInForce: command.IOC, Note: note}, ticket)
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

// --- reconciliation ---

// reconcileLater reconciles a venue again once any request still in
// flight must have been answered or dropped.
func (s *Server) reconcileLater(name string) {
	time.AfterFunc(2*s.cfg.VenueTimeout, func() {
		s.enqueue(func() { s.reconcile(name, "a lost answer") }) //nolint:errcheck // a stopping node reconciles at its next start
	})
}

// reconcile reads the venue's account, instruments and open orders, and
// settles every working node order by its client order id: found →
// adopted with its real state and fills; provably absent → failed. It
// never resubmits. It runs on the fold but does its reading off it: the
// reads go to a goroutine and their results come back as a job, so the
// node keeps answering meanwhile.
func (s *Server) reconcile(name, why string) {
	r := s.eng.remotes[name]
	if r == nil || s.fault != nil {
		return
	}
	orders := r.OpenOrders() // the working orders now (open and pending)
	ex, symbols, needInstruments := r.ex, r.cfg.Symbols, r.instruments == nil
	seq := s.readSeq[name].Add(1)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		rd := s.readVenue(name, ex, symbols, needInstruments, orders)
		if s.enqueue(func() { s.applyReconcile(name, why, seq, rd) }) != nil {
			s.log.Warn("reconciliation read but not applied: the node is stopping or busy", "venue", name)
		}
	}()
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
		case errors.Is(l.err, node.ErrVenueNotFound) && o.Status == node.OrderPending && now.Sub(o.Created) >= s.cfg.VenueTimeout:
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

// refreshLater reads the venue's account off the fold and hands it back;
// the newest read wins.
func (s *Server) refreshLater(name string) {
	r := s.eng.remotes[name]
	if r == nil {
		return
	}
	ex, seq := r.ex, s.readSeq[name].Add(1)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		ctx, cancel := s.venueCall()
		acct, err := ex.Account(ctx)
		cancel()
		if err != nil {
			return
		}
		s.enqueue(func() { //nolint:errcheck // the next poll reads it again
			if r := s.eng.remotes[name]; r != nil {
				r.setAccount(acct, seq)
			}
		})
	}()
}

// setAccount keeps the newest account read: a poll that began before a
// refresh must not overwrite it when it lands later.
func (r *remote) setAccount(acct node.Account, seq int64) {
	if seq > r.accountSeq {
		r.account, r.synced, r.accountSeq = acct, true, seq
	}
}

// --- background: streams and polls ---

// checkSymbols reads each real venue's instruments at start, each read
// bounded by VenueTimeout. A venue that answers that it does not list a
// configured symbol stops the node, with the venue's own symbol named
// when it has one: such a venue could never be traded. A venue that
// cannot be read now is read again later (pollLoop). It returns what it
// read, by venue.
func checkSymbols(cfg Config) (map[string]map[string]guardrail.Instrument, error) {
	type read struct {
		name string
		in   map[string]guardrail.Instrument
		err  error
	}
	var venues []project.Venue
	for _, vc := range cfg.Project.Venues {
		if vc.Real() && cfg.Exchanges[vc.Name] != nil {
			venues = append(venues, vc)
		}
	}
	reads := make([]read, len(venues))
	var wg sync.WaitGroup
	for i, vc := range venues {
		wg.Add(1)
		go func() { // the venues at once: a start waits one timeout at most
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), cfg.VenueTimeout)
			defer cancel()
			in, err := cfg.Exchanges[vc.Name].Instruments(ctx, vc.Symbols)
			reads[i] = read{vc.Name, in, err}
		}()
	}
	wg.Wait()
	out := map[string]map[string]guardrail.Instrument{}
	for _, rd := range reads {
		switch {
		case errors.Is(rd.err, node.ErrUnknownSymbol):
			return nil, fmt.Errorf("node: venue %s: %w", rd.name, rd.err)
		case rd.err != nil:
			cfg.Logger.Warn("venue instruments unreadable at start; read again at each poll, and orders wait for them", "venue", rd.name, "err", rd.err)
		default:
			out[rd.name] = rd.in
		}
	}
	return out, nil
}

func (s *Server) startRemotes(instruments map[string]map[string]guardrail.Instrument) {
	anyReal := false
	for _, vc := range s.cfg.Project.Venues {
		if !vc.Real() {
			continue
		}
		anyReal = true
		name, ex, in := vc.Name, s.cfg.Exchanges[vc.Name], instruments[vc.Name]
		s.enqueue(func() { //nolint:errcheck // the queue is empty at start
			if r := s.eng.remotes[name]; r != nil && in != nil && r.instruments == nil {
				r.instruments = in
			}
			s.reconcile(name, "the node started")
		})
		s.wg.Add(2)
		go s.streamLoop(name, ex)
		go s.pollLoop(name, ex, vc.Symbols)
	}
	if anyReal {
		s.wg.Add(1)
		go s.orderPollLoop()
	}
}

// streamLoop keeps the venue's order stream up, reconnecting with backoff;
// every (re)connect resyncs over REST.
func (s *Server) streamLoop(name string, ex Exchange) {
	defer s.wg.Done()
	backoff := time.Second
	for s.bg.Err() == nil {
		err := ex.Stream(s.bg, func(u node.VenueUpdate) {
			if u.Order == nil && u.Connected {
				backoff = time.Second
			}
			s.enqueue(func() { s.onUpdate(name, u) }) //nolint:errcheck // a full queue: the next resync catches up
		})
		if s.bg.Err() != nil {
			return
		}
		s.enqueue(func() { s.onUpdate(name, node.VenueUpdate{}) }) //nolint:errcheck // as above
		s.log.Warn("venue stream down; reconnecting, and reading its working orders over REST meanwhile", "venue", name,
			"err", err, "in", backoff, "order_poll_every", s.cfg.OrderPollEvery)
		select {
		case <-s.bg.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 30*time.Second)
	}
}

// onUpdate applies one stream message on the fold.
func (s *Server) onUpdate(name string, u node.VenueUpdate) {
	r := s.eng.remotes[name]
	if r == nil || s.fault != nil {
		return
	}
	if u.Order == nil && u.Resync {
		s.reconcile(name, "a report out of context")
		return
	}
	if u.Order == nil {
		r.connected = u.Connected
		if u.Connected {
			s.reconcile(name, "the stream connected")
		}
		return
	}
	s.eng.observe(r, *u.Order, nil, s.cfg.Now())
	events := s.eng.take()
	if len(events) == 0 {
		return
	}
	if s.commit(&journal.Batch{Events: events}) == nil {
		s.logFills(events)
		s.refreshLater(name)
	}
}

// DefaultOrderPollEvery is how often a real venue's working orders are
// read over REST while its stream is down.
const DefaultOrderPollEvery = 2 * time.Second

// maxPolledOrders bounds one poll's lookups at one venue.
const maxPolledOrders = 50

// orderPollLoop reads the working orders of every real venue whose stream
// is down, once per OrderPollEvery (or OrderPolls tick), so that a fill
// is never hidden by an outage: the stream's reports are missing then,
// and a reconnect may be long in coming.
func (s *Server) orderPollLoop() {
	defer s.wg.Done()
	ticks := s.cfg.OrderPolls
	if ticks == nil {
		t := time.NewTicker(s.cfg.OrderPollEvery)
		defer t.Stop()
		ticks = t.C
	}
	for {
		select {
		case <-s.bg.Done():
			return
		case <-ticks:
		}
		s.enqueue(s.pollOrders) //nolint:errcheck // a full queue: the next tick polls again
	}
}

// pollOrders, on the fold, looks up off the fold the working orders of
// each real venue whose stream is down (one poll at a time per venue, at
// most maxPolledOrders orders), and applies what it finds as a
// reconciliation's read: reports settle the orders, fills included.
// Lookups that fail change nothing; the next poll or resync tries again.
func (s *Server) pollOrders() {
	if s.fault != nil {
		return
	}
	for _, name := range s.eng.names {
		r := s.eng.remotes[name]
		if r == nil || r.connected || r.polling.Load() {
			continue
		}
		orders := r.OpenOrders() // open and pending
		if len(orders) == 0 {
			continue
		}
		orders = orders[:min(len(orders), maxPolledOrders)]
		start := readStart{}
		for _, o := range orders {
			start[o.ID] = o.VenueOrderID
		}
		r.polling.Store(true)
		ex := r.ex
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer r.polling.Store(false)
			var found []node.VenueOrder
			for _, o := range orders {
				ctx, cancel := s.venueCall()
				vo, err := ex.Lookup(ctx, orderOf(o).venueOrder())
				cancel()
				if err == nil {
					found = append(found, vo)
				}
			}
			s.enqueue(func() { s.applyPoll(name, found, start) }) //nolint:errcheck // the next poll reads them again
		}()
	}
}

// applyPoll applies a poll's reports, on the fold.
func (s *Server) applyPoll(name string, found []node.VenueOrder, start readStart) {
	r := s.eng.remotes[name]
	if r == nil || s.fault != nil {
		return
	}
	now := s.cfg.Now()
	for _, vo := range found {
		s.eng.observe(r, vo, start, now)
	}
	events := s.eng.take()
	if len(events) == 0 {
		return
	}
	if s.commit(&journal.Batch{Events: events}) == nil {
		s.logFills(events)
		s.log.Info("venue stream down: working orders read over REST", "venue", name, "orders", len(found), "events", len(events))
		s.refreshLater(name)
	}
}

// readInstruments reads a real venue's instruments off the fold when the
// node has none yet (the venue was unreachable at start), one read at a
// time, and hands them to the fold.
func (s *Server) readInstruments(name string) {
	r := s.eng.remotes[name]
	if r == nil || r.instruments != nil || r.readingInstruments.Load() || s.fault != nil {
		return
	}
	r.readingInstruments.Store(true)
	ex, symbols := r.ex, r.cfg.Symbols
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer r.readingInstruments.Store(false)
		ctx, cancel := s.venueCall()
		in, err := ex.Instruments(ctx, symbols)
		cancel()
		s.enqueue(func() { //nolint:errcheck // dropped: the next poll reads them again
			switch {
			case err != nil && s.bg.Err() == nil:
				s.log.Warn("venue instruments still unreadable; orders wait for them", "venue", name, "err", err)
			case err == nil && r.instruments == nil:
				r.instruments = in
				s.log.Info("venue instruments read", "venue", name, "symbols", len(in))
			}
		})
	}()
}

// pollLoop reads the venue's marks and account every MarkEvery, off the
// fold, and hands them to it; and the venue's instruments while the node
// has none.
func (s *Server) pollLoop(name string, ex Exchange, symbols []string) {
	defer s.wg.Done()
	t := time.NewTicker(s.cfg.MarkEvery)
	defer t.Stop()
	for {
		ctx, cancel := context.WithTimeout(s.bg, s.cfg.VenueTimeout)
		marks, err := ex.Marks(ctx, symbols)
		seq := s.readSeq[name].Add(1)
		acct, aerr := ex.Account(ctx)
		cancel()
		if err == nil || aerr == nil {
			s.enqueue(func() { //nolint:errcheck // the next poll tries again
				r := s.eng.remotes[name]
				if r == nil {
					return
				}
				if err == nil {
					for sym, m := range marks {
						r.SetMark(sym, m)
					}
				}
				if aerr == nil {
					r.setAccount(acct, seq)
				}
			})
		}
		if err != nil && s.bg.Err() == nil {
			s.log.Warn("venue marks unreadable", "venue", name, "err", err)
		}
		s.enqueue(func() { s.readInstruments(name) }) //nolint:errcheck // the next poll tries again
		select {
		case <-s.bg.Done():
			return
		case <-t.C:
		}
	}
}

// --- arming over HTTP ---

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
