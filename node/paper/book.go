package paper

import (
	"fmt"
	"slices"
	"sort"
	"wicket/node"
	"wicket/node/command"
	"wicket/node/guardrail"

	"github.com/shopspring/decimal"
)

// Apply changes the venue by one event. It is the only way the venue's
// orders, positions and cash change, live and on replay.
func (v *Venue) Apply(ev node.Event) error {
	switch ev.Kind {
	case node.EventVenueOpened:
		v.opened, v.cash = true, ev.Cash
		return nil
	case node.EventAccepted:
		if ev.Order == nil || ev.Order.ID == "" {
			return fmt.Errorf("event %d: order_accepted without an order", ev.Seq)
		}
		if v.orders[ev.Order.ID] != nil {
			return fmt.Errorf("event %d: order %s accepted twice", ev.Seq, ev.Order.ID)
		}
		o := *ev.Order
		v.orders[o.ID] = &o
		if o.Group != "" {
			v.groups[o.Group] = append(v.groups[o.Group], o.ID)
		}
		if o.Status == node.OrderCanceled { // refused at placement; Note says why
			v.unguard(&o, o.Note)
			return nil
		}
		if o.Status != node.OrderPending {
			o.Status = node.OrderOpen
		}
		v.open = append(v.open, o.ID)
		return nil
	}
	o := v.orders[ev.OrderID]
	if o == nil {
		return fmt.Errorf("event %d: %s for unknown order %s on %s", ev.Seq, ev.Kind, ev.OrderID, v.cfg.Name)
	}
	if !o.Status.Working() {
		return fmt.Errorf("event %d: %s for order %s, which is %s", ev.Seq, ev.Kind, o.ID, o.Status)
	}
	o.Updated = ev.Time
	switch ev.Kind {
	case node.EventAcked:
		if o.Status != node.OrderPending {
			return fmt.Errorf("event %d: order %s acknowledged while %s", ev.Seq, o.ID, o.Status)
		}
		o.Status, o.VenueOrderID = node.OrderOpen, ev.VenueOrderID
		if ev.Note != "" {
			o.Note = ev.Note
		}
	case node.EventFailed:
		v.close(o, node.OrderFailed, ev.Note)
	case node.EventFilled:
		if ev.Quantity.GreaterThan(o.Remaining()) || !ev.Quantity.IsPositive() {
			return fmt.Errorf("event %d: fill of %s exceeds order %s's remaining %s", ev.Seq, ev.Quantity, o.ID, o.Remaining())
		}
		total := o.Filled.Add(ev.Quantity)
		o.AveragePrice = o.AveragePrice.Mul(o.Filled).Add(ev.Price.Mul(ev.Quantity)).DivRound(total, avgPlaces)
		o.Filled = total
		if o.Remaining().IsZero() {
			v.close(o, node.OrderFilled, "")
		}
		v.book(ev)
		if o.Leg == command.LegEntry { // its exits are sized to what it filled
			for _, id := range v.groups[o.Group] {
				if c := v.orders[id]; c.Parent == o.ID && c.Status.Working() {
					c.Quantity, c.Inactive = decimal.Max(o.Filled, c.Filled), false
				}
			}
		}
	case node.EventCanceled:
		v.close(o, node.OrderCanceled, ev.Note)
		v.unguard(o, ev.Note)
	case node.EventTriggered:
		if o.Type != command.StopLimit || o.Triggered {
			return fmt.Errorf("event %d: trigger of order %s, a %s order (triggered %v)", ev.Seq, o.ID, o.Type, o.Triggered)
		}
		o.Triggered = true
	case node.EventTrailed:
		if o.Type != command.TrailingStop || !ev.Price.IsPositive() {
			return fmt.Errorf("event %d: trailing move of order %s, a %s order, to %s", ev.Seq, o.ID, o.Type, ev.Price)
		}
		o.TrailBest = ev.Price
		o.StopPrice = guardrail.TrailingStop(o.Side, o.TrailAmount, o.TrailPercent, ev.Price)
	case node.EventModified:
		if ev.Quantity.IsPositive() {
			if ev.Quantity.LessThanOrEqual(o.Filled) {
				return fmt.Errorf("event %d: new quantity %s is not above the filled %s", ev.Seq, ev.Quantity, o.Filled)
			}
			o.Quantity = ev.Quantity
		}
		if ev.Price.IsPositive() {
			o.Price = ev.Price
		}
		if ev.StopPrice.IsPositive() {
			o.StopPrice = ev.StopPrice
		}
		if ev.TrailAmount.IsPositive() || ev.TrailPercent.IsPositive() {
			if o.Type != command.TrailingStop {
				return fmt.Errorf("event %d: new trail for order %s, a %s order", ev.Seq, o.ID, o.Type)
			}
			o.TrailAmount, o.TrailPercent = ev.TrailAmount, ev.TrailPercent
			o.StopPrice = guardrail.TrailingStop(o.Side, o.TrailAmount, o.TrailPercent, o.TrailBest)
		}
		if ev.VenueOrderID != "" {
			o.VenueOrderID = ev.VenueOrderID
		}
	default:
		return fmt.Errorf("event %d: kind %q is not a venue event", ev.Seq, ev.Kind)
	}
	return nil
}

