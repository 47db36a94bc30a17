package backtest

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// An allowance is what a deployment may do (deployments.md): two sizing
// limits and three circuit breakers. A backtest run under one measures the
// breakers the strategy will trade under; the node applies the same rules.
//
// Sizing limits clip, and never refuse on their own: an order's notional
// (quantity × the mark it fills at, before slippage) is clipped to
// max_order_notional, and the position it leaves to max_position_notional;
// the rest of the target is not traded. A position that price drift took
// above the limit is not added to, and may always be reduced.
//
// Breakers pause: once one trips no further order is placed (decisions
// and protective exits resting since before the trip keep running; the
// open position is kept) for the rest of the run.
//   - max_orders_per_day counts the orders a strategy's decisions send in
//     the UTC day of the bar they fill in (protective exits are not
//     counted: they rest with the order that opened the position); it is
//     checked before an order, and the order that would exceed it is not
//     placed.
//   - max_daily_loss trips when equity falls more than the amount below
//     the equity the UTC day began with (the last mark before the day's
//     first bar; the capital on the first day).
//   - max_drawdown_pct trips when equity falls more than the percent
//     below its running peak (the capital included).
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
)

// AllowanceNames lists the allowance's fields in their order.
var AllowanceNames = []string{AllowMaxOrderNotional, AllowMaxPositionNotional, AllowMaxOrdersPerDay, AllowMaxDailyLoss, AllowMaxDrawdownPct}

// Allowance is a deployment's limits. Money and the percent are decimal
// strings on the wire; a nil field (zero for the count) is no limit.
type Allowance struct {
	MaxOrderNotional    *decimal.Decimal `json:"max_order_notional,omitempty"`
	MaxPositionNotional *decimal.Decimal `json:"max_position_notional,omitempty"`
	MaxOrdersPerDay     int              `json:"max_orders_per_day,omitempty"`
	MaxDailyLoss        *decimal.Decimal `json:"max_daily_loss,omitempty"`
	MaxDrawdownPct      *decimal.Decimal `json:"max_drawdown_pct,omitempty"`
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
		MaxOrderNotional    *string `json:"max_order_notional,omitempty"`
		MaxPositionNotional *string `json:"max_position_notional,omitempty"`
		MaxOrdersPerDay     int     `json:"max_orders_per_day,omitempty"`
		MaxDailyLoss        *string `json:"max_daily_loss,omitempty"`
		MaxDrawdownPct      *string `json:"max_drawdown_pct,omitempty"`
	}{str(a.MaxOrderNotional), str(a.MaxPositionNotional), a.MaxOrdersPerDay, str(a.MaxDailyLoss), str(a.MaxDrawdownPct)})
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

// limits is an allowance as a run applies it, in the engine's floats; inf
// is no limit.
type limits struct {
	order, position, loss, drawdown float64
	perDay                          int

	day              int64 // the UTC day (Unix days) of the last mark
	dayStart, lastEq float64
	peak             float64
	orders           int // sent in day ordersDay
	ordersDay        int64
	tripped          *Breaker
	times            []int64
}

func newLimits(a *Allowance, capital float64, times []int64) *limits {
	if a == nil {
		return nil
	}
	f := func(d *decimal.Decimal) float64 {
		if d == nil {
			return math.Inf(1)
		}
		v, _ := d.Float64()
		return v
	}
	return &limits{
		order: f(a.MaxOrderNotional), position: f(a.MaxPositionNotional), loss: f(a.MaxDailyLoss),
		drawdown: f(a.MaxDrawdownPct) / 100, perDay: a.MaxOrdersPerDay,
		day: math.MinInt64, ordersDay: math.MinInt64, lastEq: capital, peak: capital, times: times,
	}
}

func unixDay(t int64) int64 {
	d := t / 86400
	if t%86400 < 0 {
		d--
	}
	return d
}

// trip pauses the run at bar i, once.
func (l *limits) trip(i int, name, reason string) {
	if l.tripped == nil {
		l.tripped = &Breaker{Name: name, Bar: i, Time: unixTime(l.times[i]), Reason: reason}
	}
}

// mark checks the equity breakers against equity eq at bar i.
func (l *limits) mark(i int, eq float64) {
	if d := unixDay(l.times[i]); d != l.day {
		l.day, l.dayStart = d, l.lastEq
	}
	l.lastEq = eq
	l.peak = max(l.peak, eq)
	if l.tripped != nil {
		return
	}
	if loss := l.dayStart - eq; loss > l.loss {
		l.trip(i, AllowMaxDailyLoss, fmt.Sprintf("equity %s is %s below the day's opening %s (limit %s)", Money(eq), Money(loss), Money(l.dayStart), Money(l.loss)))
		return
	}
	if l.peak > 0 && eq < l.peak*(1-l.drawdown) {
		l.trip(i, AllowMaxDrawdownPct, fmt.Sprintf("equity %s is %.2f%% below its peak %s (limit %s%%)", Money(eq), 100*(1-eq/l.peak), Money(l.peak), strconv.FormatFloat(100*l.drawdown, 'f', -1, 64)))
	}
}

// size sizes an order of dq from position pos filling at mark p on bar i:
// clipped to the sizing limits, and 0 when the run is paused or the
// order would exceed the day's count (which pauses it).
func (l *limits) size(i int, p, pos, dq float64) float64 {
	if l.tripped != nil {
		return 0
	}
	np := pos + dq
	if lim := l.position / p; math.Abs(np) > lim {
		switch {
		case np*pos > 0 && math.Abs(np) <= math.Abs(pos): // a reduction
		case np*pos > 0 && math.Abs(pos) > lim: // drifted above: no more
			np = pos
		default:
			np = math.Copysign(lim, np)
		}
	}
	dq = np - pos
	if lim := l.order / p; math.Abs(dq) > lim {
		dq = math.Copysign(lim, dq)
	}
	if dq == 0 || l.perDay <= 0 {
		return dq
	}
	if d := unixDay(l.times[i]); d != l.ordersDay {
		l.ordersDay, l.orders = d, 0
	}
	if l.orders >= l.perDay {
		l.trip(i, AllowMaxOrdersPerDay, fmt.Sprintf("a %d. order in the UTC day %s would exceed the limit of %d", l.orders+1, unixTime(l.times[i]).Format(time.DateOnly), l.perDay))
		return 0
	}
	l.orders++
	return dq
}

// breakerWarning is the warning a paused run carries.
func (b *Breaker) warning() string {
	return fmt.Sprintf("breaker %s tripped at bar %d (%s): %s; no order was placed after it, as a deployment would be paused until an operator resumes it", b.Name, b.Bar, fmtTime(b.Time), b.Reason)
}
