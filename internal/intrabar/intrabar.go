// Package intrabar decides, one bar at a time, which resting orders a bar's
// price path reaches and at what price: limits, stops, stop-limits and
// trailing stops, alone, in one-cancels-other groups, or waiting for an
// entry to fill (a bracket's legs). The backtest engine runs it on bars and
// the paper venue on its marks (a mark is a bar whose four prices are
// equal), so research and paper fill by one rule, written once.
//
// It must never see more than the bar it is given, keep state anywhere but
// in the orders it is handed, or fix the number type: prices are a type
// parameter, so the node keeps decimals (no float64 for money there) and
// research keeps its float64 columns (Float).
package intrabar

import (
	"fmt"
	"math"
)

// Number is what the rule needs of a price: an order and three operations.
// decimal.Decimal satisfies it, and so does Float.
type Number[P any] interface {
	Cmp(P) int
	Add(P) P
	Sub(P) P
	Mul(P) P
}

// Float is a float64 price, for research's float64 bar columns.
type Float float64

// Cmp orders two prices as decimal.Decimal's Cmp does.
func (f Float) Cmp(g Float) int {
	switch {
	case f < g:
		return -1
	case f > g:
		return 1
	}
	return 0
}

// Add returns f+g.
func (f Float) Add(g Float) Float { return f + g }

// Sub returns f-g.
func (f Float) Sub(g Float) Float { return f - g }

// Mul returns f*g.
func (f Float) Mul(g Float) Float { return f * g }

// Div returns f/g.
func (f Float) Div(g Float) Float { return f / g }

// Neg returns -f.
func (f Float) Neg() Float { return -f }

// Abs returns |f|.
func (f Float) Abs() Float { return Float(math.Abs(float64(f))) }

// Sign returns -1, 0 or 1.
func (f Float) Sign() int { return f.Cmp(0) }

// IsZero reports whether f is zero.
func (f Float) IsZero() bool { return f == 0 }

// Side is an order's direction.
type Side int8

// Sides.
const (
	Buy Side = iota + 1
	Sell
)

func (s Side) String() string {
	switch s {
	case Buy:
		return "buy"
	case Sell:
		return "sell"
	}
	return fmt.Sprintf("Side(%d)", int8(s))
}

// Kind is what an order waits for.
type Kind int8

// Kinds.
const (
	// Limit fills at Limit or better: a buy when the price is at or
	// below it, a sell at or above.
	Limit Kind = iota + 1
	// Stop becomes a market order once the price trades through Stop:
	// a buy at or above it, a sell at or below.
	Stop
	// StopLimit becomes a limit at Limit once the price trades through
	// Stop.
	StopLimit
	// TrailingStop is a stop that follows the best price since it became
	// active by Trail (an amount, or a fraction when TrailFraction).
	TrailingStop
)

func (k Kind) String() string {
	switch k {
	case Limit:
		return "limit"
	case Stop:
		return "stop"
	case StopLimit:
		return "stop_limit"
	case TrailingStop:
		return "trailing_stop"
	}
	return fmt.Sprintf("Kind(%d)", int8(k))
}

// protective reports whether an order of kind k is a stop of some sort:
// the leg the pessimistic rule fills first.
func (k Kind) protective() bool { return k == Stop || k == StopLimit || k == TrailingStop }

// Rule is how a bar's path between its four prices is imagined.
type Rule int8

// Rules.
const (
	// Path: open, then the extreme nearer the open, then the other
	// extreme, then the close (on a tie the close's side comes last: an
	// up bar goes low first). Orders fill in the order the path reaches
	// them.
	Path Rule = iota
	// Pessimistic is Path, except that when the rest of a bar reaches
	// both a stop and a limit of one group, the stop fills and the limit
	// does not; and that a bar with an active trailing stop visits first
	// the extreme against it (the low for a sell's, the high for a buy's),
	// so the stop is met where it stood before the bar and the bar's best
	// price moves it only afterwards: the trail never profits from a high
	// the path might have reached after the low.
	Pessimistic
)

func (r Rule) String() string {
	switch r {
	case Path:
		return "path"
	case Pessimistic:
		return "pessimistic"
	}
	return fmt.Sprintf("Rule(%d)", int8(r))
}

// Rules lists the rules' names, for flags and schemas.
var Rules = []string{Path.String(), Pessimistic.String()}

// ParseRule reads a rule's name; "" is Path, the default.
func ParseRule(s string) (Rule, error) {
	switch s {
	case "", "path":
		return Path, nil
	case "pessimistic":
		return Pessimistic, nil
	}
	return 0, fmt.Errorf("unknown intrabar rule %q: use path (the default) or pessimistic", s)
}

// Bar is the four prices of one bar, or of one mark (all equal).
type Bar[P Number[P]] struct {
	Open, High, Low, Close P
}

