package server

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"wicket/node"
	"wicket/node/command"
	"wicket/node/guardrail"
	"wicket/node/journal"
)

// Protective orders at real venues: what the venue holds natively goes to
// it as its own type (one request for linked legs); a trigger it cannot
// hold (a Binance stop-market, a trailing stop trailingDelta cannot
// carry) is held by the node, a trailing one trailed on the marks
// (order_trailed events, like paper's). Such a trigger is an
// open order in the node's book with no venue order id: journaled before
// it is armed (its order_accepted is committed with the command's audit
// entry, and marks are checked only by later jobs), checked on each of the
// venue's marks while the venue is armed, and fired once: the trigger's
// cancel and the fired market order (pending, client order id the
// trigger's + node.FireSuffix) are committed together before the venue
// hears of it, so a node killed at any point either never sent it or finds
// it at the venue by that id when it reconciles; it never fires twice.

// groupOf is the venue's form of a submit_order: its legs (an oco's two),
// each as the venue takes it.
func groupOf(c command.Command) node.GroupRequest {
	var g node.GroupRequest
	if c.Type == command.OCO {
		g.Class = node.GroupOCO
	}
	for _, l := range c.Legs() {
		g.Legs = append(g.Legs, orderOf(paperOrder(l.Command, "", "")).request())
	}
	return g
}

// checkFireID keeps the client order id a trigger the node holds fires
// under (its own + node.FireSuffix) free for it: a trigger whose fire id
// an order already has is refused, and so is an order that takes the fire
// id of an existing order.
func (e *engine) checkFireID(c command.Command, holds []node.Hold) *rejection {
	taken := func(cid, why string) *rejection {
		ref, ok := e.byCID[cid]
		if !ok || c.ClientOrderID == "" {
			return nil
		}
		o, _ := e.venues[ref.venue].Order(ref.id)
		return &rejection{code: "duplicate_client_order_id", existing: &o, reason: fmt.Sprintf(why+"; give another client_order_id, or let the node mint one", cid, o.ID)}
	}
	if len(holds) == 1 && holds[0] == node.HoldNode {
		return taken(c.ClientOrderID+node.FireSuffix, "the node holds this stop and would fire it as %s, which order %s already has")
	}
	if base, ok := strings.CutSuffix(c.ClientOrderID, node.FireSuffix); ok {
		return taken(base, "client_order_id %s ends in "+node.FireSuffix+", the id the node fires a stop it holds under, and order %s has the rest")
	}
	return nil
}

// heldByNode reports whether o, an order at a real venue, is a trigger
// the node holds: open, never sent.
func heldByNode(o node.Order) bool { return o.Status == node.OrderOpen && o.VenueOrderID == "" }

// atVenue lists the working orders the venue itself holds (open and
// pending): every one but the triggers the node holds, which a lookup at
// the venue would never find.
func (r *remote) atVenue() []node.Order {
	var out []node.Order
	for _, o := range r.OpenOrders() {
		if !heldByNode(o) {
			out = append(out, o)
		}
	}
	return out
}

// submitRemote places a submit_order at real venue c.Venue (the checks
// passed): an oco as one group request, a trigger the venue cannot hold
// in the node's book, any other order as it is.
func (s *Server) submitRemote(c command.Command, ticket string, out *node.Outcome) error {
	r := s.eng.remotes[c.Venue]
	g := groupOf(c)
	if len(g.Legs) > 1 {
		return s.placeGroupRemote(c, g, ticket, out)
	}
	o := paperOrder(c, "", "")
	if holds, err := r.ex.Holds(g); err == nil && len(holds) == 1 && holds[0] == node.HoldNode {
		s.holdRemote(c.Venue, o, out)
		return nil
	}
	o, err := s.placeRemote(c.Venue, o, ticket)
	if err == nil {
		s.describeRemote(out, o)
	}
	return err
}

