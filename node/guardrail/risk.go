package guardrail

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/node/command"
)

// The pre-trade checks of wicket.toml's [risk] (docs/node.md "Risk
// controls"), declared here once beside the [guardrail] ones:
//
//   - per order, on any View: a stop's collar against the mark
//     (stop_collar_pct); per symbol, the order's quantity
//     (max_order_quantity), its notional (max_order_notional) and the
//     position it leaves (max_position, a quantity); self-trade (an order
//     that would cross the account's own resting order; with a
//     RestingView);
//   - per command, on the node alone (an Activity): the venue's traded
//     notional of the UTC day (max_daily_notional), the message throttles
//     per venue and per deployment (submits, modifies and cancels all
//     count) and the identical-order throttle, whose refusals stand until
//     an operator resets it.
//
// Every check is added to a report only where a limit is configured, and
// each failure names the check, the limit and the figure.

// RestingView is a View that also lists the account's resting orders on
// a venue's symbol, for the self-trade check.
type RestingView interface {
	View
	Resting(venue, symbol string) []Order
}

// SessionView is a View that knows venues' trading sessions: for a
// symbol that trades only in sessions (an equity at Alpaca), whether the
// market is open now and a line saying so (applies false: the symbol
// trades around the clock, or the venue has no sessions).
type SessionView interface {
	View
	Session(venue, symbol string) (open bool, why string, applies bool)
}

// Activity is what only the node knows when it checks a write: its
// ledger, the deployment that sends the write ("" for an agent or a
// person) and the time.
type Activity struct {
	Ledger     *Ledger
	Deployment string
	Now        time.Time
}

// CheckWith is Check with the node's activity (nil: the per-command
// checks are left out, as on a client).
func (g *Guardrail) CheckWith(c command.Command, view View, a *Activity) Report {
	return g.checkWith(c, view, a, false)
}

// Admit is CheckWith for a command about to execute, whose report is read
// only when it fails: the checks are the same, but a passing check's
// Detail is left empty (formatting every detail was most of a check's
// cost); a failed check's reads exactly as CheckWith writes it. A preview
// uses CheckWith.
func (g *Guardrail) Admit(c command.Command, view View, a *Activity) Report {
	return g.checkWith(c, view, a, true)
}

func (g *Guardrail) checkWith(c command.Command, view View, a *Activity, terse bool) Report {
	if view == nil {
		view = emptyView{}
	}
	r := run{g: g, c: c, view: view, terse: terse, checks: make([]Check, 0, 24)} // room for an order's every check: grown once at most
	r.check()
	if a != nil && a.Ledger != nil && len(r.checks) > 0 && !slices.ContainsFunc(r.checks, func(c Check) bool { return c.Name == "venue" && !c.OK }) {
		r.checkActivity(a)
	}
	ok := true
	for _, ch := range r.checks {
		ok = ok && ch.OK
	}
	return Report{OK: ok, Checks: r.checks}
}

// checkSymbolRisk runs the per-symbol limits of [risk.symbols] on in,
// valued at at (valued false: no price known).
func (r *run) checkSymbolRisk(in intent, mark decimal.Decimal, haveMark bool, at decimal.Decimal, valued bool) {
	l, ok := r.g.risk.Symbols[in.symbol]
	if !ok {
		return
	}
	if m := l.MaxOrderQuantity; m.IsPositive() {
		r.add("order_quantity", in.qty.LessThanOrEqual(m), "quantity %s %s max_order_quantity %s of %s", in.qty, cmpWord(in.qty, m), m, in.symbol)
	}
	if m := l.MaxOrderNotional; m.IsPositive() {
		if !valued {
			r.add("symbol_notional", false, "no mark for %s on %s: cannot value the order against max_order_notional %s of %s", in.symbol, r.venue.Name, m, in.symbol)
		} else {
			n := in.qty.Mul(at)
			r.add("symbol_notional", n.LessThanOrEqual(m), "%s × %s = %s %s max_order_notional %s of %s", in.qty, at, n, cmpWord(n, m), m, in.symbol)
		}
	}
	if m := l.MaxPosition; m.IsPositive() {
		pos := r.view.Position(r.venue.Name, in.symbol)
		after := pos.Add(signed(in.side, in.qty))
		switch {
		case after.Abs().LessThanOrEqual(pos.Abs()) && after.Sign()*pos.Sign() >= 0:
			r.add("position_quantity", true, "position %s → %s %s: reduces it", pos, after, in.symbol)
		default:
			r.add("position_quantity", after.Abs().LessThanOrEqual(m), "position %s → %s %s: %s %s max_position %s", pos, after, in.symbol, after.Abs(), cmpWord(after.Abs(), m), m)
		}
	}
}

