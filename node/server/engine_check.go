package server

import (
	"fmt"
	"wicket/node"
	"wicket/node/command"
	"wicket/node/guardrail"

	"github.com/shopspring/decimal"
)

// rejection says why the node refuses a command.
type rejection struct {
	code     string
	reason   string
	existing *node.Order
}

// check runs the node's rules on c without changing anything: the same
// verdict execute acts on and dry-run reports.
func (e *engine) check(c command.Command) (guardrail.Report, *rejection) {
	return e.checkFor(c, e.guard.CheckWith)
}

// checkFor is check with the guardrail's entry: CheckWith for a report
// shown whole, Admit for a command about to execute (risk.go).
func (e *engine) checkFor(c command.Command, guard func(command.Command, guardrail.View, *guardrail.Activity) guardrail.Report) (guardrail.Report, *rejection) {
	if c.Verb == command.SubmitOrder && c.ClientOrderID != "" {
		for _, l := range c.Legs() {
			cid := l.Command.ClientOrderID
			if ref, dup := e.byCID[cid]; dup {
				o, _ := e.venues[ref.venue].Order(ref.id)
				return guardrail.Report{}, &rejection{code: "duplicate_client_order_id", existing: &o,
					reason: fmt.Sprintf("client_order_id %s already belongs to order %s (%s %s %s %s, %s); a retried submit never places a second order",
						cid, o.ID, o.Type, o.Side, o.Quantity, o.Symbol, o.Status)}
			}
		}
	}
	c = e.groupTarget(c)
	if r := e.checkKill(c); r != nil {
		return guardrail.Report{}, r
	}
	if e.state == command.Halted {
		switch c.Verb {
		case command.CancelOrder, command.MassCancel, command.SetTradingState:
		default:
			return guardrail.Report{}, &rejection{code: "halted",
				reason: "the node is halted: only cancel_order, mass_cancel and set_trading_state are accepted; set the trading state to reduce_only or active to trade"}
		}
	}
	if r := e.checkArmed(c, e.now()); r != nil {
		return guardrail.Report{}, r
	}
	if r := e.remotes[c.Venue]; r != nil && (r.instruments == nil || !r.synced) && (c.Verb == command.SubmitOrder || c.Verb == command.Modify) {
		return guardrail.Report{}, &rejection{code: "venue_unavailable",
			reason: fmt.Sprintf("venue %s has not been reached yet (its instruments and account are unknown); the node keeps trying — check node_snapshot's connection", c.Venue)}
	}
	if r := e.checkFed(c); r != nil {
		return guardrail.Report{}, r
	}
	if r := e.remotes[c.Venue]; r != nil && c.Verb == command.SubmitOrder {
		var holds []node.Hold
		if c.Type.Rests() {
			var err error
			if holds, err = r.ex.Holds(groupOf(c)); err != nil {
				return guardrail.Report{}, &rejection{code: "unsupported_order_type",
					reason: fmt.Sprintf("%s (%s) cannot take this %s order: %s", c.Venue, r.cfg.Kind, c.Type, command.SanitizeReason(err.Error()))}
			}
		}
		if rj := e.checkFireID(c, holds); rj != nil {
			return guardrail.Report{}, rj
		}
	}
	if c.Verb == command.CancelOrder || c.Verb == command.Modify {
		if o, ok := e.find(c.Venue, c.OrderID, c.ClientOrderID); ok && o.Status == node.OrderPending {
			return guardrail.Report{}, &rejection{code: "order_pending", existing: &o,
				reason: fmt.Sprintf("order %s is pending: %s has not confirmed it yet (its answer may have been lost); %s", o.ID, c.Venue, pendingAdvice)}
		}
		if o, ok := e.find(c.Venue, c.OrderID, c.ClientOrderID); ok && o.Status != node.OrderOpen {
			return guardrail.Report{}, &rejection{code: "order_not_open", existing: &o,
				reason: fmt.Sprintf("order %s is already %s", o.ID, o.Status)}
		}
	}
	if c.Verb == command.Modify && c.OrderID == "" {
		if _, ext := e.external(c.Venue, c.ClientOrderID); ext {
			return guardrail.Report{}, &rejection{code: "external_order",
				reason: fmt.Sprintf("order %s on %s was not placed by this node: it can be canceled by naming it, never modified", c.ClientOrderID, c.Venue)}
		}
	}
	rep := guard(c, e, e.activity())
	e.checkLeverage(c, &rep) // a margined venue's leverage checks (leverage.go)
	e.checkFlip(c, &rep)     // an order through zero at a margined venue (flip.go)
	e.liftOverride(c, &rep)  // the operator's one-off override (override.go)
	if !rep.OK {
		failed := rep.Failed()
		code := codes[failed[0].Name]
		if code == "" {
			code = failed[0].Name // the [risk] checks' codes are their names
		}
		return rep, &rejection{code: code, reason: "node limits: " + rep.Summary() + overrideHint(c, rep)}
	}
	switch c.Verb {
	case command.SubmitOrder:
		v := e.venues[c.Venue]
		if r := e.checkReduceOnly(v, c.Symbol, c.Side, c.Quantity, ""); r != nil {
			return rep, r
		}
		at, _ := v.MarketPrice(c.Symbol, c.Side)
		if c.Type != command.Market && (c.Type != command.Bracket || c.Price.IsPositive()) { // a market bracket's entry: the market price
			mark, ok := v.Mark(c.Symbol)
			at, _, _ = guardrail.At(c, mark, ok) // an oco: its dearest leg, only one fills
		}
		return rep, e.checkCash(v, c.Symbol, c.Side, c.Quantity, at)
	case command.Modify:
		v := e.venues[c.Venue]
		o, _ := e.find(c.Venue, c.OrderID, c.ClientOrderID)
		qty := o.Quantity
		if !c.Quantity.IsZero() {
			qty = c.Quantity
		}
		price := guardrail.ModifiedAt(o.View(), c)
		if r := e.checkReduceOnly(v, o.Symbol, o.Side, qty, o.ID); r != nil {
			return rep, r
		}
		// The modified order is checked whole, at its new price: raising a
		// resting buy's limit must not spend cash the venue does not hold.
		return rep, e.checkCash(v, o.Symbol, o.Side, qty, price)
	}
	return rep, nil
}

