// Package guardrail checks a write command against the limits in
// wicket.toml before it is sent: known venue and symbol, positive quantity,
// precision within the venue's instrument, limit price within a collar of
// the last mark (a stop_limit's limit within the collar of its stop), a
// stop on the side of the mark that protects (a sell's below, a buy's
// above), order notional at the price the order would fill at under
// max_order_notional and the resulting position under
// max_position_notional. A compound order (an oco, a bracket) is checked
// leg by leg, each check naming its leg: an oco's limit leg must rest (not
// fill at once); a bracket's exits are checked against the position its
// entry leaves and on the protecting side of the entry's price. A modify
// is checked as the order it leaves. Each check comes back with pass or
// fail and the numbers behind it, so a preview can show them.
//
// Clients run it before sending; the node runs the same checks again on its
// own state, so a client that skips them gains nothing.
//
// It never rounds a quantity or price (too many decimals is a failed check),
// never performs I/O and never changes the command it checks.
package guardrail

import (
	"errors"
	"fmt"
	"strings"

	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/node/command"
)

// View is the market state a check reads: last marks, current positions and
// open orders. A node snapshot is one; so is the node's own state.
type View interface {
	// Mark is the last mark price of symbol on venue.
	Mark(venue, symbol string) (decimal.Decimal, bool)
	// Position is the signed quantity held (negative is short); zero when none.
	Position(venue, symbol string) decimal.Decimal
	// OpenOrder finds an open order by the node's id or the client's id
	// (whichever is non-empty).
	OpenOrder(venue, orderID, clientOrderID string) (Order, bool)
}

// Instrument is a real venue's rules for one symbol, read from the venue.
// Zero values mean the venue sets no such rule.
type Instrument struct {
	Tick        decimal.Decimal `json:"tick,omitzero"`         // price increment
	Step        decimal.Decimal `json:"step,omitzero"`         // quantity increment
	MinQuantity decimal.Decimal `json:"min_quantity,omitzero"` // smallest order quantity
	MinNotional decimal.Decimal `json:"min_notional,omitzero"` // smallest quantity × price
	Fractional  bool            `json:"fractional"`            // quantities below one unit are allowed
	Shortable   bool            `json:"shortable"`             // a sell may open a short position
}

// InstrumentView is a View that also knows real venues' instruments; the
// precision and minimum checks then follow the venue's own rules instead
// of the configured decimals.
type InstrumentView interface {
	View
	Instrument(venue, symbol string) (Instrument, bool)
}

// Order is what a check needs to know of an open order.
type Order struct {
	ID            string
	ClientOrderID string
	Symbol        string
	Side          command.Side
	Type          command.OrderType
	Quantity      decimal.Decimal // still to fill
	Price         decimal.Decimal // limit price (a stop_limit's too); zero for market and stop
	StopPrice     decimal.Decimal // a stop's trigger (a trailing stop's current one)
	// A trailing stop's trail (one of the two) and the best price its stop
	// follows.
	TrailAmount, TrailPercent, TrailBest decimal.Decimal
	// Group, Leg and Parent place a compound order's leg (node.Order);
	// Inactive says a bracket's exit still waits for its entry (Parent).
	Group, Leg, Parent string
	Inactive           bool
}

