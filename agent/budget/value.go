package budget

import (
	"github.com/shopspring/decimal"

	"wicket/node/command"
	"wicket/node/guardrail"
)

// Notional values a command for the notional budget at the marks of view
// (the snapshot its preview read; nil when none was read):
//   - submit_order: quantity × limit price, or × the mark for a market order;
//   - modify: the order's quantity × price after the change (the open
//     order's own values fill what the modify leaves unchanged);
//   - every other verb places no new order and is worth zero.
//
// valued is false when a value is needed but unknown (a market order
// without a mark, a modify of an order the view does not show).
func Notional(c command.Command, view guardrail.View) (n decimal.Decimal, valued bool) {
	switch c.Verb {
	case command.SubmitOrder:
		// Valued as the guardrail values it: a limit at its limit, a stop
		// at its stop, a trailing stop at its first stop, a market order
		// (and nothing else) at the mark; an oco at its dearest leg.
		var mark decimal.Decimal
		haveMark := false
		if view != nil {
			mark, haveMark = view.Mark(c.Venue, c.Symbol)
			haveMark = haveMark && mark.IsPositive()
		}
		at, _, ok := guardrail.At(c, mark, haveMark)
		if !ok || !at.IsPositive() {
			return decimal.Zero, false
		}
		return c.Quantity.Mul(at), true
	case command.Modify:
		if view == nil {
			return decimal.Zero, false
		}
		o, ok := view.OpenOrder(c.Venue, c.OrderID, c.ClientOrderID)
		if !ok {
			return decimal.Zero, false
		}
		qty, price := o.Quantity, o.Price
		if !c.Quantity.IsZero() {
			qty = c.Quantity
		}
		if !c.Price.IsZero() {
			price = c.Price
		}
		return qty.Mul(price), true
	}
	return decimal.Zero, true
}
