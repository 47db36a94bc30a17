package node

import (
	"fmt"
	"strings"

	"github.com/shopspring/decimal"

	"wicket/node/command"
)

// MarkUnprotected sets Unprotected, with its reason, on each open position
// of v that the protective orders able to fire do not cover in full: the
// working, active stop, stop_limit and trailing_stop orders of the
// position's symbol on the side that closes it, by the quantity they have
// left. A stop cannot fire when the node holds it (held reports that: a
// trigger the venue cannot hold, fired by the node only while the venue is
// armed) on a disarmed venue, or when the mark is already through it and
// it has not fired. Covered says how much the stops that can fire cover.
// why gives the reason when nothing protects a symbol ("" for the
// default: none is working); paper and real venues share this one rule.
// held may be nil (paper: every trigger fires on its marks).
func (v *Venue) MarkUnprotected(why func(symbol string) string, held func(Order) bool) {
	for i := range v.Positions {
		p := &v.Positions[i]
		p.Unprotected, p.UnprotectedReason, p.Covered = false, "", decimal.Zero
		if p.Quantity.IsZero() {
			continue
		}
		closing := command.Sell
		if p.Quantity.IsNegative() {
			closing = command.Buy
		}
		size := p.Quantity.Abs()
		covered := decimal.Zero
		var dead []string
		for _, o := range v.OpenOrders {
			if o.Symbol != p.Symbol || o.Side != closing || !o.Type.Protective() || !o.Status.Working() || o.Inactive {
				continue
			}
			if whyNot := v.cannotFire(o, p.Mark, held); whyNot != "" {
				dead = append(dead, whyNot)
				continue
			}
			covered = covered.Add(o.Remaining())
		}
		p.Covered = decimal.Min(covered, size)
		if covered.GreaterThanOrEqual(size) {
			continue
		}
		p.Unprotected = true
		var parts []string
		if covered.IsPositive() {
			parts = append(parts, fmt.Sprintf("the protective orders that can fire cover %s of %s (%s %%)",
				covered, size, covered.Div(size).Mul(decimal.NewFromInt(100)).Round(1)))
		}
		parts = append(parts, dead...)
		if !covered.IsPositive() && len(dead) == 0 {
			r := ""
			if why != nil {
				r = why(p.Symbol)
			}
			if r == "" {
				r = "no protective order (stop, stop_limit, trailing_stop or a bracket's stop_loss) is working on the " + string(closing) + " side; none was asked for"
			}
			parts = append(parts, r)
		}
		p.UnprotectedReason = strings.Join(parts, "; ")
	}
}

// cannotFire says why protective order o cannot fire ("" when it can): it
// is held by the node on a disarmed venue, or mark is already through its
// trigger (a triggered stop_limit's: its limit) and it has not fired.
func (v *Venue) cannotFire(o Order, mark decimal.Decimal, held func(Order) bool) string {
	if held != nil && held(o) && !v.Armed {
		return fmt.Sprintf("%s %s %s is held by the node, which fires it only while %s is armed, and %s is disarmed", o.ID, o.Type, o.Side, v.Name, v.Name)
	}
	level, what := o.StopPrice, "stop"
	if o.Type == command.StopLimit && o.Triggered {
		level, what = o.Price, "limit"
	}
	if level.IsZero() || mark.IsZero() {
		return ""
	}
	// A sell stop protects a long: the mark below it is through it; a buy
	// stop protects a short: the mark above it.
	through := (o.Side == command.Sell && mark.LessThan(level)) || (o.Side == command.Buy && mark.GreaterThan(level))
	if !through {
		return ""
	}
	return fmt.Sprintf("the mark %s is already through the %s %s of %s %s (%s %%) and it has not fired", mark, what, level, o.ID, o.Type,
		mark.Sub(level).Abs().Div(level).Mul(decimal.NewFromInt(100)).Round(2))
}