// unguard remembers a protective order that ended without filling, for
// the snapshot's reason when its position is left unprotected.
func (v *Venue) unguard(o *node.Order, note string) {
	if o.Type.Protective() {
		v.unguarded[o.Symbol] = fmt.Sprintf("its last protective order, %s %s %s (%s), was canceled without filling: %s", o.ID, o.Type, o.Side, o.ClientOrderID, note)
	}
}

func (v *Venue) close(o *node.Order, status node.OrderStatus, note string) {
	o.Status = status
	if note != "" {
		o.Note = note
	}
	if i := slices.Index(v.open, o.ID); i >= 0 {
		v.open = slices.Delete(v.open, i, i+1)
	}
}

// book moves cash and the position for a fill.
func (v *Venue) book(ev node.Event) {
	signed := ev.Quantity
	if ev.Side == command.Sell {
		signed = signed.Neg()
	}
	v.cash = v.cash.Sub(signed.Mul(ev.Price)).Sub(ev.Fee)
	v.fees = v.fees.Add(ev.Fee)
	p := v.positions[ev.Symbol]
	if p == nil {
		p = &position{}
		v.positions[ev.Symbol] = p
	}
	switch {
	case p.qty.IsZero() || p.qty.Sign() == signed.Sign(): // open or add
		total := p.qty.Abs().Add(ev.Quantity)
		p.avg = p.avg.Mul(p.qty.Abs()).Add(ev.Price.Mul(ev.Quantity)).DivRound(total, avgPlaces)
		p.qty = p.qty.Add(signed)
	default: // reduce, close or flip
		closing := decimal.Min(p.qty.Abs(), ev.Quantity)
		dir := decimal.NewFromInt(int64(p.qty.Sign()))
		p.realized = p.realized.Add(closing.Mul(ev.Price.Sub(p.avg)).Mul(dir))
		p.qty = p.qty.Add(signed)
		switch {
		case p.qty.IsZero():
			p.avg = decimal.Zero
		case p.qty.Sign() == signed.Sign(): // flipped: the rest opened at this price
			p.avg = ev.Price
		}
	}
}

// Snapshot is the venue's state for the wire.
func (v *Venue) Snapshot() node.Venue {
	out := node.Venue{
		Name: v.cfg.Name, Kind: Kind, Currency: v.cfg.Currency, Symbols: v.Symbols(),
		QuantityDecimals: v.cfg.QuantityDecimals, PriceDecimals: v.cfg.PriceDecimals,
		Cash: v.cash, Fees: v.fees, Marks: map[string]decimal.Decimal{},
		Positions: []node.Position{}, OpenOrders: v.OpenOrders(),
	}
	for s, m := range v.marks {
		out.Marks[s] = m
	}
	equity := v.cash
	symbols := make([]string, 0, len(v.positions))
	for s := range v.positions {
		symbols = append(symbols, s)
	}
	sort.Strings(symbols)
	for _, s := range symbols {
		p := v.positions[s]
		out.RealizedPnL = out.RealizedPnL.Add(p.realized)
		if p.qty.IsZero() && p.realized.IsZero() {
			continue
		}
		pos := node.Position{Symbol: s, Quantity: p.qty, AveragePrice: p.avg, RealizedPnL: p.realized}
		if m, ok := v.marks[s]; ok {
			pos.Mark = m
			pos.MarketValue = p.qty.Mul(m)
			pos.UnrealizedPnL = p.qty.Mul(m.Sub(p.avg)).Round(moneyPlaces)
		}
		equity = equity.Add(pos.MarketValue)
		out.UnrealizedPnL = out.UnrealizedPnL.Add(pos.UnrealizedPnL)
		out.Positions = append(out.Positions, pos)
	}
	out.Equity = equity.Round(moneyPlaces)
	out.Groups = v.groupsOf(out.OpenOrders)
	out.MarkUnprotected(func(symbol string) string {
		if r, ok := v.unguarded[symbol]; ok {
			return "no protective order is working; " + r
		}
		return ""
	}, nil) // paper fires every trigger on its marks
	return out
}

// groupsOf lists the compound orders with a working leg among open, in
// the order their first open leg appears.
func (v *Venue) groupsOf(open []node.Order) []node.Group {
	var out []node.Group
	seen := map[string]bool{}
	for _, o := range open {
		if o.Group == "" || seen[o.Group] {
			continue
		}
		seen[o.Group] = true
		g := node.Group{ID: o.Group, Type: v.groupType(o.Group), Symbol: o.Symbol, State: node.GroupActive}
		for _, id := range v.groups[o.Group] {
			l := v.orders[id]
			g.Legs = append(g.Legs, node.GroupLeg{Leg: l.Leg, OrderID: l.ID, ClientID: l.ClientOrderID, Type: l.Type, Side: l.Side,
				Quantity: l.Quantity, Filled: l.Filled, Status: l.Status, Inactive: l.Inactive})
			if l.Inactive && l.Status.Working() {
				g.State = node.GroupAwaitingEntry
			}
		}
		switch g.State {
		case node.GroupAwaitingEntry:
			g.Note = "the entry is working; its exits wait, inactive, to be sized to what it fills"
		case node.GroupActive:
			g.Note = "the first exit to fill cancels the rest"
		}
		out = append(out, g)
	}
	return out
}
