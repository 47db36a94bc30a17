package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/node"
	"wicket/node/command"
	"wicket/node/guardrail"
	"wicket/node/journal"
)

// The agent's capital envelope ([agent.envelope.VENUE], node/envelope.go).
//
// Attribution: the node knows a write is the agent's by the key that
// signed it. The observe and control keys are shared by every client
// (wicket mcp, wicket trade, the deployments' in-process connection), so
// they say nothing of the agent; a node given an agent key
// (WICKET_NODE_AGENT_KEY) takes writes signed with it (key id "agent"),
// and wicket mcp signs its writes with it when it holds one. An order
// the agent's write places is recorded as the agent's (EventAgentOrder,
// journaled, so a replay rebuilds the book), with its legs, and its fills
// build the agent's book per venue: position per symbol and cash. Held is
// the gross notional of the positions at the marks; the day's loss is the
// book's value when the UTC day began (recorded, EventAgentDay) less its
// value now.
//
// Enforcement: an agent's order that opens or adds to a position is
// refused (code agent_envelope) while the day's loss is at or past
// max_daily_loss, or when the position it leaves would take Held past
// max_notional; orders that reduce pass. With close_on_breach the mark
// step that finds the loss past max_daily_loss closes the agent's
// positions there once that day (market orders for the agent's share, by
// the node's key), audited (agent_envelope) and alerted.

// EventAgentDay records the agent's book value on a venue (Price) as the
// UTC day (Note) began; EventAgentDeployment, that the deployment Note was
// created with the agent key, so its writes are the agent's too.
const (
	EventAgentDay        node.EventKind = "agent_day"
	EventAgentDeployment node.EventKind = "agent_deployment"
)

// agentBook is the agent's share of one venue's account.
type agentBook struct {
	pos      map[string]decimal.Decimal // symbol → signed quantity
	last     map[string]decimal.Decimal // symbol → last fill price (when no mark)
	cash     decimal.Decimal            // −Σ signed quantity × price − fees
	day      string                     // the UTC day dayStart is of
	dayStart decimal.Decimal            // the book's value as the day began
	closed   string                     // the UTC day close_on_breach acted on
}

// envelopes are the agent's books and orders (on the fold).
type envelopes struct {
	orders map[string]string     // client order id → whose ("agent", "deployment dep-...")
	books  map[string]*agentBook // venue → book
	deps   map[string]bool       // the deployments the agent key created
}

func (e *engine) agentBookOf(venue string) *agentBook {
	if e.risk.env.books == nil {
		e.risk.env.books = map[string]*agentBook{}
	}
	b := e.risk.env.books[venue]
	if b == nil {
		b = &agentBook{pos: map[string]decimal.Decimal{}, last: map[string]decimal.Decimal{}}
		e.risk.env.books[venue] = b
	}
	return b
}

// value is the book's worth at the marks (a symbol without a mark at its
// last fill price), and its gross held notional.
func (e *engine) agentValue(venue string, b *agentBook) (value, held decimal.Decimal) {
	value = b.cash
	v := e.venues[venue]
	for sym, q := range b.pos {
		if q.IsZero() {
			continue
		}
		px := b.last[sym]
		if v != nil {
			if m, ok := v.Mark(sym); ok && m.IsPositive() {
				px = m
			}
		}
		value = value.Add(q.Mul(px))
		held = held.Add(q.Abs().Mul(px))
	}
	return value, held
}

// agentLoss is the agent's loss on venue so far this UTC day (negative: a
// gain), rolling the day over (journaled) when it changed.
func (e *engine) agentLoss(venue string, now time.Time) (loss, held decimal.Decimal) {
	b := e.agentBookOf(venue)
	value, held := e.agentValue(venue, b)
	if day := now.UTC().Format(time.DateOnly); b.day != day {
		e.emit(node.Event{Time: now, Kind: EventAgentDay, Venue: venue, Price: value, Note: day})
	}
	return b.dayStart.Sub(value), held
}

// applyEnvelope applies the envelope's events and the agent's fills (live
// and on replay).
func (e *engine) applyEnvelope(ev node.Event) {
	switch ev.Kind {
	case node.EventAgentOrder:
		if e.risk.env.orders == nil {
			e.risk.env.orders = map[string]string{}
		}
		e.risk.env.orders[ev.ClientOrderID] = ev.Note
	case EventAgentDeployment:
		if e.risk.env.deps == nil {
			e.risk.env.deps = map[string]bool{}
		}
		e.risk.env.deps[ev.Note] = true
	case EventAgentDay:
		b := e.agentBookOf(ev.Venue)
		b.day, b.dayStart = ev.Note, ev.Price
	case node.EventFilled:
		if _, ok := e.risk.env.orders[ev.ClientOrderID]; !ok {
			return
		}
		b := e.agentBookOf(ev.Venue)
		q := ev.Quantity
		if ev.Side == command.Sell {
			q = q.Neg()
		}
		b.pos[ev.Symbol] = b.pos[ev.Symbol].Add(q)
		b.last[ev.Symbol] = ev.Price
		b.cash = b.cash.Sub(q.Mul(ev.Price)).Sub(ev.Fee).Sub(ev.FeeValue) // a fee in another asset at its worth then
	}
}