func signed(side command.Side, qty decimal.Decimal) decimal.Decimal {
	if side == command.Sell {
		return qty.Neg()
	}
	return qty
}

// checkStopCollar refuses a stop further than stop_collar_pct from the mark.
func (r *run) checkStopCollar(in intent, mark decimal.Decimal, haveMark bool) {
	pct := r.g.stopCollar
	if !pct.IsPositive() || !in.stop.IsPositive() {
		return
	}
	if !haveMark {
		r.add("stop_collar", false, "no mark for %s on %s: cannot check the %s%% stop collar", in.symbol, r.venue.Name, pct)
		return
	}
	dist := in.stop.Sub(mark).Abs().Mul(decimal.NewFromInt(100))
	within := dist.LessThanOrEqual(pct.Mul(mark))
	if !r.shown(within) {
		r.add("stop_collar", within, "")
		return
	}
	r.add("stop_collar", within, "stop %s is %s%% from mark %s (stop_collar_pct %s)", in.stop, dist.DivRound(mark, 4).StringFixed(2), mark, pct)
}

// checkSelfTrade refuses, with [risk] self_trade, an order that would
// cross the account's own resting order on the other side: a buy at or
// above a resting sell's limit, a sell at or below a resting buy's (a
// market order crosses any). Binance is told to expire the taker instead.
func (r *run) checkSelfTrade(in intent) {
	if !r.g.risk.SelfTrade || (in.typ != command.Limit && in.typ != command.Market) {
		return
	}
	if r.venue.Kind == project.KindBinance {
		r.add("self_trade", true, "binance is sent selfTradePreventionMode %s: it expires an order that would trade with the account's own", SelfTradeMode)
		return
	}
	rv, ok := r.view.(RestingView)
	if !ok {
		return
	}
	for _, o := range rv.Resting(r.venue.Name, in.symbol) {
		if o.Side == in.side || o.Type != command.Limit || o.Inactive || !o.Price.IsPositive() ||
			(r.c.Verb == command.Modify && (o.ID == r.c.OrderID || (r.c.ClientOrderID != "" && o.ClientOrderID == r.c.ClientOrderID))) {
			continue
		}
		crosses := in.typ == command.Market ||
			(in.side == command.Buy && in.limit.GreaterThanOrEqual(o.Price)) ||
			(in.side == command.Sell && in.limit.LessThanOrEqual(o.Price))
		if crosses {
			price := "market"
			if in.typ == command.Limit {
				price = in.limit.String()
			}
			r.add("self_trade", false, "%s %s %s at %s would cross the account's own resting %s %s @ %s (order %s); cancel or modify it first", in.side, in.qty, in.symbol, price, o.Side, o.Quantity, o.Price, o.ID)
			return
		}
	}
	r.add("self_trade", true, "crosses none of the account's resting orders on %s", in.symbol)
}

// checkMarketHours refuses, with [risk] market_hours, an order of a
// symbol whose market is closed now.
func (r *run) checkMarketHours(symbol string) {
	if !r.g.risk.MarketHours {
		return
	}
	sv, ok := r.view.(SessionView)
	if !ok {
		return
	}
	if open, why, applies := sv.Session(r.venue.Name, symbol); applies {
		r.add("market_hours", open, "%s", why)
	}
}