// groupTarget is the cancel_order c names, as checks see it: one that
// names a compound order's leg that is no longer open (a bracket's filled
// entry, whose id is the group's) cancels the group's open legs, so it is
// checked as naming the first of them.
func (e *engine) groupTarget(c command.Command) command.Command {
	if c.Verb != command.CancelOrder {
		return c
	}
	o, ok := e.find(c.Venue, c.OrderID, c.ClientOrderID)
	if r := e.remotes[c.Venue]; ok && r != nil && r.keptExit(o) { // an exit the node keeps: its entry names the group
		if entry, _ := r.Order(o.Parent); entry.Status == node.OrderOpen {
			c.OrderID, c.ClientOrderID = entry.ID, ""
		}
		return c
	}
	if !ok || o.Group == "" || o.Status == node.OrderOpen || o.Status == node.OrderPending {
		return c
	}
	for _, x := range e.venues[c.Venue].OpenOrders() {
		if x.Group == o.Group && x.Status == node.OrderOpen {
			c.OrderID, c.ClientOrderID = x.ID, ""
			return c
		}
	}
	return c
}

// checkReduceOnly refuses, in reduce_only, an order that would increase a
// position: it must oppose the position, and together with the other open
// orders on its side (except the one being modified) not exceed it.
func (e *engine) checkReduceOnly(v venue, symbol string, side command.Side, qty decimal.Decimal, except string) *rejection {
	breaker := e.breakerReason(v.Name())
	if e.state != command.ReduceOnly && breaker == "" {
		return nil
	}
	pos := v.Position(symbol)
	working := qty
	groups := map[string]bool{} // an oco's legs fill once: counted once
	for _, o := range v.OpenOrders() {
		if o.Symbol == symbol && o.Side == side && o.ID != except && !groups[o.Group] {
			working = working.Add(o.Remaining())
			if o.Group != "" {
				groups[o.Group] = true
			}
		}
	}
	if reduces(pos, side, working) {
		return nil
	}
	if e.state != command.ReduceOnly {
		return &rejection{code: "reduce_only",
			reason: fmt.Sprintf("venue %s is reduce_only by its breaker (%s): %s %s %s (with %s already working on that side) would increase the position of %s; only orders that reduce it are accepted",
				v.Name(), breaker, side, qty, symbol, working.Sub(qty), pos)}
	}
	return &rejection{code: "reduce_only",
		reason: fmt.Sprintf("the node is reduce_only: %s %s %s (with %s already working on that side) would increase the position of %s; only orders that reduce it are accepted",
			side, qty, symbol, working.Sub(qty), pos)}
}

// checkCash refuses a buy whose part that opens or adds to a long position
// costs more (at the price the order is valued at, at — the limit, the
// mark plus slippage, a stop's price — plus fees) than the venue's cash.
func (e *engine) checkCash(v venue, symbol string, side command.Side, qty, at decimal.Decimal) *rejection {
	if r, ok := v.(*remote); ok && r.account.Margined { // futures: margin, not cash (leverage.go)
		return checkMargin(r, symbol, side, qty, at)
	}
	if side != command.Buy || !qty.IsPositive() {
		return nil
	}
	opening := qty
	if pos := v.Position(symbol); pos.IsNegative() {
		opening = decimal.Max(decimal.Zero, qty.Add(pos))
	}
	if opening.IsZero() {
		return nil
	}
	cost := opening.Mul(at).Add(v.Fee(opening, at))
	if cost.LessThanOrEqual(v.Cash()) {
		return nil
	}
	return &rejection{code: "insufficient_cash",
		reason: fmt.Sprintf("buying %s %s at %s costs %s with fees; %s holds %s cash", opening, symbol, at, cost, v.Name(), v.Cash())}
}