// agentWrite names whose write the command being applied is for the
// envelope: "agent" when the agent key signed it, "deployment dep-..."
// when a deployment the agent key created sends it, else "".
func (e *engine) agentWrite() string {
	switch {
	case e.risk.key == node.KeyAgent:
		return "agent"
	case e.risk.origin != "" && e.risk.env.deps[e.risk.origin]:
		return "deployment " + e.risk.origin
	}
	return ""
}

// agentDeployments wraps the deployments' create endpoint: a deployment
// created with the agent key is recorded (journaled) as the agent's.
func (s *Server) agentDeployments(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		keyID, _ := r.Context().Value(keyIDContext{}).(string)
		if r.Method != http.MethodPost || keyID != node.KeyAgent {
			h.ServeHTTP(w, r)
			return
		}
		rec := &createdRecorder{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(rec, r)
		var d struct {
			ID string `json:"id"`
		}
		if rec.status/100 != 2 || json.Unmarshal(rec.body.Bytes(), &d) != nil || d.ID == "" {
			return
		}
		err := s.do(context.WithoutCancel(r.Context()), func() {
			s.eng.emit(node.Event{Time: s.cfg.Now(), Kind: EventAgentDeployment, Note: d.ID})
			if err := s.commit(&journal.Batch{Events: s.eng.take()}); err != nil {
				s.log.Error("the agent's deployment could not be journaled", "deployment", d.ID, "err", err)
			}
		})
		if err != nil {
			s.log.Error("the agent's deployment could not be recorded", "deployment", d.ID, "err", err.Message)
		}
	})
}

// createdRecorder passes a response on and keeps its status and (the
// first 64 KiB of) its body.
type createdRecorder struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (c *createdRecorder) WriteHeader(code int) {
	c.status = code
	c.ResponseWriter.WriteHeader(code)
}

func (c *createdRecorder) Write(b []byte) (int, error) {
	if room := 64<<10 - c.body.Len(); room > 0 {
		c.body.Write(b[:min(len(b), room)])
	}
	return c.ResponseWriter.Write(b)
}

// checkEnvelope refuses an agent's order past its envelope on c's venue:
// a new order the agent's write places, or a modify of a resting order
// of the agent's (whoever sends it: its fills are the agent's) that
// raises the order's quantity or notional, judged as the new order it
// leaves. A modify that raises neither passes, as an order that reduces
// the agent's position does.
func (e *engine) checkEnvelope(c command.Command) *rejection {
	lim, ok := e.cfg.Agent.Envelope[c.Venue]
	if !ok {
		return nil
	}
	switch c.Verb {
	case command.SubmitOrder:
		if e.agentWrite() == "" {
			return nil
		}
		q := c.Quantity
		if c.Side == command.Sell {
			q = q.Neg()
		}
		return e.envelopeOrder(lim, c.Venue, c.Symbol, q, "")
	case command.Modify:
		o, found := e.find(c.Venue, c.OrderID, c.ClientOrderID)
		if _, ours := e.risk.env.orders[o.ClientOrderID]; !found || !ours || o.ClientOrderID == "" {
			return nil
		}
		m := o
		if !c.Quantity.IsZero() {
			m.Quantity = c.Quantity
		}
		before, after := o.Remaining(), m.Remaining()
		atBefore, atAfter := guardrail.ModifiedAt(o.View(), command.Command{}), guardrail.ModifiedAt(o.View(), c)
		if !after.GreaterThan(before) && !after.Mul(atAfter).GreaterThan(before.Mul(atBefore)) {
			return nil // it lowers (or keeps) the order: always taken
		}
		q := decimal.Max(after, decimal.Zero)
		if o.Side == command.Sell {
			q = q.Neg()
		}
		return e.envelopeOrder(lim, c.Venue, o.Symbol, q, o.ID)
	}
	return nil
}