// holdRemote books a trigger the venue cannot hold: an open order that
// only the node knows, committed with the command's audit entry.
func (s *Server) holdRemote(name string, o node.Order, out *node.Outcome) {
	e := s.eng
	now := s.cfg.Now()
	o.ID, o.Venue, o.Status, o.Created, o.Updated = e.nextOrderID(), name, node.OrderOpen, now, now
	what := o.StopPrice.String()
	if o.Type == command.TrailingStop { // it trails from the mark at placement (checked present by the guardrail)
		o.TrailBest, _ = e.remotes[name].Mark(o.Symbol)
		o.StopPrice = guardrail.TrailingStop(o.Side, o.TrailAmount, o.TrailPercent, o.TrailBest)
		what = fmt.Sprintf("its stop (now %s, trailing the best mark since placement)", o.StopPrice)
	}
	o.Note = fmt.Sprintf("held by the node: %s cannot hold this %s order, so the node fires one market order (client order id %s) when a mark trades through %s, while the venue is armed",
		name, o.Type, o.ClientOrderID+node.FireSuffix, what)
	acc := o
	e.emit(node.Event{Time: now, Kind: node.EventAccepted, Venue: name, OrderID: o.ID, ClientOrderID: o.ClientOrderID,
		Symbol: o.Symbol, Side: o.Side, Quantity: o.Quantity, Price: o.StopPrice, Order: &acc, Note: o.Note})
	e.describeOrder(out, name, o.ID)
	out.Detail += " (" + o.Note + ")"
}

// placeGroupRemote journals every leg pending, then sends them to the
// venue in one request, once, and applies the answer to each leg.
func (s *Server) placeGroupRemote(c command.Command, g node.GroupRequest, ticket string, out *node.Outcome) error {
	e := s.eng
	name := c.Venue
	r := e.remotes[name]
	now := s.cfg.Now()
	group := e.nextOrderID()
	var ids []string
	for _, l := range c.Legs() {
		o := paperOrder(l.Command, e.nextOrderID(), group)
		o.Venue, o.Status, o.Created, o.Updated = name, node.OrderPending, now, now
		acc := o
		e.emit(node.Event{Time: now, Kind: node.EventAccepted, Venue: name, OrderID: o.ID, ClientOrderID: o.ClientOrderID,
			Symbol: o.Symbol, Side: o.Side, Quantity: o.Quantity, Price: o.Price, Order: &acc, Ticket: ticket})
		ids = append(ids, o.ID)
	}
	if err := s.commit(&journal.Batch{Events: e.take()}); err != nil {
		return err
	}
	ctx, cancel := s.venueCall()
	legs, err := r.ex.SubmitGroup(ctx, g)
	cancel()
	now = s.cfg.Now()
	switch {
	case err == nil && len(legs) == len(ids):
		for i, id := range ids {
			o, _ := r.Order(id)
			e.settle(r, o, legs[i], "accepted by "+name+" (one "+g.Class+")", now)
		}
	case errors.Is(err, node.ErrVenueRejected):
		for _, id := range ids {
			o, _ := r.Order(id)
			e.emit(node.Event{Time: now, Kind: node.EventFailed, Venue: name, OrderID: id, ClientOrderID: o.ClientOrderID,
				Symbol: o.Symbol, Side: o.Side, Note: command.SanitizeReason(err.Error())})
		}
	default:
		s.log.Warn("venue answer to a group lost: its legs stay pending and are reconciled, never resent", "venue", name, "group", group, "err", err)
		s.reconcileLater(name)
	}
	var details []string
	for _, id := range ids {
		o, _ := r.Order(id)
		s.describeRemote(out, o)
		details = append(details, out.Detail)
	}
	first, _ := r.Order(group)
	out.OrderID, out.Order, out.OrderIDs, out.ClientOrderID = first.ID, &first, ids, c.ClientOrderID
	switch out.Status {
	case node.Accepted:
		out.Detail = fmt.Sprintf("%s %s at %s, one leg cancels the other (the venue holds them linked): %s", g.Class, group, name, strings.Join(details, "; "))
	case node.Pending:
		out.Detail = fmt.Sprintf("%s %s: %s", g.Class, group, out.Detail)
	}
	return nil
}

