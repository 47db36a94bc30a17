// Package paper simulates a venue: cash, positions with average price and
// realized PnL, orders that fill against a mark price, fees and slippage,
// and the feed that moves the marks (a seeded random walk, or replayed
// closes).
//
// A Venue changes only by applying events (Apply); its decision methods
// (Place, Cancel, Modify, Match) emit the events that a command or a mark
// step causes, through a callback that must apply each one before the next
// decision. The node journals those events, and replaying them rebuilds the
// venue exactly.
//
// Matching rules: a market order fills in full at once at the mark plus
// slippage (buy) or minus slippage (sell); a limit order that is marketable
// fills at once at that price capped by its limit, otherwise it rests (gtc)
// or is canceled (ioc); a resting limit order fills in full at its limit
// price when the mark reaches it. Stop, stop_limit and trailing_stop orders
// rest and fill on each new mark by internal/intrabar, the rule the
// backtest fills by (a mark is a bar of one price): a stop fills at the
// mark plus slippage once the mark is at or through its stop (a gap fills
// worse than the stop); a stop_limit rests as a limit once triggered and
// fills at the mark when the mark is at or better than its limit; a
// trailing stop's stop follows the best mark since placement; an oco's two
// legs (node.Order.Group) are walked together and the first to fill
// cancels the other; a bracket's resting entry is walked with its exits,
// which wait inactive until it fills (node.Order.Parent), are sized to
// what it filled and are an oco from then on (on a recorded tape, bars
// walk the orders instead of marks, tape.go). A trigger
// and a trailing stop's move are events, so replay rebuilds them. Fees are
// fee_bps of the fill's notional.
//
// A venue fed by real marks (max_mark_age set) never fills against a mark
// older than that bound, nor one whose time is unknown (carried over from
// an earlier run, or the start price): a market order is then canceled
// with a note that gives the mark's age and the bound, and a limit order
// rests until a fresh mark reaches it.
//
// It never reads a clock, a random source or a file; never rounds a
// quantity; and never changes state except through Apply.
package paper

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/intrabar"
	"wicket/internal/project"
	"wicket/node"
	"wicket/node/command"
	"wicket/node/guardrail"
)

// Kind is what a paper venue reports as its kind.
const Kind = "paper"

// avgPlaces is the precision of average prices.
const avgPlaces = 10

// moneyPlaces is the precision of fees and derived money values.
const moneyPlaces = 8

// Emit receives each event a decision causes. It must apply the event to
// the venue (through the node, which numbers and journals it) before it
// returns, so the next decision sees the new state.
type Emit func(node.Event)

// Venue is one paper venue's state.
type Venue struct {
	cfg       project.Venue
	feeBps    decimal.Decimal
	slipBps   decimal.Decimal
	opened    bool
	cash      decimal.Decimal
	fees      decimal.Decimal
	positions map[string]*position
	orders    map[string]*node.Order // every order the venue has seen, by id
	open      []string               // open order ids, oldest first
	marks     map[string]decimal.Decimal
	marksAt   map[string]time.Time // when each fed mark was received; absent: unknown
	groups    map[string][]string  // a compound order's legs' ids, by group, in placement order
	// unguarded says, per symbol, which protective order last ended
	// without filling, and why: the snapshot's reason for an unprotected
	// position.
	unguarded map[string]string
	tape      tapeState // set while a recorded tape steps the venue (tape.go)
}

type position struct {
	qty      decimal.Decimal // signed
	avg      decimal.Decimal
	realized decimal.Decimal
}

// New makes an empty venue from its configuration. It holds no cash until a
// venue_opened event is applied.
func New(cfg project.Venue) *Venue {
	return &Venue{
		cfg:       cfg,
		feeBps:    decimal.NewFromFloat(cfg.FeeBps),
		slipBps:   decimal.NewFromFloat(cfg.SlippageBps),
		positions: map[string]*position{},
		orders:    map[string]*node.Order{},
		marks:     map[string]decimal.Decimal{},
		marksAt:   map[string]time.Time{},
		groups:    map[string][]string{},
		unguarded: map[string]string{},
	}
}