// envelopeOrder refuses an order of the agent's on venue's symbol for the
// signed quantity q (a modified order: its remaining quantity after the
// modify; replacing is that order's id, left out of the working orders)
// when it opens or adds past the envelope lim.
func (e *engine) envelopeOrder(lim project.AgentEnvelope, venue, symbol string, q decimal.Decimal, replacing string) *rejection {
	now := e.now()
	loss, held := e.agentLoss(venue, now)
	b := e.agentBookOf(venue)
	pos := b.pos[symbol]
	after := pos.Add(q)
	if after.Abs().LessThanOrEqual(pos.Abs()) && after.Sign()*pos.Sign() >= 0 {
		return nil // it reduces the agent's position: always taken
	}
	if m := lim.MaxDailyLoss; m.IsPositive() && loss.GreaterThanOrEqual(m) {
		return &rejection{code: "agent_envelope", reason: fmt.Sprintf("the agent's loss on %s today (UTC) is %s, at or past its envelope's max_daily_loss %s: only orders that reduce its positions are taken until the next UTC day",
			venue, loss.StringFixed(2), m)}
	}
	if m := lim.MaxNotional; m.IsPositive() {
		px, okp := e.venues[venue].Mark(symbol)
		if !okp || !px.IsPositive() {
			return &rejection{code: "agent_envelope", reason: fmt.Sprintf("no mark for %s on %s: cannot value the agent's position against its envelope's max_notional %s", symbol, venue, m)}
		}
		// The worst the symbol can come to: the position with every
		// working order of the agent's on one side filled, this one too.
		buys, sells := e.agentWorking(venue, symbol, replacing)
		worst := decimal.Max(pos.Add(buys).Add(decimal.Max(q, decimal.Zero)).Abs(), pos.Sub(sells).Add(decimal.Min(q, decimal.Zero)).Abs())
		total := held.Sub(pos.Abs().Mul(px)).Add(worst.Mul(px))
		if total.GreaterThan(m) {
			working := ""
			if buys.IsPositive() || sells.IsPositive() {
				working = fmt.Sprintf(" with its working orders (buy %s, sell %s) filled", buys, sells)
			}
			return &rejection{code: "agent_envelope", reason: fmt.Sprintf("the agent would hold %s on %s (its positions at the marks, %s %s after this order%s), past its envelope's max_notional %s",
				total.StringFixed(2), venue, worst, symbol, working, m)}
		}
	}
	return nil
}

// agentWorking is what the agent's open orders on venue's symbol still
// buy and sell, but for the order with id except.
func (e *engine) agentWorking(venue, symbol, except string) (buys, sells decimal.Decimal) {
	v := e.venues[venue]
	if v == nil {
		return buys, sells
	}
	for _, o := range v.OpenOrders() {
		if _, ours := e.risk.env.orders[o.ClientOrderID]; !ours || o.Symbol != symbol || o.Inactive || (except != "" && o.ID == except) {
			continue
		}
		if o.Side == command.Buy {
			buys = buys.Add(o.Remaining())
		} else {
			sells = sells.Add(o.Remaining())
		}
	}
	return buys, sells
}

// recordAgentOrder records an accepted write's orders as the agent's.
func (e *engine) recordAgentOrder(c command.Command) {
	who := e.agentWrite()
	if who == "" || c.Verb != command.SubmitOrder || c.ClientOrderID == "" {
		return
	}
	e.emit(node.Event{Time: e.now(), Kind: node.EventAgentOrder, Venue: c.Venue, ClientOrderID: c.ClientOrderID, Note: who})
	for _, l := range c.Legs() {
		if cid := l.Command.ClientOrderID; cid != "" && cid != c.ClientOrderID {
			e.emit(node.Event{Time: e.now(), Kind: node.EventAgentOrder, Venue: c.Venue, ClientOrderID: cid, Note: who})
		}
	}
}

// envelopeStatus is every envelope as risk_status shows it: the held
// notional and the day's loss against their limits.
func (e *engine) envelopeStatus(now time.Time) []guardrail.Headroom {
	names := make([]string, 0, len(e.cfg.Agent.Envelope))
	for v := range e.cfg.Agent.Envelope {
		names = append(names, v)
	}
	sort.Strings(names)
	var out []guardrail.Headroom
	for _, v := range names {
		lim := e.cfg.Agent.Envelope[v]
		b := e.agentBookOf(v)
		value, held := e.agentValue(v, b)
		loss := decimal.Zero
		if b.day == now.UTC().Format(time.DateOnly) {
			loss = b.dayStart.Sub(value)
		}
		scope := "agent on " + v
		if m := lim.MaxNotional; m.IsPositive() {
			out = append(out, guardrail.Headroom{Check: "agent_notional", Scope: scope, Limit: m.String(), Used: held.StringFixed(2),
				Headroom: decimal.Max(decimal.Zero, m.Sub(held)).StringFixed(2)})
		}
		if m := lim.MaxDailyLoss; m.IsPositive() {
			h := guardrail.Headroom{Check: "agent_daily_loss", Scope: scope, Limit: m.String(), Used: loss.StringFixed(2),
				Headroom: decimal.Max(decimal.Zero, m.Sub(loss)).StringFixed(2), Window: "UTC day"}
			switch {
			case loss.GreaterThanOrEqual(m) && lim.CloseOnBreach:
				h.Note = "breached: opening orders refused; its positions closed (close_on_breach)"
			case loss.GreaterThanOrEqual(m):
				h.Note = "breached: opening orders refused"
			case lim.CloseOnBreach:
				h.Note = "close_on_breach"
			}
			out = append(out, h)
		}
	}
	return out
}