// legsOf lists the legs of a group on r: its first leg (whose id is the
// group's) and the legs named after it (node.StopLegSuffix,
// node.TakeProfitLegSuffix).
func (e *engine) legsOf(r *remote, group string) []node.Order {
	first, ok := r.Order(group)
	if !ok {
		return nil
	}
	out := []node.Order{first}
	for _, suffix := range []string{node.StopLegSuffix, node.TakeProfitLegSuffix} {
		if ref, ok := e.byCID[first.ClientOrderID+suffix]; ok && ref.venue == r.cfg.Name {
			if o, ok := r.Order(ref.id); ok && o.Group == group {
				out = append(out, o)
			}
		}
	}
	return out
}

// cancelGroupRemote cancels o and the other working legs of its group:
// the venue cancels the group with one leg, so each other leg is read
// back first and canceled only if the venue still shows it open. It
// returns the legs canceled.
func (s *Server) cancelGroupRemote(name string, o node.Order, note string) (node.Order, []string, error) {
	r := s.eng.remotes[name]
	cur, err := s.cancelRemote(name, o, note)
	for _, leg := range s.eng.legsOf(r, o.Group) {
		if leg.ID == o.ID || leg.Status != node.OrderOpen {
			continue
		}
		if !heldByNode(leg) {
			s.lookupAndSettle(r, leg)
		}
		if now, _ := r.Order(leg.ID); now.Status == node.OrderOpen {
			s.cancelRemote(name, now, note) //nolint:errcheck // its state is reported below
		}
	}
	var canceled []string
	for _, leg := range s.eng.legsOf(r, o.Group) {
		if leg.Status == node.OrderCanceled {
			canceled = append(canceled, leg.ID)
		}
	}
	return cur, canceled, err
}

// bracketEntry reports whether leg is the entry of a bracket among legs:
// its group's first leg, with a take-profit named after it. Its fill
// makes the exits live; only an exit's fill ends the others.
func bracketEntry(leg node.Order, legs []node.Order) bool {
	return leg.ID == leg.Group && slices.ContainsFunc(legs, func(o node.Order) bool { return o.ClientOrderID == leg.ClientOrderID+node.TakeProfitLegSuffix })
}

// linkedAfter schedules a check of the groups at venue name when events
// filled a leg of one in full: the venue cancels the other legs itself,
// and the check (queued behind the reports on their way) verifies it.
func (s *Server) linkedAfter(name string, events []node.Event) {
	r := s.eng.remotes[name]
	for _, ev := range events {
		if o, ok := r.Order(ev.OrderID); ok && ev.Kind == node.EventFilled && o.Group != "" && o.Status == node.OrderFilled {
			s.enqueue(func() { s.checkLinked(name, "leg "+o.ID+" filled") }) //nolint:errcheck // reconciliation checks them too
			return
		}
	}
}

// checkLinked finds every open leg at venue name whose group has a leg
// filled in full — an orphan: the venue should have canceled it — reads it
// back, and cancels it if the venue still shows it open, reporting it in
// the log and the cancel's note. Reconciliation runs it (an orphan after a
// restart), and so does a leg's fill.
func (s *Server) checkLinked(name, why string) {
	e := s.eng
	r := e.remotes[name]
	if r == nil || s.fault != nil {
		return
	}
	for _, o := range r.OpenOrders() {
		if o.Group == "" || o.Status != node.OrderOpen {
			continue
		}
		var filled string
		legs := e.legsOf(r, o.Group)
		for _, leg := range legs {
			if leg.ID != o.ID && leg.Status == node.OrderFilled && !bracketEntry(leg, legs) {
				filled = leg.ID
			}
		}
		if filled == "" {
			continue
		}
		if !heldByNode(o) {
			s.lookupAndSettle(r, o)
		}
		if cur, _ := r.Order(o.ID); cur.Status == node.OrderOpen {
			note := fmt.Sprintf("orphaned leg of %s: leg %s filled and %s left this one open (found after %s); canceled by the node", o.Group, filled, name, why)
			s.log.Warn("orphaned leg found", "venue", name, "order_id", o.ID, "group", o.Group, "filled_leg", filled, "after", why)
			s.cancelRemote(name, cur, note) //nolint:errcheck // a refusal is looked up; the next reconciliation checks again
		}
	}
	if events := e.take(); len(events) > 0 && s.commit(&journal.Batch{Events: events}) == nil {
		s.logFills(events)
	}
}