// Mark is a bar of one price, as the paper venue sees a new mark.
func Mark[P Number[P]](price P) Bar[P] { return Bar[P]{price, price, price, price} }

// Order is one resting order as the rule sees it. Step reads its fields
// and keeps its state in them (Best, Stop of a trailing stop, Triggered,
// Done); the caller owns everything else (ids, quantities, what a fill
// does to a position).
type Order[P Number[P]] struct {
	Kind Kind
	Side Side
	// Limit is the limit price of a Limit or StopLimit.
	Limit P
	// Stop is the trigger of a Stop or StopLimit; of a TrailingStop it is
	// the current stop, kept by Step (and by Trail).
	Stop P
	// Trail is a TrailingStop's distance from its best price: an amount,
	// or a fraction of the best price when TrailFraction (0.02 is 2 %).
	Trail         P
	TrailFraction bool
	// Best is a TrailingStop's best price since it became active: the
	// highest for a sell, the lowest for a buy. Anchored says Best is
	// set; an order that is not is anchored at the price where it
	// becomes active (its placement, or its parent's fill).
	Best     P
	Anchored bool
	// Group, when not 0, links orders that cancel one another: the first
	// to fill cancels the rest (OCO, a bracket's exits).
	Group int
	// Parent, when not 0, is 1 + the index of the order whose fill makes
	// this one active (a bracket's legs wait for the entry). The parent
	// must come before it in the slice.
	Parent int
	// Triggered says a StopLimit's stop has traded: it rests as a limit.
	Triggered bool
	// Done says the order filled or was cancelled; Step passes it by.
	Done bool
	// Cancelled says Done came from another order of its Group filling.
	Cancelled bool

	active  bool // may fill now (its parent, if any, has filled)
	blocked bool // under Pessimistic: a limit whose group's stop wins this bar
	fresh   bool // became active where the walk is now
}

// Fill is one order reached by a bar's path.
type Fill[P Number[P]] struct {
	// Order is the index of the order that filled.
	Order int
	// Price is where it filled, before any slippage.
	Price P
	// Gap says the price was already past the order's level where the
	// order met it (at the open, or where it became active): a stop
	// filled worse than its stop, a limit better than its limit.
	Gap bool
	// Taker says the fill took liquidity (a stop or a trailing stop
	// became a market order), so a caller's slippage applies; limits and
	// stop-limits fill as makers.
	Taker bool
	// Leg is the point of the path where it filled: 0 at the open, k
	// on the path's k-th segment (1 to 3).
	Leg int
}

// Trailing makes a trailing stop anchored at ref (its best price so far)
// with its stop set from it.
func Trailing[P Number[P]](side Side, trail P, fraction bool, ref P) Order[P] {
	o := Order[P]{Kind: TrailingStop, Side: side, Trail: trail, TrailFraction: fraction}
	o.anchor(ref)
	return o
}

// anchor sets a trailing stop's best price to ref and its stop from it.
func (o *Order[P]) anchor(ref P) {
	o.Best, o.Anchored = ref, true
	o.Stop = o.trailStop()
}

// trailStop is the stop Trail away from Best, on the side that protects.
func (o *Order[P]) trailStop() P {
	d := o.Trail
	if o.TrailFraction {
		d = o.Best.Mul(o.Trail)
	}
	if o.Side == Sell {
		return o.Best.Sub(d)
	}
	return o.Best.Add(d)
}

// follow moves a trailing stop's best price to p when p is better.
func (o *Order[P]) follow(p P) {
	if o.Kind != TrailingStop || o.Done || !o.active {
		return
	}
	if (o.Side == Sell && p.Cmp(o.Best) > 0) || (o.Side == Buy && p.Cmp(o.Best) < 0) {
		o.Best = p
		o.Stop = o.trailStop()
	}
}

// Validate says what is wrong with an order before it rests, in words a
// user can act on; nil when Step can hold it.
func (o *Order[P]) Validate() error {
	var zero P
	if o.Side != Buy && o.Side != Sell {
		return fmt.Errorf("side must be buy or sell")
	}
	positive := func(name string, v P) error {
		if v.Cmp(zero) <= 0 {
			return fmt.Errorf("a %s order needs a positive %s", o.Kind, name)
		}
		return nil
	}
	switch o.Kind {
	case Limit:
		return positive("limit_price", o.Limit)
	case Stop:
		return positive("stop_price", o.Stop)
	case StopLimit:
		if err := positive("stop_price", o.Stop); err != nil {
			return err
		}
		return positive("limit_price", o.Limit)
	case TrailingStop:
		if err := positive("trail", o.Trail); err != nil {
			return err
		}
		// For a positive t, t·t < t exactly when t < 1: a sell's fraction
		// of 1 or more would put its stop at or below zero.
		if o.TrailFraction && o.Side == Sell && o.Trail.Mul(o.Trail).Cmp(o.Trail) >= 0 {
			return fmt.Errorf("a sell trailing stop's trail_percent must be below 100")
		}
		return nil
	}
	return fmt.Errorf("unknown order kind %v: use limit, stop, stop_limit or trailing_stop", o.Kind)
}