// checkEnvelopes is the mark step's part: with close_on_breach, a venue
// whose agent loss today is past max_daily_loss has the agent's positions
// closed, once that day (on the fold).
func (s *Server) checkEnvelopes(now time.Time) {
	e := s.eng
	defer func() { // a day's start recorded without a breach
		if evs := e.take(); len(evs) > 0 {
			if err := s.commit(&journal.Batch{Events: evs}); err != nil {
				s.log.Error("the agent's day could not be journaled", "err", err)
			}
		}
	}()
	for _, venue := range e.names {
		lim, ok := e.cfg.Agent.Envelope[venue]
		if !ok || !lim.MaxDailyLoss.IsPositive() {
			continue
		}
		loss, _ := e.agentLoss(venue, now)
		b := e.agentBookOf(venue)
		day := now.UTC().Format(time.DateOnly)
		if loss.LessThan(lim.MaxDailyLoss) || b.closed == day {
			continue
		}
		b.closed = day
		note := fmt.Sprintf("agent envelope on %s: the agent's loss today (UTC) %s is past max_daily_loss %s: its orders that open or add are refused until the next UTC day",
			venue, loss.StringFixed(2), lim.MaxDailyLoss)
		var closing []command.Command
		if lim.CloseOnBreach {
			closing = s.agentClosing(venue, b)
			var what []string
			for _, c := range closing {
				what = append(what, fmt.Sprintf("%s %s %s", c.Side, c.Quantity, c.Symbol))
			}
			if len(what) > 0 {
				note += "; close_on_breach closes its positions: " + strings.Join(what, ", ")
			} else {
				note += "; close_on_breach: the agent holds nothing there"
			}
		}
		entry := operatorAudit(now, "envelope-"+s.cfg.NewID(), node.KeyNode, node.ArmingEnvelope, node.Outcome{Status: node.Accepted, Detail: note})
		entry.Arming.Venue = venue
		if err := s.commit(&journal.Batch{Audit: []node.AuditEntry{entry}, Events: e.take()}); err != nil {
			s.log.Error("an agent envelope breach could not be audited; the node acts all the same", "venue", venue, "err", err)
		}
		s.log.Warn("agent envelope breached", "venue", venue, "why", note)
		for _, c := range closing {
			id := "tk-" + s.cfg.NewID()
			s.tickets.open(id)
			if err := s.enqueue(func() { s.apply(id, node.KeyNode, c, command.SanitizeReason(note)) }); err != nil {
				s.tickets.drop(id)
				s.log.Warn("agent envelope could not close", "venue", venue, "symbol", c.Symbol, "err", err.Message)
			}
		}
	}
}

// agentClosing are the market orders that close the agent's positions on
// venue (never past the account's own position there), each recorded as
// the agent's so its fill leaves the book flat.
func (s *Server) agentClosing(venue string, b *agentBook) []command.Command {
	e := s.eng
	syms := make([]string, 0, len(b.pos))
	for sym := range b.pos {
		syms = append(syms, sym)
	}
	sort.Strings(syms)
	var out []command.Command
	for _, sym := range syms {
		q := b.pos[sym]
		acct := e.venues[venue].Position(sym)
		if q.IsZero() || acct.Sign() != q.Sign() {
			continue
		}
		qty := decimal.Min(q.Abs(), acct.Abs())
		side := command.Sell
		if q.IsNegative() {
			side = command.Buy
		}
		c := command.Command{Verb: command.SubmitOrder, Venue: venue, Symbol: sym, Side: side, Type: command.Market, Quantity: qty,
			ClientOrderID: command.ClientOrderIDPrefix + s.cfg.NewID()}
		e.emit(node.Event{Time: e.now(), Kind: node.EventAgentOrder, Venue: venue, ClientOrderID: c.ClientOrderID, Note: "agent"})
		out = append(out, c)
	}
	return out
}

// checkAgentKey refuses an agent key that is short or the same as the
// observe or control key.
func checkAgentKey(observe, control, agent string) error {
	switch {
	case agent == "":
		return nil
	case len(agent) < MinKeyLength:
		return fmt.Errorf("%s must be at least %d characters; generate one (64 hex characters, as wicket init writes)", project.KeyAgent, MinKeyLength)
	case agent == observe || agent == control:
		return fmt.Errorf("%s is the same as the observe or control key, which would make the agent's writes no one's; give it its own value", project.KeyAgent)
	}
	return nil
}
