package backtest

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"wicket/strategy/book"
)

// An allowance is what a deployment may do (deployments.md): two sizing
// limits and three circuit breakers. A backtest run under one measures the
// breakers the strategy will trade under; the node applies the same rules,
// the one book's (strategy/book), which states them.
//
// Sizing limits clip, and never refuse on their own: an order's notional
// (quantity × the mark it fills at, before slippage) is clipped to
// max_order_notional, and the position it leaves to max_position_notional
// and to the capital (a deployment never holds more than its capital);
// the rest of the target is not traded. A position that price drift took
// above the limit is not added to, and may always be reduced.
//
// Breakers pause: once one trips no further order is placed (decisions
// and protective exits resting since before the trip keep running; the
// open position is kept) for the rest of the run.
//   - max_orders_per_day counts the orders a strategy's decisions send in
//     the UTC day of the bar that decided them (protective exits are not
//     counted: they rest with the order that opened the position); it is
//     checked before an order, and the order that would exceed it is not
//     placed: the breaker names the deciding bar, as a deployment's does.
//   - max_daily_loss trips when equity falls more than the amount below
//     the equity the UTC day began with (the last mark before the day's
//     first bar; the capital on the first day).
//   - max_drawdown_pct trips when equity falls more than the percent
//     below its running peak (the capital included).
//   - max_tracking_gap (a deployment's drift breaker) trips when the
//     deployment's live P&L leaves its replay's (the backtest engine over
//     the same bars and decisions) by more than the bound: an amount of
//     money ("250") or basis points of the capital ("150bps"). A backtest
//     is its own replay, so it never trips there; the node checks it at
//     every bar's close (deploy/attrib.go).
//
// Equity is marked after every decision's fill (at its mark) and at every
// bar's close before that bar's decision, so a trip takes effect before
// the next order.

// Allowance names, as flags, JSON and messages spell them.
const (
	AllowMaxOrderNotional    = "max_order_notional"
	AllowMaxPositionNotional = "max_position_notional"
	AllowMaxOrdersPerDay     = "max_orders_per_day"
	AllowMaxDailyLoss        = "max_daily_loss"
	AllowMaxDrawdownPct      = "max_drawdown_pct"
	AllowMaxTrackingGap      = "max_tracking_gap"
)

// AllowanceNames lists the allowance's fields in their order.
var AllowanceNames = []string{AllowMaxOrderNotional, AllowMaxPositionNotional, AllowMaxOrdersPerDay, AllowMaxDailyLoss, AllowMaxDrawdownPct, AllowMaxTrackingGap}

// Allowance is a deployment's limits. Money and the percent are decimal
// strings on the wire; a nil field (zero for the count) is no limit.
type Allowance struct {
	MaxOrderNotional    *decimal.Decimal `json:"max_order_notional,omitempty"`
	MaxPositionNotional *decimal.Decimal `json:"max_position_notional,omitempty"`
	MaxOrdersPerDay     int              `json:"max_orders_per_day,omitempty"`
	MaxDailyLoss        *decimal.Decimal `json:"max_daily_loss,omitempty"`
	MaxDrawdownPct      *decimal.Decimal `json:"max_drawdown_pct,omitempty"`
	MaxTrackingGap      *TrackingGap     `json:"max_tracking_gap,omitempty"`
}

// TrackingGap is max_tracking_gap's bound: an amount of money ("250"), or
// basis points of the deployment's capital when Bps ("150bps"). On the
// wire it is that string.
type TrackingGap struct {
	Amount decimal.Decimal
	Bps    bool
}

// ParseTrackingGap reads "250" (money) or "150bps" (of the capital).
func ParseTrackingGap(s string) (TrackingGap, error) {
	v, bps := strings.CutSuffix(strings.TrimSpace(s), "bps")
	d, err := decimal.NewFromString(strings.TrimSpace(v))
	if err != nil {
		return TrackingGap{}, invalidf("allowance %s=%s is neither an amount of money (e.g. 250) nor basis points of the capital (e.g. 150bps)", AllowMaxTrackingGap, s)
	}
	return TrackingGap{Amount: d, Bps: bps}, nil
}

// String is the bound as written: "250" or "150bps".
func (g TrackingGap) String() string {
	if g.Bps {
		return g.Amount.String() + "bps"
	}
	return g.Amount.String()
}

// Money is the bound in money for a deployment of capital.
func (g TrackingGap) Money(capital decimal.Decimal) decimal.Decimal {
	if g.Bps {
		return capital.Mul(g.Amount).Shift(-4)
	}
	return g.Amount
}

