package book

import (
	"math"

	"github.com/shopspring/decimal"
)

// An allowance's rules (deployments.md; strategy/backtest's Allowance is
// the type users write), written once:
//
//   - Sizing clips and never refuses: the position an order leaves is
//     held within the position limit (max_position_notional, and the
//     deployment's capital: a deployment never holds more than it), and
//     the order within max_order_notional, both measured at the mark the
//     order is sized at (limit ÷ mark is the quantity). A position that
//     price drift took above the limit is not added to and may always be
//     reduced; the rest of a target is not traded.
//   - max_orders_per_day counts the orders sent in the UTC day of the bar
//     that decided them (a deployment sends at that bar's close; a
//     backtest fills at the next open, but counts and names the deciding
//     bar too). The order that would exceed the count is not sent and
//     pauses at its deciding bar. An order the venue rejects is not
//     counted (a backtest's orders are never rejected).
//   - Equity is marked at each bar's close (before its decision) and
//     after each fill. A new UTC day starts at the equity the last mark
//     left (the capital on the first day); the peak is the running peak,
//     the capital included. max_daily_loss trips when equity is more than
//     the limit below the day's start; max_drawdown_pct when it is below
//     the peak × (1 − pct/100).
//   - max_tracking_gap (money, resolved from bps of the capital by the
//     caller) trips a deployment when its live P&L is further than the
//     bound from its replay's, either way (Drifted); a backtest is its
//     own replay.

// Breach is the breaker a mark tripped, if any.
type Breach uint8

// Breaches.
const (
	NoBreach Breach = iota
	DailyLoss
	Drawdown
)

// Limits is an allowance's sizing limits and equity breakers in N; a Has
// flag unset is no limit.
type Limits[N Number[N]] struct {
	Order, Position, Loss N
	HasOrder, HasPosition bool
	HasLoss, HasDrawdown  bool
	Drawdown              N // a fraction of the peak
	One                   N
	// Gap is max_tracking_gap in money (HasGap: set).
	Gap    N
	HasGap bool
}

// Drifted reports whether gap (live P&L less the replay's) is further
// from zero than the tracking bound.
func (l *Limits[N]) Drifted(gap N) bool {
	return l.HasGap && gap.Abs().Cmp(l.Gap) > 0
}

// Clip sizes an order of dq from position pos at mark p within the
// sizing limits.
func (l *Limits[N]) Clip(p, pos, dq N) N {
	np := pos.Add(dq)
	if l.HasPosition {
		if lim := l.Position.Div(p); np.Abs().Cmp(lim) > 0 {
			same := np.Sign() != 0 && np.Sign() == pos.Sign()
			switch {
			case same && np.Abs().Cmp(pos.Abs()) <= 0: // a reduction
			case same && pos.Abs().Cmp(lim) > 0: // drifted above: no more
				np = pos
			default:
				np = withSign(lim, np)
			}
		}
	}
	dq = np.Sub(pos)
	if l.HasOrder {
		if lim := l.Order.Div(p); dq.Abs().Cmp(lim) > 0 {
			dq = withSign(lim, dq)
		}
	}
	return dq
}

// Breached is the equity breaker that equity eq trips on day d (marked
// with eq already), or NoBreach.
func (l *Limits[N]) Breached(d *Day[N], eq N) Breach {
	if l.HasLoss && d.Start.Sub(eq).Cmp(l.Loss) > 0 {
		return DailyLoss
	}
	if l.HasDrawdown && d.Peak.Sign() > 0 && eq.Cmp(d.Peak.Mul(l.One.Sub(l.Drawdown))) < 0 {
		return Drawdown
	}
	return NoBreach
}

// Day is the equity the breakers measure from: the UTC day (Unix days)
// of the last mark, the equity it started at, the last mark's and the
// running peak.
type Day[N Number[N]] struct {
	Day               int64
	Start, Last, Peak N
}

// NewDay is the marks before the first: the capital, no day yet.
func NewDay[N Number[N]](capital N) Day[N] {
	return Day[N]{Day: math.MinInt64, Start: capital, Last: capital, Peak: capital}
}

// Mark records equity eq at a bar of UTC day day.
func (d *Day[N]) Mark(day int64, eq N) {
	if day != d.Day {
		d.Day, d.Start = day, d.Last
	}
	d.Last = eq
	d.Peak = larger(d.Peak, eq)
}