// Check is one named check with its verdict and the numbers behind it.
type Check struct {
	// Leg names the leg of a compound order (an oco's "limit" or "stop")
	// the check is of; empty for a simple order and the whole command.
	Leg    string `json:"leg,omitempty"`
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// Report is the result of checking one command.
type Report struct {
	OK     bool    `json:"ok"`
	Checks []Check `json:"checks"`
}

// Failed lists the checks that did not pass.
func (r Report) Failed() []Check {
	var out []Check
	for _, c := range r.Checks {
		if !c.OK {
			out = append(out, c)
		}
	}
	return out
}

// Summary is one line naming each failed check and its detail, or "all
// checks passed".
func (r Report) Summary() string {
	failed := r.Failed()
	if len(failed) == 0 {
		return "all checks passed"
	}
	parts := make([]string, len(failed))
	for i, c := range failed {
		parts[i] = c.Name + ": " + c.Detail
		if c.Leg != "" {
			parts[i] = c.Leg + " leg " + parts[i]
		}
	}
	return strings.Join(parts, "; ")
}

// Guardrail holds the configured venues and limits.
type Guardrail struct {
	venues      map[string]project.Venue
	names       []string
	maxOrder    decimal.Decimal
	maxPosition decimal.Decimal
	collarPct   decimal.Decimal
	risk        project.Risk    // the [risk] limits (risk.go)
	stopCollar  decimal.Decimal // risk.stop_collar_pct
}

// New reads the venues and [guardrail] limits of cfg, which must have passed
// project's validation.
func New(cfg project.Config) *Guardrail {
	g := &Guardrail{
		venues:      map[string]project.Venue{},
		names:       cfg.VenueNames(),
		maxOrder:    cfg.Guardrail.MaxOrderNotional,
		maxPosition: cfg.Guardrail.MaxPositionNotional,
		collarPct:   decimal.NewFromFloat(cfg.Guardrail.PriceCollarPct),
		risk:        cfg.Risk,
		stopCollar:  decimal.NewFromFloat(cfg.Risk.StopCollarPct),
	}
	for _, v := range cfg.Venues {
		g.venues[v.Name] = v
	}
	return g
}

// Check runs every check that applies to c's verb against view (which may
// be nil: checks that need a mark then fail, saying so).
func (g *Guardrail) Check(c command.Command, view View) Report {
	return g.CheckWith(c, view, nil)
}

type run struct {
	g      *Guardrail
	c      command.Command
	view   View
	venue  project.Venue
	leg    string   // the leg being checked
	ref    *sideRef // what exits' sides are checked against, when not the mark
	terse  bool     // write the details of failed checks only (Admit)
	checks []Check
}

// add records a check; its detail is formatted only when it is to be
// shown (always, except a passing check under Admit).
func (r *run) add(name string, ok bool, format string, a ...any) bool {
	ch := Check{Leg: r.leg, Name: name, OK: ok}
	if r.shown(ok) {
		ch.Detail = fmt.Sprintf(format, a...)
	}
	r.checks = append(r.checks, ch)
	return ok
}

// shown reports whether the detail of a check that passes (ok) or fails
// is written; a caller computes a costly argument only when it is.
func (r *run) shown(ok bool) bool { return !ok || !r.terse }

func (r *run) check() {
	c := r.c
	switch c.Verb {
	case command.SetTradingState:
		r.add("state", true, "trading state %s applies to the whole node", c.State)
		return
	case command.MarketExit:
		if c.Venue == "" {
			r.add("venue", true, "every venue: %s", strings.Join(r.g.names, ", "))
			return
		}
	}
	if !r.checkVenue() {
		return
	}
	switch c.Verb {
	case command.SubmitOrder:
		if !r.checkSymbol(c.Symbol) {
			return
		}
		legs := c.Legs()
		switch c.Type {
		case command.Bracket:
			r.checkBracket(legs)
			return
		case command.OCO:
		default:
			r.checkOrder(intentOf(c))
			return
		}
		mark, ok := r.view.Mark(r.venue.Name, c.Symbol)
		ref := sideRef{price: mark, what: "mark", ok: ok && mark.IsPositive()}
		for _, l := range legs {
			r.leg = l.Name
			in := intentOf(l.Command)
			r.checkOrder(in)
			if in.typ == command.Limit {
				r.checkLimitSide(in, ref)
			}
		}
		r.leg = ""
		r.add("legs", true, "%d legs of %s %s %s each, one command: the first to fill cancels the other", len(legs), c.Side, c.Quantity, c.Symbol)
	case command.Modify:
		o, ok := r.checkOpenOrder()
		if !ok {
			return
		}
		if err := c.CheckModifyOf(o.Type, o.Group != ""); err != nil {
			msg := err.Error()
			var ce *command.Error
			if errors.As(err, &ce) {
				msg = ce.Msg
			}
			r.add("modify", false, "%s: %s", o.ID, msg)
			return
		}
		in := modified(o, c)
		if o.Inactive && o.Parent != "" { // a bracket's exit still waiting: judged against its entry
			if p, ok := r.view.OpenOrder(r.c.Venue, o.Parent, ""); ok && p.Price.IsPositive() {
				r.ref = &sideRef{price: p.Price, what: "entry price", ok: true}
			}
		}
		r.checkOrder(in)
		if o.Group != "" && o.Leg != command.LegEntry && in.typ == command.Limit { // an exit limit must rest
			ref := r.ref
			if ref == nil {
				mark, ok := r.view.Mark(r.venue.Name, in.symbol)
				ref = &sideRef{price: mark, what: "mark", ok: ok && mark.IsPositive()}
			}
			r.checkLimitSide(in, *ref)
		}
		r.ref = nil
	case command.CancelOrder:
		if _, open := r.view.OpenOrder(c.Venue, c.OrderID, c.ClientOrderID); open || !r.groupCancel() { // group.go: a leg that is done names its group
			r.checkOpenOrder()
		}
	case command.Flatten, command.MassCancel:
		if c.Symbol != "" {
			r.checkSymbol(c.Symbol)
		}
	}
}

func (r *run) checkVenue() bool {
	v, ok := r.g.venues[r.c.Venue]
	if !ok {
		return r.add("venue", false, "unknown venue %q; configured: %s", r.c.Venue, strings.Join(r.g.names, ", "))
	}
	r.venue = v
	return r.add("venue", true, "%s (%s, %s)", v.Name, v.Kind, v.Currency)
}

func (r *run) checkSymbol(symbol string) bool {
	for _, s := range r.venue.Symbols {
		if s == symbol {
			return r.add("symbol", true, "%s is listed on %s", symbol, r.venue.Name)
		}
	}
	return r.add("symbol", false, "%s is not listed on %s; listed: %s", symbol, r.venue.Name, strings.Join(r.venue.Symbols, ", "))
}

func (r *run) checkOpenOrder() (Order, bool) {
	o, ok := r.view.OpenOrder(r.c.Venue, r.c.OrderID, r.c.ClientOrderID)
	if !ok {
		by, id := "order_id", r.c.OrderID
		if id == "" {
			by, id = "client_order_id", r.c.ClientOrderID
		}
		return o, r.add("order", false, "no open order with %s %s on %s", by, id, r.c.Venue)
	}
	if !r.shown(true) {
		return o, r.add("order", true, "")
	}
	desc := fmt.Sprintf("%s %s %s %s %s", o.ID, o.Type, o.Side, o.Quantity, o.Symbol)
	if o.StopPrice.IsPositive() {
		desc += " stop " + o.StopPrice.String()
	}
	if o.Price.IsPositive() {
		desc += " @ " + o.Price.String()
	}
	return o, r.add("order", true, "open: %s", desc)
}

// checkOrder runs the order checks for in.
func (r *run) checkOrder(in intent) {
	v := r.venue
	symbol, side, typ, qty := in.symbol, in.side, in.typ, in.qty
	if qty.IsPositive() {
		r.add("quantity", true, "%s is positive", qty)
	} else {
		r.add("quantity", false, "%s must be positive", qty)
	}

	mark, haveMark := r.view.Mark(v.Name, symbol)
	haveMark = haveMark && mark.IsPositive() // a zero mark values nothing (and cannot divide)
	at, atWhat, valued := in.at(mark, haveMark)

	r.checkPrecision(in, at)

	switch typ {
	case command.Limit:
		if !haveMark {
			r.add("price_collar", false, "no mark for %s on %s: cannot check the %s%% collar", symbol, v.Name, r.g.collarPct)
		} else {
			r.collar("price_collar", "limit", in.limit, "mark", mark)
		}
	case command.StopLimit:
		r.collar("price_collar", "limit_price", in.limit, "stop", in.stop)
		r.checkStopCollar(in, mark, haveMark)
	case command.Stop, command.TrailingStop:
		r.add("price_collar", true, "%s order: no limit price to check (it fills at the market once triggered)", typ)
		r.checkStopCollar(in, mark, haveMark)
	default:
		r.add("price_collar", true, "market order: no limit price to check")
	}
	if typ.Protective() {
		if r.ref != nil { // a bracket's exit: against its entry
			r.checkStopSideOf(in, *r.ref)
		} else {
			r.checkStopSide(in, mark, haveMark)
		}
	}

	if !valued {
		r.add("order_notional", false, "no mark for %s on %s: cannot value a %s order", symbol, v.Name, typ)
	} else {
		n := qty.Mul(at)
		r.add("order_notional", n.LessThanOrEqual(r.g.maxOrder), "%s × %s %s = %s %s max_order_notional %s", qty, atWhat, at, n, cmpWord(n, r.g.maxOrder), r.g.maxOrder)
	}

	pos := r.view.Position(v.Name, symbol)
	signed := qty
	if side == command.Sell {
		signed = qty.Neg()
	}
	after := pos.Add(signed)
	switch {
	case after.Abs().LessThanOrEqual(pos.Abs()) && after.Sign()*pos.Sign() >= 0:
		r.add("position_notional", true, "position %s → %s %s: reduces it", pos, after, symbol)
	case !haveMark:
		r.add("position_notional", false, "no mark for %s on %s: cannot value the resulting position", symbol, v.Name)
	default:
		n := after.Abs().Mul(mark)
		r.add("position_notional", n.LessThanOrEqual(r.g.maxPosition), "position %s → %s %s; %s × mark %s = %s %s max_position_notional %s",
			pos, after, symbol, after.Abs(), mark, n, cmpWord(n, r.g.maxPosition), r.g.maxPosition)
	}
	r.checkSymbolRisk(in, mark, haveMark, at, valued)
	r.checkSelfTrade(in)
	r.checkMarketHours(in.symbol)
}

// collar checks that price (called what) is within the collar of ref.
func (r *run) collar(name, what string, price decimal.Decimal, refWhat string, ref decimal.Decimal) {
	dist := price.Sub(ref).Abs().Mul(decimal.NewFromInt(100))
	within := dist.LessThanOrEqual(r.g.collarPct.Mul(ref)) // exact: |price-ref|/ref ≤ pct/100
	if !r.shown(within) {
		r.add(name, within, "")
		return
	}
	shown := dist.DivRound(ref, 4).StringFixed(2)
	if !within && shown == r.g.collarPct.StringFixed(2) {
		shown = "more than " + shown
	}
	r.add(name, within, "%s %s is %s%% from %s %s (collar %s%%)", what, price, shown, refWhat, ref, r.g.collarPct)
}

// sideRef is the price an exit's side is checked against: the mark, or
// where a bracket's entry would open the position.
type sideRef struct {
	price decimal.Decimal
	what  string // "mark", "entry price"
	ok    bool   // known
}

func (s sideRef) String() string { return s.what + " " + s.price.String() }

// checkLimitSide checks that an exit limit rests: a sell above ref, a buy
// below (an oco's limit leg at or past the mark would fill at once and
// cancel its stop leg: send a limit or market order instead; a bracket's
// take-profit at or past its entry would take no profit).
func (r *run) checkLimitSide(in intent, ref sideRef) {
	const name = "limit_side"
	if !ref.ok {
		r.add(name, false, "no mark for %s on %s: cannot check the limit's side of it", in.symbol, r.venue.Name)
		return
	}
	if in.side == command.Sell {
		r.add(name, in.limit.GreaterThan(ref.price), "sell limit %s must be above %s (at or below it, it would fill at once)", in.limit, ref)
		return
	}
	r.add(name, in.limit.LessThan(ref.price), "buy limit %s must be below %s (at or above it, it would fill at once)", in.limit, ref)
}

// checkStopSide checks that a stop is on the side of the mark where it
// protects: a sell stop below the mark, a buy stop above (one already
// through the mark would trigger at once: use a market order for that).
func (r *run) checkStopSide(in intent, mark decimal.Decimal, haveMark bool) {
	r.checkStopSideOf(in, sideRef{price: mark, what: "mark", ok: haveMark})
}

// checkStopSideOf checks a stop's side against ref.
func (r *run) checkStopSideOf(in intent, ref sideRef) {
	const name = "stop_side"
	mark, haveMark := ref.price, ref.ok
	if !haveMark {
		r.add(name, false, "no mark for %s on %s: cannot check the stop's side of it", in.symbol, r.venue.Name)
		return
	}
	stop, what := in.stop, "stop_price"
	if in.typ == command.TrailingStop {
		base, from := mark, "mark"
		what = "first stop"
		if in.anchor.IsPositive() { // a resting trailing stop's new trail: from its best price
			base, from, what = in.anchor, "best price", "new stop (from best "+in.anchor.String()+")"
		}
		stop = TrailingStop(in.side, in.trailAmount, in.trailPercent, base)
		if !stop.IsPositive() {
			r.add(name, false, "trail_amount %s is not below %s %s: the stop would start at %s; use a smaller trail_amount or trail_percent", in.trailAmount, from, base, stop)
			return
		}
	}
	if in.side == command.Sell {
		r.add(name, stop.LessThan(mark), "sell %s %s must be below %s (a sell stop triggers on a fall; at or above the %s it would fill at once)", what, stop, ref, ref.what)
		return
	}
	r.add(name, stop.GreaterThan(mark), "buy %s %s must be above %s (a buy stop triggers on a rise; at or below the %s it would fill at once)", what, stop, ref, ref.what)
}

type emptyView struct{}

func (emptyView) Mark(string, string) (decimal.Decimal, bool)    { return decimal.Decimal{}, false }
func (emptyView) Position(string, string) decimal.Decimal        { return decimal.Zero }
func (emptyView) OpenOrder(string, string, string) (Order, bool) { return Order{}, false }