// Name is the venue's name.
func (v *Venue) Name() string { return v.cfg.Name }

// Opened reports whether the venue_opened event has been applied.
func (v *Venue) Opened() bool { return v.opened }

// Cash is the venue's cash.
func (v *Venue) Cash() decimal.Decimal { return v.cash }

// Symbols lists the configured symbols.
func (v *Venue) Symbols() []string { return slices.Clone(v.cfg.Symbols) }

// Mark is the current mark of symbol.
func (v *Venue) Mark(symbol string) (decimal.Decimal, bool) {
	m, ok := v.marks[symbol]
	return m, ok
}

// SetMark moves a mark whose time is unknown (a journaled or start mark).
// Marks are not events: the node stores the latest ones beside the
// journal.
func (v *Venue) SetMark(symbol string, price decimal.Decimal) {
	v.marks[symbol] = price
	delete(v.marksAt, symbol)
}

// SetMarkAt moves a mark that was received at at.
func (v *Venue) SetMarkAt(symbol string, price decimal.Decimal, at time.Time) {
	v.marks[symbol] = price
	v.marksAt[symbol] = at
}

// FreshMark reports why the venue must not fill against symbol's mark at
// now (nil when it may): it is older than the venue's max_mark_age, or its
// time is unknown. A venue without max_mark_age (simulated marks) always
// may.
func (v *Venue) FreshMark(symbol string, now time.Time) error {
	bound := v.cfg.MaxMarkAge
	if bound <= 0 {
		return nil
	}
	if _, ok := v.marks[symbol]; !ok {
		return nil // no mark at all: the caller's own refusal
	}
	at, ok := v.marksAt[symbol]
	if !ok {
		return fmt.Errorf("the mark of %s on %s has not come from its feed in this run (it is the start or last journaled price)", symbol, v.cfg.Name)
	}
	if age := now.Sub(at); age > bound {
		return fmt.Errorf("the mark of %s on %s is %s old, older than its max_mark_age %s", symbol, v.cfg.Name, age.Truncate(time.Millisecond), bound)
	}
	return nil
}

// Position is the signed quantity held of symbol.
func (v *Venue) Position(symbol string) decimal.Decimal {
	if p := v.positions[symbol]; p != nil {
		return p.qty
	}
	return decimal.Zero
}