// UnixDay is the UTC day (days since 1970-01-01) of Unix time t.
func UnixDay(t int64) int64 {
	d := t / 86400
	if t%86400 < 0 {
		d--
	}
	return d
}

// MayOrder reports whether another order may go when sent orders have
// gone in the day already, under a limit of perDay (0: none).
func MayOrder(perDay, sent int) bool { return perDay <= 0 || sent < perDay }

// DecimalAccount is an Account in decimals holding cash, as a deployment
// keeps one.
func DecimalAccount(cash decimal.Decimal) Account[decimal.Decimal] {
	return Account[decimal.Decimal]{Cash: cash, One: decimal.NewFromInt(1), Dust: decimal.New(1, -9)}
}

// Caps are an allowance's figures as the book takes them: decimal, nil
// (0 for the count) for no limit, the drawdown a percent; and the capital
// that bounds the position.
type Caps struct {
	MaxOrderNotional, MaxPositionNotional *decimal.Decimal
	MaxDailyLoss, MaxDrawdownPct          *decimal.Decimal
	MaxTrackingGap                        *decimal.Decimal // money
	Capital                               decimal.Decimal
}

// position is the position limit: max_position_notional or the capital,
// whichever is smaller.
func (c Caps) position() decimal.Decimal {
	if m := c.MaxPositionNotional; m != nil && m.LessThan(c.Capital) {
		return *m
	}
	return c.Capital
}

// Decimal is c as Limits in decimals.
func (c Caps) Decimal() Limits[decimal.Decimal] {
	l := Limits[decimal.Decimal]{Position: c.position(), HasPosition: true, One: decimal.NewFromInt(1)}
	if m := c.MaxOrderNotional; m != nil {
		l.Order, l.HasOrder = *m, true
	}
	if m := c.MaxDailyLoss; m != nil {
		l.Loss, l.HasLoss = *m, true
	}
	if m := c.MaxDrawdownPct; m != nil {
		l.Drawdown, l.HasDrawdown = m.Shift(-2), true
	}
	if m := c.MaxTrackingGap; m != nil {
		l.Gap, l.HasGap = *m, true
	}
	return l
}

// Float is c as FloatLimits (each figure the float64 nearest the decimal).
func (c Caps) Float() FloatLimits {
	f := func(d *decimal.Decimal) float64 {
		if d == nil {
			return math.Inf(1)
		}
		v, _ := d.Float64()
		return v
	}
	pos := c.position()
	return FloatLimits{Order: f(c.MaxOrderNotional), Position: f(&pos), Loss: f(c.MaxDailyLoss), Drawdown: f(c.MaxDrawdownPct) / 100}
}

// FloatLimits is Limits in float64; +Inf is no limit.
type FloatLimits struct {
	Order, Position, Loss, Drawdown float64
}

// Clip is Limits.Clip.
func (l *FloatLimits) Clip(p, pos, dq float64) float64 {
	np := pos + dq
	if lim := l.Position / p; math.Abs(np) > lim {
		same := np != 0 && (np > 0) == (pos > 0) && pos != 0
		switch {
		case same && math.Abs(np) <= math.Abs(pos): // a reduction
		case same && math.Abs(pos) > lim: // drifted above: no more
			np = pos
		default:
			np = math.Copysign(lim, np)
		}
	}
	dq = np - pos
	if lim := l.Order / p; math.Abs(dq) > lim {
		dq = math.Copysign(lim, dq)
	}
	return dq
}

// Breached is Limits.Breached.
func (l *FloatLimits) Breached(d *FloatDay, eq float64) Breach {
	if d.Start-eq > l.Loss {
		return DailyLoss
	}
	if d.Peak > 0 && eq < d.Peak*(1-l.Drawdown) {
		return Drawdown
	}
	return NoBreach
}

// FloatDay is Day in float64.
type FloatDay struct {
	Day               int64
	Start, Last, Peak float64
}

// NewFloatDay is NewDay in float64.
func NewFloatDay(capital float64) FloatDay {
	return FloatDay{Day: math.MinInt64, Start: capital, Last: capital, Peak: capital}
}

// Mark is Day.Mark.
func (d *FloatDay) Mark(day int64, eq float64) {
	if day != d.Day {
		d.Day, d.Start = day, d.Last
	}
	d.Last = eq
	d.Peak = max(d.Peak, eq)
}