// SelfTradeMode is the selfTradePreventionMode sent to Binance with every
// order: the incoming order expires rather than trade with the account's
// own resting one.
const SelfTradeMode = "EXPIRE_TAKER"

// counted reports whether verb c is a message the throttles count.
func counted(c command.Command) bool {
	switch c.Verb {
	case command.SubmitOrder, command.Modify, command.CancelOrder, command.MassCancel, command.Flatten, command.MarketExit:
		return c.Venue != ""
	}
	return false
}

// checkActivity runs the per-command checks against the node's ledger.
func (r *run) checkActivity(a *Activity) {
	g, c, l, now := r.g, r.c, a.Ledger, a.Now
	r.leg = ""
	if !counted(c) {
		return
	}
	if m := g.risk.MaxMessages; m > 0 {
		n := l.venueMsgs.count(c.Venue, now, g.risk.MessageWindow)
		r.add("venue_messages", n < m, "%d message(s) to %s in the last %s; max_messages %d per %s", n+1, c.Venue, g.risk.MessageWindow, m, g.risk.MessageWindow)
	}
	if m := g.risk.MaxDeploymentMessages; m > 0 && a.Deployment != "" {
		n := l.depMsgs.count(a.Deployment, now, g.risk.MessageWindow)
		r.add("deployment_messages", n < m, "%d message(s) from deployment %s in the last %s; max_deployment_messages %d per %s", n+1, a.Deployment, g.risk.MessageWindow, m, g.risk.MessageWindow)
	}
	if c.Verb != command.SubmitOrder {
		return
	}
	if m := g.risk.Venues[c.Venue].MaxDailyNotional; m.IsPositive() {
		mark, ok := r.view.Mark(c.Venue, c.Symbol)
		at, _, valued := At(c, mark, ok && mark.IsPositive())
		traded := l.tradedOn(c.Venue, now)
		if !valued {
			r.add("daily_notional", false, "no mark for %s on %s: cannot value the order against max_daily_notional %s", c.Symbol, c.Venue, m)
		} else {
			n := c.Quantity.Mul(at)
			total := traded.Add(n)
			r.add("daily_notional", total.LessThanOrEqual(m), "%s traded on %s today (UTC) + %s = %s %s max_daily_notional %s", traded, c.Venue, n, total, cmpWord(total, m), m)
		}
	}
	if m := g.risk.MaxIdenticalOrders; m > 0 {
		key := identical(c)
		if _, latched := l.latched[key]; latched {
			r.add("identical_orders", false, "%s was refused as the %d-th identical order within %s: refused until an operator runs wicket node reset-throttle", describe(c), m+1, g.risk.IdenticalWindow)
			return
		}
		n := l.ident.count(key, now, g.risk.IdenticalWindow)
		if !r.shown(n < m) {
			r.add("identical_orders", true, "")
			return
		}
		r.add("identical_orders", n < m, "%d identical order(s) %s in the last %s; max_identical_orders %d", n+1, describe(c), g.risk.IdenticalWindow, m)
	}
}

func describe(c command.Command) string {
	s := fmt.Sprintf("%s %s %s %s", c.Type, c.Side, c.Quantity, c.Symbol)
	if c.Price.IsPositive() {
		s += " @ " + c.Price.String()
	}
	return s
}

// identical is the key two identical orders share.
func identical(c command.Command) string {
	return strings.Join([]string{c.Venue, c.Symbol, string(c.Side), string(c.Type), c.Quantity.String(), c.Price.String(),
		c.StopPrice.String(), c.LimitPrice.String(), c.TrailAmount.String(), c.TrailPercent.String()}, "|")
}

// Ledger is the node's count of what the per-command checks measure:
// messages per venue and per deployment, identical orders, each venue's
// traded notional per UTC day, and the identical orders refused until an
// operator resets them. Only the node's fold touches it; it performs no
// I/O. Messages are counted in memory (a restart starts them afresh); the
// traded notional is rebuilt from the journal's fills on replay.
type Ledger struct {
	venueMsgs, depMsgs, ident windows
	traded                    map[string]daySum
	latched                   map[string]string // identical key → what was refused
}

