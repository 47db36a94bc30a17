package guardrail

import (
	"wicket/node/command"

	"github.com/shopspring/decimal"
)

// GroupView is a View that also knows compound orders: a cancel_order that
// names a leg of an oco or bracket that is no longer open — a bracket's
// filled entry, whose order id is the group's — cancels the group's open
// legs at the node, so the client-side check finds it the same way.
type GroupView interface {
	View
	// GroupOpenLeg is the first open leg of the compound order one of
	// whose legs the ids name (the node's id or the client's), when that
	// leg is not open itself.
	GroupOpenLeg(venue, orderID, clientOrderID string) (Order, bool)
}

// groupCancel checks a cancel_order whose named order is not open but
// names a compound order with an open leg; false when it does not.
func (r *run) groupCancel() bool {
	gv, ok := r.view.(GroupView)
	if !ok {
		return false
	}
	leg, ok := gv.GroupOpenLeg(r.c.Venue, r.c.OrderID, r.c.ClientOrderID)
	if !ok {
		return false
	}
	return r.add("order", true, "group %s: the named leg is no longer open, so this cancels the group's open legs (the first: %s %s %s %s %s)",
		leg.Group, leg.ID, leg.Type, leg.Side, leg.Quantity, leg.Symbol)
}

// checkBracket checks a bracket leg by leg: the entry as an order of its
// own; each exit against the position the entry would leave and on the
// side of the entry's price that protects it (a sell take-profit above
// it, a sell stop-loss below; the price a limit entry fills at is its
// limit, or the mark when that is better; a market entry's, the mark);
// and that the exits cover the entry's quantity without exceeding it.
func (r *run) checkBracket(legs []command.Leg) {
	entry := intentOf(legs[0].Command)
	mark, haveMark := r.view.Mark(r.venue.Name, entry.symbol)
	haveMark = haveMark && mark.IsPositive()
	ref := sideRef{price: mark, what: "mark", ok: haveMark}
	if entry.typ == command.Limit {
		ref = sideRef{price: entry.limit, what: "entry price", ok: true}
		if haveMark && ((entry.side == command.Buy && mark.LessThan(entry.limit)) || (entry.side == command.Sell && mark.GreaterThan(entry.limit))) {
			ref.price = mark // a marketable entry fills at the mark
		}
	}
	r.leg = legs[0].Name
	r.checkOrder(entry)
	base := r.view
	r.view = afterEntry{View: base, venue: r.venue.Name, entry: entry}
	covered := true
	for _, l := range legs[1:] {
		r.leg = l.Name
		in := intentOf(l.Command)
		r.ref = &ref
		r.checkOrder(in)
		if in.typ == command.Limit {
			r.checkLimitSide(in, ref)
		}
		covered = covered && in.qty.Equal(entry.qty)
	}
	r.view, r.leg, r.ref = base, "", nil
	exit := legs[1].Command.Side
	r.add("legs", covered, "entry %s %s %s, then take_profit and stop_loss %s %s each: inactive until the entry fills, sized to what fills (never more), the first to fill cancels the other",
		entry.side, entry.qty, entry.symbol, exit, legs[1].Command.Quantity)
}

// afterEntry is a view whose position in the entry's symbol already holds
// the entry: a bracket's exits close what it opens.
type afterEntry struct {
	View
	venue string
	entry intent
}

func (a afterEntry) Position(venue, symbol string) decimal.Decimal {
	pos := a.View.Position(venue, symbol)
	if venue != a.venue || symbol != a.entry.symbol {
		return pos
	}
	if a.entry.side == command.Sell {
		return pos.Sub(a.entry.qty)
	}
	return pos.Add(a.entry.qty)
}

// Instrument passes a real venue's rules through when the view has them.
func (a afterEntry) Instrument(venue, symbol string) (Instrument, bool) {
	if iv, ok := a.View.(InstrumentView); ok {
		return iv.Instrument(venue, symbol)
	}
	return Instrument{}, false
}
