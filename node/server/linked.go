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
	switch c.Type {
	case command.OCO:
		g.Class = node.GroupOCO
	case command.Bracket:
		g.Class = node.GroupBracket
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
		if !heldByNode(o) && !r.keptExit(o) {
			out = append(out, o)
		}
	}
	return out
}

// submitIntent is a submit_order's first hop on the fold (the checks
// passed): an oco journaled as its legs, pending, for one group request;
// a trigger the venue cannot hold booked in the node's book and done
// (held); any other order journaled pending (target). A non-nil error is
// the journal's: nothing was sent.
func (s *Server) submitIntent(c command.Command, ticket string, out *node.Outcome) (target node.Order, group []node.Order, held bool, err error) {
	r := s.eng.remotes[c.Venue]
	g := groupOf(c)
	holds, herr := r.ex.Holds(g)
	if herr != nil {
		holds = nil
	}
	if len(g.Legs) > 1 {
		group, err = s.groupIntent(c, ticket, holds)
		return node.Order{}, group, false, err
	}
	o := paperOrder(c, "", "")
	if len(holds) == 1 && holds[0] == node.HoldNode {
		s.holdRemote(c.Venue, o, out)
		return node.Order{}, nil, true, nil
	}
	o.TimeInForce = c.TIF()
	target, err = s.placeIntent(c.Venue, o, ticket)
	return target, nil, false, err
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

// groupIntent journals every leg of c, pending, on the fold, before the
// venue hears of them; it returns the legs. A bracket's exits wait
// inactive for its entry (Parent); those the venue takes only once the
// entry has filled (holds: node.HoldAfterEntry) are kept by the node,
// unsent, until then (keptExit), the others are marked sent with the
// group's one request (order_sent).
func (s *Server) groupIntent(c command.Command, ticket string, holds []node.Hold) ([]node.Order, error) {
	e := s.eng
	name := c.Venue
	now := s.cfg.Now()
	group := e.nextOrderID()
	var legs []node.Order
	for i, l := range c.Legs() {
		o := paperOrder(l.Command, e.nextOrderID(), group)
		o.Venue, o.Status, o.Created, o.Updated, o.Leg = name, node.OrderPending, now, now, l.Name
		kept := i < len(holds) && holds[i] == node.HoldAfterEntry
		if l.Exit {
			o.Parent, o.Inactive = group, true
		}
		if kept {
			o.Note = fmt.Sprintf("kept by the node until its entry %s fills: %s takes a bracket's exits only then, so the node sends them as one oco for what filled", group, name)
		}
		acc := o
		e.emit(node.Event{Time: now, Kind: node.EventAccepted, Venue: name, OrderID: o.ID, ClientOrderID: o.ClientOrderID,
			Symbol: o.Symbol, Side: o.Side, Quantity: o.Quantity, Price: o.Price, Order: &acc, Ticket: ticket, Note: o.Note})
		if l.Exit && !kept {
			e.emit(node.Event{Time: now, Kind: node.EventSent, Venue: name, OrderID: o.ID, ClientOrderID: o.ClientOrderID,
				Symbol: o.Symbol, Side: o.Side, Quantity: o.Quantity, Note: "sent with its group in one request"})
		}
		legs = append(legs, o)
	}
	return legs, s.commit(&journal.Batch{Events: e.take()})
}

// keptLegs reports whether legs, journaled by groupIntent, are a
// bracket whose exits the node keeps until its entry fills.
func (s *Server) keptLegs(name string, legs []node.Order) bool {
	var kept bool
	s.onFold(func() { r := s.eng.remotes[name]; kept = len(legs) == 3 && r.keptExit(current(r, legs[1])) })
	return kept
}

// groupCall sends a journaled group to the venue in one request, once,
// from its lane.
func (s *Server) groupCall(c command.Command) ([]node.VenueOrder, error) {
	ctx, cancel := s.venueCall()
	defer cancel()
	return s.cfg.Exchanges[c.Venue].SubmitGroup(ctx, groupOf(c))
}

// applyGroup applies the venue's one answer to each leg, on the fold, and
// describes the group in out; the events are left for the caller to
// commit.
func (s *Server) applyGroup(c command.Command, legs []node.Order, answer []node.VenueOrder, err error, out *node.Outcome) {
	e := s.eng
	name := c.Venue
	r := e.remotes[name]
	class := groupOf(c).Class
	group := legs[0].ID
	now := s.cfg.Now()
	switch {
	case err == nil && len(answer) == len(legs):
		for i, o := range legs {
			if o = current(r, o); o.Status == node.OrderPending {
				e.settle(r, o, answer[i], "accepted by "+name+" (one "+class+")", now)
			}
		}
	case errors.Is(err, node.ErrVenueRejected):
		for _, o := range legs {
			if o = current(r, o); o.Status == node.OrderPending {
				e.emit(node.Event{Time: now, Kind: node.EventFailed, Venue: name, OrderID: o.ID, ClientOrderID: o.ClientOrderID,
					Symbol: o.Symbol, Side: o.Side, Note: command.SanitizeReason(err.Error())})
			}
		}
	default:
		s.log.Warn("venue answer to a group lost: its legs stay pending and are reconciled, never resent", "venue", name, "group", group, "err", err)
		s.reconcileLater(name)
	}
	s.describeGroup(c, legs, out)
}

// describeGroup describes a group's legs as they are now in out, on the
// fold.
func (s *Server) describeGroup(c command.Command, legs []node.Order, out *node.Outcome) {
	r := s.eng.remotes[c.Venue]
	class, group := groupOf(c).Class, legs[0].ID
	var details, ids []string
	for _, o := range legs {
		o = current(r, o)
		if r.keptExit(o) { // not sent: its entry's state tells
			details = append(details, fmt.Sprintf("%s %s %s %s %s kept until the entry fills", o.ID, o.Type, o.Side, o.Quantity, o.Symbol))
		} else {
			s.describeRemote(out, o)
			details = append(details, out.Detail)
		}
		ids = append(ids, o.ID)
	}
	first := current(r, legs[0])
	out.OrderID, out.Order, out.OrderIDs, out.ClientOrderID = first.ID, &first, ids, c.ClientOrderID
	s.describeRemote(out, first) // the ticket follows the first leg (the entry, the oco's limit)
	linked := "one leg cancels the other (the venue holds them linked)"
	if class == node.GroupBracket {
		linked = "its exits active once the entry fills, one cancelling the other"
		if r.keptExit(current(r, legs[1])) {
			linked = fmt.Sprintf("its exits sent to %s as one oco once the entry fills, for what filled", c.Venue)
		}
	}
	switch out.Status {
	case node.Accepted:
		out.Detail = fmt.Sprintf("%s %s at %s, %s: %s", class, group, c.Venue, linked, strings.Join(details, "; "))
	case node.Pending:
		out.Detail = fmt.Sprintf("%s %s: %s", class, group, out.Detail)
	}
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

// cancelGroupRemote cancels o and the other working legs of its group,
// on the lane, with hops to the fold: the venue cancels the group with
// one leg, so each other leg is read back first and canceled only if the
// venue still shows it open. It returns the legs canceled.
func (s *Server) cancelGroupRemote(name string, o node.Order, note string) (node.Order, []string, error) {
	legs := func() []node.Order {
		var legs []node.Order
		s.onFold(func() { legs = s.eng.legsOf(s.eng.remotes[name], o.Group) })
		return legs
	}
	cur, err := s.cancelRemote(name, o, note)
	for _, leg := range legs() {
		if leg.ID == o.ID || leg.Status != node.OrderOpen {
			continue
		}
		if !heldByNode(leg) {
			s.lookupAndSettle(name, leg)
		}
		var now node.Order
		s.onFold(func() { now = current(s.eng.remotes[name], leg) })
		if now.Status == node.OrderOpen {
			s.cancelRemote(name, now, note) //nolint:errcheck // its state is reported below
		}
	}
	var canceled []string
	for _, leg := range legs() {
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

// linkedAfter queues a check of the groups at venue name on its lane
// when events filled a leg of one in full: the venue cancels the other
// legs itself, and the check (queued behind the reports on their way)
// verifies it. It runs on the fold.
func (s *Server) linkedAfter(name string, events []node.Event) {
	s.exitsLater(name) // a bracket's entry done: its kept exits go out
	r := s.eng.remotes[name]
	for _, ev := range events {
		if o, ok := r.Order(ev.OrderID); ok && ev.Kind == node.EventFilled && o.Group != "" && o.Status == node.OrderFilled {
			s.checkLinkedLater(name, "leg "+o.ID+" filled")
			return
		}
	}
}

// checkLinkedLater queues checkLinked on the venue's lane (one waits at a
// time: a second would find the same); any goroutine may call it.
func (s *Server) checkLinkedLater(name, why string) {
	s.background(name, "linked", func() { s.checkLinked(name, why) })
}

// orphan is an open leg whose group has another leg filled in full.
type orphan struct {
	leg    node.Order
	filled string
}

// orphans lists venue name's orphaned legs, on the fold.
func (s *Server) orphans(name string) []orphan {
	e := s.eng
	r := e.remotes[name]
	if r == nil || s.fault != nil {
		return nil
	}
	var out []orphan
	for _, o := range r.OpenOrders() {
		if o.Group == "" || o.Status != node.OrderOpen {
			continue
		}
		legs := e.legsOf(r, o.Group)
		for _, leg := range legs {
			if leg.ID != o.ID && leg.Status == node.OrderFilled && !bracketEntry(leg, legs) {
				out = append(out, orphan{leg: o, filled: leg.ID})
				break
			}
		}
	}
	return out
}

// checkLinked finds every open leg at venue name whose group has a leg
// filled in full — an orphan: the venue should have canceled it — reads it
// back, and cancels it if the venue still shows it open, reporting it in
// the log and the cancel's note: on the lane, with hops to the fold.
// Reconciliation queues it (an orphan after a restart), and so does a
// leg's fill.
func (s *Server) checkLinked(name, why string) {
	var found []orphan
	s.onFold(func() { found = s.orphans(name) })
	for _, x := range found {
		o := x.leg
		if !heldByNode(o) {
			s.lookupAndSettle(name, o)
		}
		var cur node.Order
		s.onFold(func() { cur = current(s.eng.remotes[name], o) })
		if cur.Status != node.OrderOpen {
			continue
		}
		note := fmt.Sprintf("orphaned leg of %s: leg %s filled and %s left this one open (found after %s); canceled by the node", o.Group, x.filled, name, why)
		s.log.Warn("orphaned leg found", "venue", name, "order_id", o.ID, "group", o.Group, "filled_leg", x.filled, "after", why)
		s.cancelRemote(name, cur, note) //nolint:errcheck // a refusal is looked up; the next reconciliation checks again
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

// fire closes trigger o and journals its market order, pending, in one
// commit on the fold, before the venue hears of it; the order's client
// order id is derived from the trigger's, so it exists once. The venue
// call is queued on the venue's lane.
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
	fired, err := s.placeIntent(name, fired, "")
	if err != nil {
		return // the journal refused: nothing was sent, the engine is rebuilt with the trigger still armed
	}
	queued := s.background(name, "fire "+fired.ClientOrderID, func() {
		vo, verr := s.submitCall(name, fired)
		s.onFold(func() {
			cur := s.applySubmit(name, fired, vo, verr)
			s.log.Info("trigger fired", "venue", name, "order_id", o.ID, "fired_order_id", cur.ID, "client_order_id", fired.ClientOrderID,
				"mark", m.String(), "stop_price", o.StopPrice.String(), "status", string(cur.Status))
			s.commitStep(name) //nolint:errcheck // a failure rebuilt the engine, which reconciles
		})
	})
	if !queued { // the node stops: the pending order is reconciled at the next start, never resent
		s.log.Warn("trigger fired but its order not sent: the node is stopping; it is reconciled by client order id at the next start",
			"venue", name, "order_id", o.ID, "client_order_id", fired.ClientOrderID)
	}
}