type daySum struct {
	day string
	sum decimal.Decimal
}

// windows are times of events by key (unix nanoseconds, oldest first),
// pruned as they are counted: a window's expired head is skipped, and
// the slice compacted once most of it is expired.
type windows map[string]*window

type window struct {
	ts   []int64
	head int
}

func (w windows) count(key string, now time.Time, span time.Duration) int {
	x := w[key]
	if x == nil {
		return 0
	}
	cut := now.Add(-span).UnixNano()
	for x.head < len(x.ts) && x.ts[x.head] <= cut {
		x.head++
	}
	if x.head > 64 && x.head*2 > len(x.ts) {
		x.ts = append(x.ts[:0], x.ts[x.head:]...)
		x.head = 0
	}
	return len(x.ts) - x.head
}

func (w windows) add(key string, now time.Time, span time.Duration) {
	w.count(key, now, span)
	x := w[key]
	if x == nil {
		x = &window{}
		w[key] = x
	}
	x.ts = append(x.ts, now.UnixNano())
}

// NewLedger returns an empty ledger.
func NewLedger() *Ledger {
	return &Ledger{venueMsgs: windows{}, depMsgs: windows{}, ident: windows{}, traded: map[string]daySum{}, latched: map[string]string{}}
}

// Record counts c, accepted from deployment ("" for others) at now.
func (g *Guardrail) Record(l *Ledger, c command.Command, deployment string, now time.Time) {
	if !counted(c) {
		return
	}
	w := g.risk.MessageWindow
	l.venueMsgs.add(c.Venue, now, w)
	if deployment != "" {
		l.depMsgs.add(deployment, now, w)
	}
	if c.Verb == command.SubmitOrder && g.risk.MaxIdenticalOrders > 0 {
		l.ident.add(identical(c), now, g.risk.IdenticalWindow)
	}
}

// Refused tells the ledger the node refused c for rep: an identical order
// past the throttle stands refused until Reset.
func (g *Guardrail) Refused(l *Ledger, c command.Command, rep Report) {
	for _, ch := range rep.Checks {
		if ch.Name == "identical_orders" && !ch.OK {
			l.latched[identical(c)] = describe(c) + " on " + c.Venue
		}
	}
}

// Filled adds a fill's notional to its venue's UTC day (live and on
// replay).
func (l *Ledger) Filled(venue string, at time.Time, notional decimal.Decimal) {
	day := at.UTC().Format(time.DateOnly)
	s := l.traded[venue]
	switch {
	case s.day == day:
		s.sum = s.sum.Add(notional)
	case day > s.day:
		s = daySum{day: day, sum: notional}
	default:
		return // an older day's fill
	}
	l.traded[venue] = s
}

func (l *Ledger) tradedOn(venue string, now time.Time) decimal.Decimal {
	if s := l.traded[venue]; s.day == now.UTC().Format(time.DateOnly) {
		return s.sum
	}
	return decimal.Zero
}

// Reset ends the identical-order throttle's refusals and its counts (an
// operator's act); it returns what stood refused.
func (l *Ledger) Reset() []string {
	out := make([]string, 0, len(l.latched))
	for _, v := range l.latched {
		out = append(out, v)
	}
	sort.Strings(out)
	clear(l.latched)
	clear(l.ident)
	return out
}

// Headroom is one limit as risk_status shows it: the check that enforces
// it, its scope, the limit, what is used of it and what is left.
type Headroom struct {
	Check    string `json:"check"`
	Scope    string `json:"scope"`
	Limit    string `json:"limit"`
	Used     string `json:"used,omitempty"`
	Headroom string `json:"headroom,omitempty"`
	Window   string `json:"window,omitempty"`
	Note     string `json:"note,omitempty"`
}

