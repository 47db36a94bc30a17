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