// MarshalJSON writes the bound as its string.
func (g TrackingGap) MarshalJSON() ([]byte, error) { return json.Marshal(g.String()) }

// UnmarshalJSON reads "250", "150bps" or a bare number.
func (g *TrackingGap) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		s = string(b)
	}
	v, err := ParseTrackingGap(s)
	if err != nil {
		return err
	}
	*g = v
	return nil
}

// MarshalJSON writes the amounts as decimal strings.
func (a Allowance) MarshalJSON() ([]byte, error) {
	str := func(d *decimal.Decimal) *string {
		if d == nil {
			return nil
		}
		s := d.String()
		return &s
	}
	return json.Marshal(struct {
		MaxOrderNotional    *string      `json:"max_order_notional,omitempty"`
		MaxPositionNotional *string      `json:"max_position_notional,omitempty"`
		MaxOrdersPerDay     int          `json:"max_orders_per_day,omitempty"`
		MaxDailyLoss        *string      `json:"max_daily_loss,omitempty"`
		MaxDrawdownPct      *string      `json:"max_drawdown_pct,omitempty"`
		MaxTrackingGap      *TrackingGap `json:"max_tracking_gap,omitempty"`
	}{str(a.MaxOrderNotional), str(a.MaxPositionNotional), a.MaxOrdersPerDay, str(a.MaxDailyLoss), str(a.MaxDrawdownPct), a.MaxTrackingGap})
}

// ParseAllowance reads NAME=VALUE assignments (each may hold several,
// comma-separated), as `--allowance max_daily_loss=250` gives them. No
// assignment is no allowance (nil).
func ParseAllowance(args []string) (*Allowance, error) {
	var a Allowance
	seen := map[string]bool{}
	for _, arg := range args {
		for _, kv := range strings.Split(arg, ",") {
			kv = strings.TrimSpace(kv)
			if kv == "" {
				continue
			}
			name, val, ok := strings.Cut(kv, "=")
			name, val = strings.TrimSpace(name), strings.TrimSpace(val)
			if !ok || val == "" {
				return nil, invalidf("allowance %q is not NAME=VALUE; names: %s", kv, strings.Join(AllowanceNames, ", "))
			}
			if seen[name] {
				return nil, invalidf("allowance %s is given twice; give each limit once", name)
			}
			seen[name] = true
			if name == AllowMaxOrdersPerDay {
				n, err := strconv.Atoi(val)
				if err != nil || n <= 0 {
					return nil, invalidf("allowance %s=%s must be a whole number of orders above 0", name, val)
				}
				a.MaxOrdersPerDay = n
				continue
			}
			if name == AllowMaxTrackingGap {
				g, err := ParseTrackingGap(val)
				if err != nil {
					return nil, err
				}
				a.MaxTrackingGap = &g
				continue
			}
			d, err := decimal.NewFromString(val)
			if err != nil {
				return nil, invalidf("allowance %s=%s is not a decimal number, e.g. %s=250", name, val, name)
			}
			switch name {
			case AllowMaxOrderNotional:
				a.MaxOrderNotional = &d
			case AllowMaxPositionNotional:
				a.MaxPositionNotional = &d
			case AllowMaxDailyLoss:
				a.MaxDailyLoss = &d
			case AllowMaxDrawdownPct:
				a.MaxDrawdownPct = &d
			default:
				return nil, invalidf("no allowance %q; names: %s", name, strings.Join(AllowanceNames, ", "))
			}
		}
	}
	if len(seen) == 0 {
		return nil, nil
	}
	if err := a.Check(); err != nil {
		return nil, err
	}
	return &a, nil
}

// Check reports the first limit out of range; a nil allowance is fine.
func (a *Allowance) Check() error {
	if a == nil {
		return nil
	}
	for _, f := range [...]struct {
		name string
		v    *decimal.Decimal
	}{{AllowMaxOrderNotional, a.MaxOrderNotional}, {AllowMaxPositionNotional, a.MaxPositionNotional}, {AllowMaxDailyLoss, a.MaxDailyLoss}, {AllowMaxDrawdownPct, a.MaxDrawdownPct}} {
		if f.v != nil && !f.v.IsPositive() {
			return invalidf("allowance %s=%s must be above 0; leave it out for no limit", f.name, f.v)
		}
	}
	if g := a.MaxTrackingGap; g != nil && !g.Amount.IsPositive() {
		return invalidf("allowance %s=%s must be above 0; leave it out for no limit", AllowMaxTrackingGap, g)
	}
	if a.MaxOrdersPerDay < 0 {
		return invalidf("allowance %s=%d must be above 0; leave it out for no limit", AllowMaxOrdersPerDay, a.MaxOrdersPerDay)
	}
	if p := a.MaxDrawdownPct; p != nil && p.GreaterThanOrEqual(decimal.NewFromInt(100)) {
		return invalidf("allowance %s=%s must be below 100 (a percent of the peak equity)", AllowMaxDrawdownPct, p)
	}
	return nil
}