// path is a bar's four points in the order Rule Path visits them.
func path[P Number[P]](b Bar[P]) [4]P {
	up, down := b.High.Sub(b.Open), b.Open.Sub(b.Low)
	lowFirst := down.Cmp(up) < 0 || (down.Cmp(up) == 0 && b.Close.Cmp(b.Open) >= 0)
	if lowFirst {
		return [4]P{b.Open, b.Low, b.High, b.Close}
	}
	return [4]P{b.Open, b.High, b.Low, b.Close}
}

// Step walks bar's path through orders under rule, appends a Fill for each
// order the path reaches, in the order it reaches them, and returns fills.
// An order filled in a bar cancels the rest of its group, and makes the
// orders whose Parent it is active from where it filled: they see only the
// rest of the path (and Step sets their Parent to 0).
func Step[P Number[P]](bar Bar[P], rule Rule, orders []Order[P], fills []Fill[P]) []Fill[P] {
	if quiet(bar, orders) {
		return fills
	}
	w := walker[P]{orders: orders, rule: rule, fills: fills, pts: path(bar)}
	if rule == Pessimistic {
		w.pts = adverse(bar, orders, w.pts)
	}
	for i := range orders {
		o := &orders[i]
		o.blocked = false
		o.active = !o.Done && o.Parent == 0
		o.fresh = o.active
		if o.active && o.Kind == TrailingStop && !o.Anchored {
			o.anchor(bar.Open)
		}
	}
	w.block(0, bar.Open)
	w.at(bar.Open, 0)
	for i := range orders {
		orders[i].follow(bar.Open)
	}
	for k := 1; k < len(w.pts); k++ {
		w.segment(k)
	}
	return w.fills
}

// quiet reports whether bar can change nothing: every order that could
// fill is out of the bar's range, and none trails (a trailing stop moves
// with the path) or waits for a parent that could fill.
func quiet[P Number[P]](bar Bar[P], orders []Order[P]) bool {
	for i := range orders {
		o := &orders[i]
		if o.Done || o.Parent != 0 {
			continue
		}
		if o.Kind == TrailingStop || o.reachable(bar.Low, bar.High) {
			return false
		}
	}
	return true
}

// adverse is the path a bar takes under Pessimistic when it holds an
// active trailing stop (one with no parent left to wait for): the
// extreme against the stop first. Trailing stops of both sides, or none,
// keep pts.
func adverse[P Number[P]](bar Bar[P], orders []Order[P], pts [4]P) [4]P {
	var sell, buy bool
	for i := range orders {
		o := &orders[i]
		if o.Kind == TrailingStop && !o.Done && o.Parent == 0 {
			sell, buy = sell || o.Side == Sell, buy || o.Side == Buy
		}
	}
	switch {
	case sell && !buy:
		return [4]P{bar.Open, bar.Low, bar.High, bar.Close}
	case buy && !sell:
		return [4]P{bar.Open, bar.High, bar.Low, bar.Close}
	}
	return pts
}

type walker[P Number[P]] struct {
	orders []Order[P]
	rule   Rule
	fills  []Fill[P]
	pts    [4]P
}

// segment moves the price along the path's k-th segment, filling each order
// it reaches on the way, nearest first.
func (w *walker[P]) segment(k int) {
	from, to := w.pts[k-1], w.pts[k]
	dir := to.Cmp(from)
	if dir == 0 {
		return
	}
	cur := from
	for {
		next, found := cur, false
		for i := range w.orders {
			o := &w.orders[i]
			if o.Done || !o.active || o.blocked {
				continue
			}
			v, ok := o.level(dir)
			if !ok || v.Cmp(cur)*dir < 0 || v.Cmp(to)*dir > 0 {
				continue
			}
			if !found || v.Cmp(next)*dir < 0 {
				next, found = v, true
			}
		}
		if !found {
			break
		}
		cur = next
		for i := range w.orders {
			w.orders[i].follow(cur)
		}
		w.reach(cur, dir, k)
	}
	for i := range w.orders {
		w.orders[i].follow(to)
	}
}

// level is the price at which a move in direction dir (1 up, -1 down)
// reaches o, if such a move can.
func (o *Order[P]) level(dir int) (P, bool) {
	var none P
	buys := dir < 0 // a falling price reaches buy limits and sell stops
	switch {
	case o.Kind == Limit || (o.Kind == StopLimit && o.Triggered):
		return o.Limit, (o.Side == Buy) == buys
	case o.Kind == Stop || o.Kind == StopLimit || o.Kind == TrailingStop:
		return o.Stop, (o.Side == Sell) == buys
	}
	return none, false
}

