package paper

import (
	"fmt"
	"slices"
	"time"
	"wicket/internal/intrabar"
	"wicket/node"
	"wicket/node/command"

	"github.com/shopspring/decimal"
)

// Match fills every resting limit order the current marks have reached, at
// its limit price, oldest first; then walks each symbol's resting stop,
// stop_limit and trailing_stop orders and oco legs through its mark by
// intrabar.Step, emitting the triggers, the trailing stops' moves and the
// fills (a leg's fill cancels the rest of its group). allow may veto a
// fill (the node's trading state); a vetoed order keeps resting, and so
// does one whose mark is not fresh at now (FreshMark).
func (v *Venue) Match(now time.Time, allow func(node.Order) bool, emit Emit) {
	for _, id := range slices.Clone(v.open) {
		o := v.orders[id]
		if o.Status != node.OrderOpen || o.Type != command.Limit || o.Group != "" {
			continue // a compound order's legs are walked with their group below
		}
		m, ok := v.marks[o.Symbol]
		if !ok || v.FreshMark(o.Symbol, now) != nil {
			continue
		}
		crossed := (o.Side == command.Buy && m.LessThanOrEqual(o.Price)) || (o.Side == command.Sell && m.GreaterThanOrEqual(o.Price))
		if crossed && allow(*o) {
			v.fill(o, o.Price, now, emit)
		}
	}
	bySymbol := map[string][]*node.Order{}
	var symbols []string
	for _, id := range v.open {
		o := v.orders[id]
		if o.Status != node.OrderOpen || (!o.Type.Protective() && o.Group == "") {
			continue
		}
		if bySymbol[o.Symbol] == nil {
			symbols = append(symbols, o.Symbol)
		}
		bySymbol[o.Symbol] = append(bySymbol[o.Symbol], o)
	}
	for _, s := range symbols {
		// A stale mark neither triggers, trails nor fills (max_mark_age).
		if m, ok := v.marks[s]; ok && v.FreshMark(s, now) == nil {
			v.step(bySymbol[s], intrabar.Mark(m), now, allow, emit)
		}
	}
}

// step walks one symbol's resting stops and compound orders through bar
// (a mark is a bar of one price; a tape's bar has four). A bracket's resting entry is the parent of its exits
// (intrabar.Order.Parent), so an entry and its exits fill by the rule in
// one walk, as in the backtest; the exits of one group cancel each other.
func (v *Venue) step(resting []*node.Order, bar intrabar.Bar[decimal.Decimal], now time.Time, allow func(node.Order) bool, emit Emit) {
	m := bar.Close
	held := make([]intrabar.Order[decimal.Decimal], len(resting))
	groups := map[string]int{}
	index := map[string]int{}
	for i, o := range resting {
		index[o.ID] = i
		held[i] = asIntrabar(o)
		if exitLeg(o) {
			if groups[o.Group] == 0 {
				groups[o.Group] = len(groups) + 1
			}
			held[i].Group = groups[o.Group]
		}
		if o.Inactive {
			if p, ok := index[o.Parent]; ok {
				held[i].Parent = p + 1 // the entry rests before its exits
			} else {
				held[i].Done = true // no resting entry can make it active
			}
		}
	}
	fills := intrabar.Step(bar, intrabar.Path, held, nil)
	var later []*node.Order // exits that became active and triggered in this walk
	for i, o := range resting {
		h := held[i]
		if o.Type == command.StopLimit && h.Triggered && !o.Triggered {
			if o.Inactive {
				later = append(later, o)
				continue
			}
			emit(v.triggered(o, m, now))
		}
		if o.Type == command.TrailingStop && !o.Inactive && !h.Best.Equal(o.TrailBest) {
			emit(node.Event{Time: now, Kind: node.EventTrailed, Venue: v.cfg.Name, OrderID: o.ID, ClientOrderID: o.ClientOrderID,
				Symbol: o.Symbol, Side: o.Side, Price: h.Best,
				Note: fmt.Sprintf("best mark %s: stop %s", h.Best, h.Stop)})
		}
	}
	for _, f := range fills {
		o := resting[f.Order]
		if o.Status != node.OrderOpen || o.Inactive || !allow(*o) {
			continue // an exit whose entry did not fill stays inactive
		}
		at := f.Price
		if f.Taker { // a triggered stop is a market order at the price the path met it: slippage applies
			at = v.slipped(f.Price, o.Side)
		}
		v.fill(o, at, now, emit)
		if exitLeg(o) {
			v.CancelGroup(o.Group, fmt.Sprintf("canceled: %s, another leg of %s %s, filled", o.ID, v.groupType(o.Group), o.Group), now, emit)
		}
	}
	for _, o := range later {
		if o.Status == node.OrderOpen && !o.Inactive && !o.Triggered {
			emit(v.triggered(o, m, now))
		}
	}
}

func (v *Venue) triggered(o *node.Order, m decimal.Decimal, now time.Time) node.Event {
	return node.Event{Time: now, Kind: node.EventTriggered, Venue: v.cfg.Name, OrderID: o.ID, ClientOrderID: o.ClientOrderID,
		Symbol: o.Symbol, Side: o.Side, Price: m,
		Note: fmt.Sprintf("stop %s traded at mark %s: resting as a limit at %s", o.StopPrice, m, o.Price)}
}

// groupType is "bracket" or "oco": what kind of compound order a group is.
func (v *Venue) groupType(group string) command.OrderType {
	for _, id := range v.groups[group] {
		if v.orders[id].Leg == command.LegEntry {
			return command.Bracket
		}
	}
	return command.OCO
}

// CancelGroup cancels the open orders of a compound order (an oco, a
// bracket), by the group id its legs carry (node.Order.Group), and
// returns their ids.
func (v *Venue) CancelGroup(group, note string, now time.Time, emit Emit) []string {
	var ids []string
	for _, id := range v.groups[group] {
		if o := v.orders[id]; o.Status == node.OrderOpen {
			ids = append(ids, id)
		}
	}
	for _, id := range ids {
		if o := v.orders[id]; o.Status == node.OrderOpen { // an entry's cancel may have taken its exits
			v.cancel(o, note, now, emit)
		}
	}
	return ids
}

// asIntrabar is a resting stop as the intrabar rule holds it.
func asIntrabar(o *node.Order) intrabar.Order[decimal.Decimal] {
	side := intrabar.Sell
	if o.Side == command.Buy {
		side = intrabar.Buy
	}
	h := intrabar.Order[decimal.Decimal]{Side: side, Stop: o.StopPrice}
	switch o.Type {
	case command.Limit:
		h.Kind, h.Limit = intrabar.Limit, o.Price
	case command.Stop:
		h.Kind = intrabar.Stop
	case command.StopLimit:
		h.Kind, h.Limit, h.Triggered = intrabar.StopLimit, o.Price, o.Triggered
	case command.TrailingStop:
		h.Kind, h.Best, h.Anchored = intrabar.TrailingStop, o.TrailBest, true
		h.Trail = o.TrailAmount
		if o.TrailPercent.IsPositive() {
			h.Trail, h.TrailFraction = o.TrailPercent.Shift(-2), true
		}
	}
	return h
}