// fireTriggers fires each trigger the node holds at venue name that its
// mark has traded through, once, while the venue is armed and the trading
// state lets it fill.
func (s *Server) fireTriggers(name string) {
	e := s.eng
	r := e.remotes[name]
	if r == nil || s.fault != nil {
		return
	}
	now := s.cfg.Now()
	for _, o := range r.OpenOrders() {
		m, ok := r.Mark(o.Symbol)
		if !heldByNode(o) || !ok {
			continue
		}
		if o.Type == command.TrailingStop && ((o.Side == command.Sell && m.GreaterThan(o.TrailBest)) || (o.Side == command.Buy && m.LessThan(o.TrailBest))) {
			e.emit(node.Event{Time: now, Kind: node.EventTrailed, Venue: name, OrderID: o.ID, ClientOrderID: o.ClientOrderID, Symbol: o.Symbol, Side: o.Side, Price: m,
				Note: "a new best mark: the stop the node holds follows it"})
			continue // a new best is never through its own stop
		}
		if !through(o, m) || !e.mayFill(r, o) {
			continue
		}
		if !e.armed(name, now) {
			if r.reachedDisarmed[o.ID] {
				continue
			}
			if r.reachedDisarmed == nil {
				r.reachedDisarmed = map[string]bool{}
			}
			r.reachedDisarmed[o.ID] = true
			s.log.Warn("a trigger the node holds was reached but the venue is disarmed: not fired; it fires when an operator arms the venue and the mark is still through it",
				"venue", name, "order_id", o.ID, "stop_price", o.StopPrice.String(), "mark", m.String())
			continue
		}
		s.fire(r, o, m, now)
	}
	if events := e.take(); len(events) > 0 && s.commit(&journal.Batch{Events: events}) == nil { // the trails
		s.logFills(events)
	}
}

// through reports whether mark m is at or through o's stop.
func through(o node.Order, m decimal.Decimal) bool {
	if o.Side == command.Buy {
		return m.GreaterThanOrEqual(o.StopPrice)
	}
	return m.LessThanOrEqual(o.StopPrice)
}

// fire closes trigger o and places its market order, committed together
// before the venue hears of it; the order's client order id is derived
// from the trigger's, so it exists once.
func (s *Server) fire(r *remote, o node.Order, m decimal.Decimal, now time.Time) {
	e := s.eng
	name := r.cfg.Name
	fired := node.Order{ClientOrderID: o.ClientOrderID + node.FireSuffix, Symbol: o.Symbol, Side: o.Side, Type: command.Market,
		Quantity: o.Remaining(), TimeInForce: command.IOC, Note: fmt.Sprintf("fired by %s (a %s held by the node) at mark %s", o.ID, o.Type, m)}
	if _, done := e.byCID[fired.ClientOrderID]; done {
		return // fired before: never twice
	}
	e.emit(node.Event{Time: now, Kind: node.EventCanceled, Venue: name, OrderID: o.ID, ClientOrderID: o.ClientOrderID, Symbol: o.Symbol, Side: o.Side,
		Quantity: o.Remaining(), Price: m,
		Note: fmt.Sprintf("triggered at mark %s (stop %s): fired as market order %s, client order id %s", m, o.StopPrice, e.nextOrderID(), fired.ClientOrderID)})
	cur, err := s.placeRemote(name, fired, "")
	if err != nil {
		return // the journal refused: nothing was sent, the engine is rebuilt with the trigger still armed
	}
	s.log.Info("trigger fired", "venue", name, "order_id", o.ID, "fired_order_id", cur.ID, "client_order_id", fired.ClientOrderID,
		"mark", m.String(), "stop_price", o.StopPrice.String(), "status", string(cur.Status))
	if events := e.take(); len(events) > 0 && s.commit(&journal.Batch{Events: events}) == nil {
		s.logFills(events)
		s.refreshLater(name)
	}
}
