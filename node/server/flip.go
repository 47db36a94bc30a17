package server

import (
	"fmt"

	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/node"
	"wicket/node/command"
	"wicket/node/guardrail"
)

// Client order id suffixes of the two orders a split flip sends: derived
// from the order's own, so a retried submit is refused as a duplicate and
// a restarted node reconciles both by them, never sending either twice.
const (
	flipCloseSuffix = node.FlipCloseSuffix
	flipOpenSuffix  = node.FlipOpenSuffix
)

// flips is the position a submit_order c would take through zero at a
// margined venue (binance-futures), and whether it would.
func (e *engine) flips(c command.Command) (decimal.Decimal, bool) {
	r := e.remotes[c.Venue]
	if r == nil || r.cfg.Kind != project.KindBinanceFutures || c.Verb != command.SubmitOrder {
		return decimal.Zero, false
	}
	pos := r.Position(c.Symbol)
	return pos, !guardrail.CheckFlip(c.Symbol, c.Side, c.Quantity, pos).OK
}

// splits reports whether c is a flip the venue's policy sends split: a
// simple market order at a venue with flip = "split".
func (e *engine) splits(c command.Command) (decimal.Decimal, bool) {
	pos, ok := e.flips(c)
	return pos, ok && c.Type == command.Market && e.remotes[c.Venue].cfg.FlipPolicy() == project.FlipSplit
}

// checkFlip adds the flip check (guardrail.CheckFlip) to a submit_order's
// report at a margined venue: with flip = "refuse", or for an order split
// cannot send (a resting one), an order that would close the position, as
// the venue last reported it, and open the opposite one is refused; a
// market one with flip = "split" passes naming the two orders it becomes.
// Any submit whose client order id a split already derived from is
// refused as a duplicate. It reports whether it passed.
func (e *engine) checkFlip(c command.Command, rep *guardrail.Report) bool {
	r := e.remotes[c.Venue]
	if r == nil || r.cfg.Kind != project.KindBinanceFutures {
		return true
	}
	if c.Verb == command.Modify {
		return e.checkModifyFlip(c, r, rep)
	}
	if c.Verb != command.SubmitOrder {
		return true
	}
	ch := guardrail.CheckFlip(c.Symbol, c.Side, c.Quantity, r.Position(c.Symbol))
	switch pos, split := e.splits(c); {
	case split:
		ch.OK = true
		ch.Detail = fmt.Sprintf("flip = \"split\": sent as market %s %s %s reduce-only (client order id %s), then market %s %s (%s) once the venue takes the close",
			c.Side, pos.Abs(), c.Symbol, c.ClientOrderID+flipCloseSuffix, c.Side, c.Quantity.Sub(pos.Abs()), c.ClientOrderID+flipOpenSuffix)
	case !ch.OK && r.cfg.FlipPolicy() == project.FlipSplit:
		ch.Detail += fmt.Sprintf(" (flip = \"split\" splits market orders only; this is %s)", c.Type)
	case !ch.OK:
		ch.Detail += " (the venue's flip = \"refuse\")"
	}
	for _, cid := range []string{c.ClientOrderID + flipCloseSuffix, c.ClientOrderID + flipOpenSuffix} {
		if ref, dup := e.byCID[cid]; dup && c.ClientOrderID != "" { // a retry of a split flip, whatever the position is now
			ch.Name, ch.OK = "duplicate_client_order_id", false
			ch.Detail = fmt.Sprintf("client_order_id %s was already split: %s is order %s; a retried submit never places a second order", c.ClientOrderID, cid, ref.id)
			break
		}
	}
	rep.Checks = append(rep.Checks, ch)
	rep.OK = rep.OK && ch.OK
	return ch.OK
}

// checkModifyFlip is the flip check of a modify that sets a new
// quantity at a margined venue: the order's unfilled remainder at the new
// quantity must not take the position through zero. A modify is never
// split (it changes one order in place), so such a modify is refused
// whatever the venue's flip policy, naming the two orders to send
// instead. A reduce-only order cannot flip: the venue caps it at the
// position.
func (e *engine) checkModifyFlip(c command.Command, r *remote, rep *guardrail.Report) bool {
	o, ok := e.find(c.Venue, c.OrderID, c.ClientOrderID)
	if !ok || !c.Quantity.IsPositive() || o.ReduceOnly {
		return true
	}
	ch := guardrail.CheckFlip(o.Symbol, o.Side, c.Quantity.Sub(o.Filled), r.Position(o.Symbol))
	if !ch.OK {
		ch.Detail = fmt.Sprintf("modify of order %s to quantity %s: %s (a modify is never split; cancel it and send those)", o.ID, c.Quantity, ch.Detail)
	}
	rep.Checks = append(rep.Checks, ch)
	rep.OK = rep.OK && ch.OK
	return ch.OK
}

// splitSubmit sends a flip as two market orders through the node's one
// write path (placeIntent, submitCall, applySubmit): the reduce-only
// close of the position is journaled on the fold before the venue hears
// of it; from the lane it is sent once, its answer applied; only if the
// venue took it (open or filled, neither refused nor lost) is the opening
// remainder journaled and sent (placeRemote). A node that stops between
// them never sends the remainder; the outcome names whatever was sent.
func (v *remoteVerbs) splitSubmit(c command.Command, pos decimal.Decimal) laneCall {
	s, name := v.s, c.Venue
	closing := paperOrder(c, "", "")
	closing.ClientOrderID, closing.Quantity, closing.ReduceOnly, closing.TimeInForce = c.ClientOrderID+flipCloseSuffix, pos.Abs(), true, c.TIF()
	closing.Note = "the close of a split flip (" + c.ClientOrderID + ")"
	closing, err := s.placeIntent(name, closing, v.id)
	if err != nil {
		return v.finish(c, journalRefusal(c, v.out.Time, err))
	}
	return func() func() {
		vo, verr := s.submitCall(name, closing)
		s.onFold(func() {
			closing = s.applySubmit(name, closing, vo, verr)
			s.commitStep(name) //nolint:errcheck // a failure rebuilt the engine, which reconciles
		})
		if closing.Status != node.OrderOpen && closing.Status != node.OrderFilled {
			return func() {
				s.describeRemote(&v.out, closing)
				v.out.OrderIDs = []string{closing.ID}
				v.out.Detail = fmt.Sprintf("split flip: the close %s is %s, so the opening %s %s was not sent; %s", closing.ID, closing.Status,
					c.Side, c.Quantity.Sub(pos.Abs()), v.out.Detail)
			}
		}
		opening := paperOrder(c, "", "")
		opening.ClientOrderID, opening.Quantity, opening.TimeInForce = c.ClientOrderID+flipOpenSuffix, c.Quantity.Sub(pos.Abs()), c.TIF()
		opening.Note = "the opening remainder of a split flip (" + c.ClientOrderID + ")"
		opening, err := s.placeRemote(name, opening, v.id)
		return func() {
			if err != nil {
				v.err = err
				return
			}
			s.describeRemote(&v.out, opening)
			v.out.OrderIDs = []string{closing.ID, opening.ID}
			v.out.Detail = fmt.Sprintf("split flip: close %s (%s %s %s reduce-only, %s) then open %s: %s", closing.ID, c.Side, closing.Quantity, c.Symbol,
				current(s.eng.remotes[name], closing).Status, opening.ID, v.out.Detail)
		}
	}
}
