package node

import "wicket/node/command"

// MarkUnprotected sets Unprotected on each open position of v that no
// protective order protects: none of v's open orders is an active stop,
// stop_limit or trailing_stop of the position's symbol on the side that
// closes it. why gives the reason for a symbol ("" for the default: none
// is working); paper and real venues share this one rule.
func (v *Venue) MarkUnprotected(why func(symbol string) string) {
	for i := range v.Positions {
		p := &v.Positions[i]
		p.Unprotected, p.UnprotectedReason = false, ""
		if p.Quantity.IsZero() {
			continue
		}
		closing := command.Sell
		if p.Quantity.IsNegative() {
			closing = command.Buy
		}
		if protectedBy(v.OpenOrders, p.Symbol, closing) {
			continue
		}
		p.Unprotected = true
		if why != nil {
			p.UnprotectedReason = why(p.Symbol)
		}
		if p.UnprotectedReason == "" {
			p.UnprotectedReason = "no protective order (stop, stop_limit, trailing_stop or a bracket's stop_loss) is working on the " + string(closing) + " side; none was asked for"
		}
	}
}

// protectedBy reports whether an active protective order of symbol on
// side is among orders.
func protectedBy(orders []Order, symbol string, side command.Side) bool {
	for _, o := range orders {
		if o.Symbol == symbol && o.Side == side && o.Type.Protective() && o.Status.Working() && !o.Inactive {
			return true
		}
	}
	return false
}