// reach handles the orders whose level a move in direction dir has just
// reached at price v, in their order, then what their fills set off.
func (w *walker[P]) reach(v P, dir, k int) {
	for i := range w.orders {
		o := &w.orders[i]
		if o.Done || !o.active || o.blocked {
			continue
		}
		if lv, ok := o.level(dir); !ok || lv.Cmp(v) != 0 {
			continue
		}
		if o.Kind == StopLimit && !o.Triggered {
			o.Triggered = true
			if o.marketable(v) {
				w.fill(i, v, k)
			}
			continue
		}
		w.fill(i, v, k)
	}
	w.at(v, k)
}

// at fills every active order that the price p already satisfies (at the
// open, or where a fill made new orders active), until none is left:
// these are gap fills when p is past the order's level.
func (w *walker[P]) at(p P, k int) {
	for again := true; again; {
		again = false
		for i := range w.orders {
			o := &w.orders[i]
			if o.Done || !o.active || o.blocked {
				continue
			}
			if o.Kind == StopLimit && !o.Triggered {
				if !o.through(p) {
					continue
				}
				o.Triggered = true
			}
			if o.marketable(p) {
				w.fill(i, p, k)
				again = true
			}
		}
	}
}

// through reports whether the price p is at or past o's stop.
func (o *Order[P]) through(p P) bool {
	c := p.Cmp(o.Stop)
	return (o.Side == Buy && c >= 0) || (o.Side == Sell && c <= 0)
}

// marketable reports whether o fills at the price p.
func (o *Order[P]) marketable(p P) bool {
	switch {
	case o.Kind == Limit || (o.Kind == StopLimit && o.Triggered):
		c := p.Cmp(o.Limit)
		return (o.Side == Buy && c <= 0) || (o.Side == Sell && c >= 0)
	case o.Kind == Stop || o.Kind == TrailingStop:
		return o.through(p)
	}
	return false
}

// fill records order i filled at p on segment k, cancels the rest of its
// group and makes its children active at p.
func (w *walker[P]) fill(i int, p P, k int) {
	o := &w.orders[i]
	o.Done = true
	taker := o.Kind == Stop || o.Kind == TrailingStop
	lv := o.Limit
	if taker {
		lv = o.Stop
	}
	w.fills = append(w.fills, Fill[P]{Order: i, Price: p, Gap: p.Cmp(lv) != 0, Taker: taker, Leg: k})
	for j := range w.orders {
		c := &w.orders[j]
		if j == i || c.Done {
			continue
		}
		if o.Group != 0 && c.Group == o.Group {
			c.Done, c.Cancelled = true, true
			continue
		}
		if c.Parent == i+1 {
			c.Parent, c.active = 0, true
			if c.Kind == TrailingStop && !c.Anchored {
				c.anchor(p)
			}
			c.fresh = true
		}
	}
	w.block(k, p)
}

// block applies Pessimistic to the groups of the orders that have just
// become active at price p on segment k (every active order at the open),
// and clears their fresh marks:
// in a group where the rest of the path reaches both a stop and a limit,
// the limits may not fill in this bar. A trailing stop is judged by the
// stop it has there (it only moves toward the price, so one reached then
// is reached).
func (w *walker[P]) block(k int, p P) {
	lo, hi := p, p
	for _, q := range w.pts[max(k, 1):] {
		if q.Cmp(lo) < 0 {
			lo = q
		}
		if q.Cmp(hi) > 0 {
			hi = q
		}
	}
	for i := range w.orders {
		s := &w.orders[i]
		if !s.fresh {
			continue
		}
		s.fresh = false
		if w.rule != Pessimistic || s.Group == 0 || s.Done || !s.Kind.protective() || !s.reachable(lo, hi) {
			continue
		}
		for j := range w.orders {
			l := &w.orders[j]
			if l.Group == s.Group && !l.Done && l.active && l.Kind == Limit && l.reachable(lo, hi) {
				l.blocked = true
			}
		}
	}
}

// reachable reports whether a price range [lo, hi] reaches o's level.
func (o *Order[P]) reachable(lo, hi P) bool {
	switch {
	case o.Kind == Limit || (o.Kind == StopLimit && o.Triggered):
		if o.Side == Buy {
			return lo.Cmp(o.Limit) <= 0
		}
		return hi.Cmp(o.Limit) >= 0
	default:
		if o.Side == Buy {
			return hi.Cmp(o.Stop) >= 0
		}
		return lo.Cmp(o.Stop) <= 0
	}
}