// Breaker is the breaker that paused a run: its name (an allowance name),
// the bar and time (the bar's open time) it tripped at, and why.
type Breaker struct {
	Name   string    `json:"name"`
	Bar    int       `json:"bar"`
	Time   time.Time `json:"time"`
	Reason string    `json:"reason"`
}

// limits is an allowance as a run applies it: the book's rules
// (strategy/book) in the engine's floats, with the run's marks, order
// count and breaker.
type limits struct {
	book.FloatLimits
	days      book.FloatDay
	perDay    int
	orders    int   // sent in the UTC day ordersDay
	ordersDay int64 // the UTC day (Unix days) of the last counted order
	tripped   *Breaker
	times     []int64
}

// Caps is a as the book takes it, bounding the position by capital as a
// deployment's is.
func (a *Allowance) Caps(capital decimal.Decimal) book.Caps {
	c := book.Caps{MaxOrderNotional: a.MaxOrderNotional, MaxPositionNotional: a.MaxPositionNotional,
		MaxDailyLoss: a.MaxDailyLoss, MaxDrawdownPct: a.MaxDrawdownPct, Capital: capital}
	if g := a.MaxTrackingGap; g != nil {
		m := g.Money(capital)
		c.MaxTrackingGap = &m
	}
	return c
}

func newLimits(a *Allowance, capitalDec decimal.Decimal, capital float64, times []int64) *limits {
	if a == nil {
		return nil
	}
	return &limits{
		FloatLimits: a.Caps(capitalDec).Float(), days: book.NewFloatDay(capital), perDay: a.MaxOrdersPerDay,
		ordersDay: math.MinInt64, times: times,
	}
}

// trip pauses the run at bar i, once.
func (l *limits) trip(i int, name, reason string) {
	if l.tripped == nil {
		l.tripped = &Breaker{Name: name, Bar: i, Time: unixTime(l.times[i]), Reason: reason}
	}
}

// mark checks the equity breakers against equity eq at bar i.
func (l *limits) mark(i int, eq float64) {
	l.days.Mark(book.UnixDay(l.times[i]), eq)
	if l.tripped != nil {
		return
	}
	switch l.Breached(&l.days, eq) {
	case book.DailyLoss:
		d := &l.days
		l.trip(i, AllowMaxDailyLoss, fmt.Sprintf("equity %s is %s below the day's opening %s (limit %s)", Money(eq), Money(d.Start-eq), Money(d.Start), Money(l.Loss)))
	case book.Drawdown:
		p := l.days.Peak
		l.trip(i, AllowMaxDrawdownPct, fmt.Sprintf("equity %s is %.2f%% below its peak %s (limit %s%%)", Money(eq), 100*(1-eq/p), Money(p), strconv.FormatFloat(100*l.Drawdown, 'f', -1, 64)))
	}
}

// size sizes an order of dq from position pos filling at mark p, decided
// at bar dec: clipped to the sizing limits, and 0 when the run is paused
// or the order would exceed the count of dec's day (which pauses the run
// at dec, the bar a deployment would have sent it at).
func (l *limits) size(dec int, p, pos, dq float64) float64 {
	if l.tripped != nil {
		return 0
	}
	dq = l.Clip(p, pos, dq)
	if dq == 0 || l.perDay <= 0 {
		return dq
	}
	if d := book.UnixDay(l.times[dec]); d != l.ordersDay {
		l.ordersDay, l.orders = d, 0
	}
	if !book.MayOrder(l.perDay, l.orders) {
		l.trip(dec, AllowMaxOrdersPerDay, fmt.Sprintf("a %d. order in the UTC day %s would exceed the limit of %d", l.orders+1, unixTime(l.times[dec]).Format(time.DateOnly), l.perDay))
		return 0
	}
	l.orders++
	return dq
}

// breakerWarning is the warning a paused run carries.
func (b *Breaker) warning() string {
	return fmt.Sprintf("breaker %s tripped at bar %d (%s): %s; no order was placed after it, as a deployment would be paused until an operator resumes it", b.Name, b.Bar, fmtTime(b.Time), b.Reason)
}