// Status lists every configured limit with its headroom against view and
// the ledger at now (l may be nil: no counts).
func (g *Guardrail) Status(view View, l *Ledger, now time.Time) []Headroom {
	if l == nil {
		l = NewLedger()
	}
	out := []Headroom{
		{Check: "order_notional", Scope: "each order", Limit: g.maxOrder.String()},
		{Check: "position_notional", Scope: "each position", Limit: g.maxPosition.String()},
		{Check: "price_collar", Scope: "limit prices", Limit: g.collarPct.String() + "%"},
	}
	if g.stopCollar.IsPositive() {
		out = append(out, Headroom{Check: "stop_collar", Scope: "stop prices", Limit: g.stopCollar.String() + "%"})
	}
	syms := make([]string, 0, len(g.risk.Symbols))
	for s := range g.risk.Symbols {
		syms = append(syms, s)
	}
	sort.Strings(syms)
	for _, s := range syms {
		lim := g.risk.Symbols[s]
		if lim.MaxOrderQuantity.IsPositive() {
			out = append(out, Headroom{Check: "order_quantity", Scope: s, Limit: lim.MaxOrderQuantity.String()})
		}
		if lim.MaxOrderNotional.IsPositive() {
			out = append(out, Headroom{Check: "symbol_notional", Scope: s, Limit: lim.MaxOrderNotional.String()})
		}
		if !lim.MaxPosition.IsPositive() {
			continue
		}
		for _, v := range g.names {
			if !slices.Contains(g.venues[v].Symbols, s) {
				continue
			}
			used := view.Position(v, s).Abs()
			out = append(out, Headroom{Check: "position_quantity", Scope: v + " " + s, Limit: lim.MaxPosition.String(),
				Used: used.String(), Headroom: decimal.Max(decimal.Zero, lim.MaxPosition.Sub(used)).String()})
		}
	}
	for _, v := range g.names {
		m := g.risk.Venues[v].MaxDailyNotional
		if !m.IsPositive() {
			continue
		}
		used := l.tradedOn(v, now)
		out = append(out, Headroom{Check: "daily_notional", Scope: v, Limit: m.String(), Used: used.String(),
			Headroom: decimal.Max(decimal.Zero, m.Sub(used)).String(), Window: "UTC day"})
	}
	w := g.risk.MessageWindow.String()
	if m := g.risk.MaxMessages; m > 0 {
		for _, v := range g.names {
			n := l.venueMsgs.count(v, now, g.risk.MessageWindow)
			out = append(out, Headroom{Check: "venue_messages", Scope: v, Limit: strconv.Itoa(m), Used: strconv.Itoa(n), Headroom: strconv.Itoa(max(0, m-n)), Window: w})
		}
	}
	if m := g.risk.MaxDeploymentMessages; m > 0 {
		busiest, most := "", 0
		for d := range l.depMsgs {
			if n := l.depMsgs.count(d, now, g.risk.MessageWindow); n > most || (n == most && d < busiest) {
				busiest, most = d, n
			}
		}
		h := Headroom{Check: "deployment_messages", Scope: "each deployment", Limit: strconv.Itoa(m), Used: strconv.Itoa(most), Headroom: strconv.Itoa(max(0, m-most)), Window: w}
		if busiest != "" {
			h.Note = "busiest: " + busiest
		}
		out = append(out, h)
	}
	if m := g.risk.MaxIdenticalOrders; m > 0 {
		h := Headroom{Check: "identical_orders", Scope: "each order", Limit: strconv.Itoa(m), Window: g.risk.IdenticalWindow.String()}
		if n := len(l.latched); n > 0 {
			h.Note = fmt.Sprintf("%d order(s) refused until an operator runs wicket node reset-throttle", n)
		}
		out = append(out, h)
	}
	if g.risk.SelfTrade {
		out = append(out, Headroom{Check: "self_trade", Scope: "every venue", Limit: "no crossing of own resting orders"})
	}
	if g.risk.MarketHours {
		out = append(out, Headroom{Check: "market_hours", Scope: "equities at venues with a clock", Limit: "in session"})
	}
	return out
}