// Held lists the symbols with a non-zero position, sorted.
func (v *Venue) Held() []string {
	var out []string
	for s, p := range v.positions {
		if !p.qty.IsZero() {
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

// Order returns an order by id.
func (v *Venue) Order(id string) (node.Order, bool) {
	if o := v.orders[id]; o != nil {
		return *o, true
	}
	return node.Order{}, false
}

// OpenOrders lists the open orders, oldest first.
func (v *Venue) OpenOrders() []node.Order {
	out := make([]node.Order, len(v.open))
	for i, id := range v.open {
		out[i] = *v.orders[id]
	}
	return out
}

// MarketPrice is what a market order on side would fill at now: the mark
// plus slippage for a buy (rounded up to the venue's price decimals), minus
// slippage for a sell (rounded down).
func (v *Venue) MarketPrice(symbol string, side command.Side) (decimal.Decimal, bool) {
	m, ok := v.marks[symbol]
	if !ok {
		return decimal.Decimal{}, false
	}
	return v.slipped(m, side), true
}

// slipped is what a taker on side pays or gets at price p: p plus
// slippage for a buy (rounded up to the venue's price decimals), minus
// slippage for a sell (rounded down).
func (v *Venue) slipped(p decimal.Decimal, side command.Side) decimal.Decimal {
	slip := p.Mul(v.slipBps).Shift(-4)
	if side == command.Buy {
		return p.Add(slip).RoundCeil(v.cfg.PriceDecimals)
	}
	return p.Sub(slip).RoundFloor(v.cfg.PriceDecimals)
}

// Fee is the fee on a fill of qty at price.
func (v *Venue) Fee(qty, price decimal.Decimal) decimal.Decimal {
	return qty.Mul(price).Mul(v.feeBps).Shift(-4).Round(moneyPlaces)
}

// Place takes a new order (ID, Symbol, Side, Type, Quantity, Price and
// TimeInForce set; the node has already checked it) and emits its
// acceptance and, when it can fill at once, its fill — or its cancellation
// when it is ioc and cannot.
func (v *Venue) Place(o node.Order, now time.Time, emit Emit) {
	o.Venue = v.cfg.Name
	o.Status = node.OrderOpen
	o.Filled = decimal.Zero
	o.AveragePrice = decimal.Decimal{}
	o.Created, o.Updated = now, now
	if o.TimeInForce == "" {
		o.TimeInForce = command.GTC
		if o.Type == command.Market {
			o.TimeInForce = command.IOC
		}
	}
	if o.Parent != "" {
		v.sizeExit(&o)
	}
	if o.Type == command.TrailingStop && o.Status == node.OrderOpen {
		m, ok := v.marks[o.Symbol]
		if !ok {
			o.Status = node.OrderCanceled
			o.Note = "no mark for " + o.Symbol + " to start the trailing stop from"
		} else {
			m = v.trailFrom(o.Symbol, o.Side, m) // on a tape: from the position's entry (tape.go)
			o.TrailBest, o.StopPrice = m, guardrail.TrailingStop(o.Side, o.TrailAmount, o.TrailPercent, m)
		}
	}
	accepted := o
	emit(node.Event{Time: now, Kind: node.EventAccepted, Venue: o.Venue, OrderID: o.ID, ClientOrderID: o.ClientOrderID,
		Symbol: o.Symbol, Side: o.Side, Quantity: o.Quantity, Price: o.Price, Order: &accepted, Note: o.Note})
	v.execute(o.ID, now, emit)
}

// sizeExit sets a bracket exit's state from its entry: inactive while the
// entry has filled nothing, else sized to what it filled; canceled at
// placement when the entry ended without a fill.
func (v *Venue) sizeExit(o *node.Order) {
	p := v.orders[o.Parent]
	switch {
	case p == nil:
		o.Status, o.Note = node.OrderCanceled, "its entry "+o.Parent+" is unknown"
	case p.Filled.IsPositive():
		o.Quantity, o.Inactive = p.Filled, false
	case !p.Status.Working():
		o.Status, o.Note = node.OrderCanceled, fmt.Sprintf("its entry %s was %s before it filled: nothing to protect (%s)", p.ID, p.Status, p.Note)
	default:
		o.Inactive = true
	}
}

// exitLeg reports whether o is an exit of a compound order (an oco's leg,
// a bracket's take-profit or stop-loss): it never fills at placement, and
// Match walks it with its group.
func exitLeg(o *node.Order) bool { return o.Group != "" && o.Leg != command.LegEntry }

// execute fills an open order at once if it can, and cancels an ioc order
// that cannot.
func (v *Venue) execute(id string, now time.Time, emit Emit) {
	o := v.orders[id]
	if o == nil || o.Status != node.OrderOpen || o.Type.Protective() || exitLeg(o) {
		return // a stop or a compound order's exit rests: Match fills it on a later mark
	}
	if o.Type == command.Market && v.tape.shut[o.Symbol] {
		return // on a tape, its market has no bar before its next open: StepTape fills it there
	}
	px, ok := v.MarketPrice(o.Symbol, o.Side)
	if !ok {
		if o.TimeInForce == command.IOC {
			v.cancel(o, "no mark for "+o.Symbol, now, emit)
		}
		return
	}
	if err := v.FreshMark(o.Symbol, now); err != nil {
		// a limit order rests for a fresh mark; anything else cannot wait
		if o.Type != command.Limit || o.TimeInForce == command.IOC {
			v.cancel(o, "not filled: "+err.Error(), now, emit)
		}
		return
	}
	if at, ok := v.marketable(o, px); ok {
		v.fill(o, at, now, emit)
		return
	}
	if o.TimeInForce == command.IOC {
		v.cancel(o, fmt.Sprintf("ioc: not marketable at mark %s", v.marks[o.Symbol]), now, emit)
	}
}

// marketable reports whether o can fill now against the mark, and at what
// price: the market price px, capped by a limit order's limit.
func (v *Venue) marketable(o *node.Order, px decimal.Decimal) (decimal.Decimal, bool) {
	if o.Type == command.Market {
		return px, true
	}
	m := v.marks[o.Symbol]
	if o.Side == command.Buy {
		return decimal.Min(px, o.Price), m.LessThanOrEqual(o.Price)
	}
	return decimal.Max(px, o.Price), m.GreaterThanOrEqual(o.Price)
}

func (v *Venue) fill(o *node.Order, price decimal.Decimal, now time.Time, emit Emit) {
	qty := o.Remaining()
	emit(node.Event{Time: now, Kind: node.EventFilled, Venue: v.cfg.Name, OrderID: o.ID, ClientOrderID: o.ClientOrderID,
		Symbol: o.Symbol, Side: o.Side, Quantity: qty, Price: price, Fee: v.Fee(qty, price)})
}

// cancel cancels o; a bracket entry canceled before it filled takes its
// inactive exits with it (one that filled in part leaves them sized to
// what it filled).
func (v *Venue) cancel(o *node.Order, note string, now time.Time, emit Emit) {
	emit(node.Event{Time: now, Kind: node.EventCanceled, Venue: v.cfg.Name, OrderID: o.ID, ClientOrderID: o.ClientOrderID,
		Symbol: o.Symbol, Side: o.Side, Quantity: o.Remaining(), Note: note})
	if o.Leg != command.LegEntry || o.Filled.IsPositive() {
		return
	}
	for _, id := range v.groups[o.Group] {
		if c := v.orders[id]; c.Parent == o.ID && c.Status == node.OrderOpen {
			emit(node.Event{Time: now, Kind: node.EventCanceled, Venue: v.cfg.Name, OrderID: c.ID, ClientOrderID: c.ClientOrderID,
				Symbol: c.Symbol, Side: c.Side, Quantity: c.Remaining(), Note: fmt.Sprintf("canceled: its entry %s was canceled before it filled", o.ID)})
		}
	}
}

// Cancel cancels an open order.
func (v *Venue) Cancel(id, note string, now time.Time, emit Emit) error {
	o := v.orders[id]
	if o == nil || o.Status != node.OrderOpen {
		return fmt.Errorf("order %s is not open on %s", id, v.cfg.Name)
	}
	v.cancel(o, note, now, emit)
	return nil
}

// Modify changes an open limit order's quantity and/or price (a zero value
// keeps the old one); if the new price is marketable the order fills at
// once. It is Amend with only those two.
func (v *Venue) Modify(id string, qty, price decimal.Decimal, now time.Time, emit Emit) error {
	return v.Amend(id, command.Command{Verb: command.Modify, Quantity: qty, Price: price}, now, emit)
}

// Amend applies modify c's changes to open order id, by the rule
// command.CheckModifyOf states: a limit's quantity and price, a stop's
// stop_price, a stop_limit's stop_price and limit_price, a trailing stop's
// trail (its stop then follows its best mark by the new trail); a leg of a
// group takes no quantity. A limit that the new price makes marketable
// fills at once (an exit leg at the next mark); a moved stop is walked from
// the next mark.
func (v *Venue) Amend(id string, c command.Command, now time.Time, emit Emit) error {
	o := v.orders[id]
	if o == nil || o.Status != node.OrderOpen {
		return fmt.Errorf("order %s is not open on %s", id, v.cfg.Name)
	}
	if err := c.CheckModifyOf(o.Type, o.Group != ""); err != nil {
		return fmt.Errorf("order %s: %w", id, err)
	}
	ev := node.Event{Time: now, Kind: node.EventModified, Venue: v.cfg.Name, OrderID: o.ID, ClientOrderID: o.ClientOrderID,
		Symbol: o.Symbol, Side: o.Side, Quantity: c.Quantity, Price: c.Price, StopPrice: c.StopPrice,
		TrailAmount: c.TrailAmount, TrailPercent: c.TrailPercent}
	if o.Type == command.StopLimit {
		ev.Price = c.LimitPrice // a stop_limit's limit is its Price
	}
	emit(ev)
	v.execute(id, now, emit)
	return nil
}

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
