package guardrail

import (
	"wicket/internal/intrabar"
	"wicket/node/command"

	"github.com/shopspring/decimal"
)

// modified is open order o as modify c would leave it.
func modified(o Order, c command.Command) intent {
	pick := func(v, old decimal.Decimal) decimal.Decimal {
		if v.IsZero() {
			return old
		}
		return v
	}
	in := intent{symbol: o.Symbol, side: o.Side, typ: o.Type, qty: pick(c.Quantity, o.Quantity), limit: o.Price, stop: o.StopPrice,
		trailAmount: o.TrailAmount, trailPercent: o.TrailPercent, anchor: o.TrailBest}
	switch o.Type {
	case command.Limit:
		in.limit = pick(c.Price, o.Price)
	case command.Stop:
		in.stop = pick(c.StopPrice, o.StopPrice)
	case command.StopLimit:
		in.stop, in.limit = pick(c.StopPrice, o.StopPrice), pick(c.LimitPrice, o.Price)
	case command.TrailingStop:
		if c.TrailAmount.IsPositive() || c.TrailPercent.IsPositive() {
			in.trailAmount, in.trailPercent = c.TrailAmount, c.TrailPercent
		}
	}
	return in
}

// ModifiedAt is the price open order o is valued at once modify c applies
// (At's rule: a limit's new limit, a stop's new stop, a trailing stop's
// stop from its best price by the new trail), for a buy's cash check.
func ModifiedAt(o Order, c command.Command) decimal.Decimal {
	at, _, _ := modified(o, c).at(decimal.Decimal{}, false)
	return at
}

// intent is an order as the checks see it: a submit_order's fields, or an
// open order as a modify would leave it.
type intent struct {
	symbol       string
	side         command.Side
	typ          command.OrderType
	qty          decimal.Decimal
	limit        decimal.Decimal // a limit's price, a stop_limit's limit_price
	stop         decimal.Decimal // a stop's or stop_limit's stop_price
	trailAmount  decimal.Decimal
	trailPercent decimal.Decimal
	anchor       decimal.Decimal // a resting trailing stop's best price, its stop's base (else the mark)
}

func intentOf(c command.Command) intent {
	in := intent{symbol: c.Symbol, side: c.Side, typ: c.Type, qty: c.Quantity, limit: c.Price, stop: c.StopPrice,
		trailAmount: c.TrailAmount, trailPercent: c.TrailPercent}
	if c.Type == command.StopLimit {
		in.limit = c.LimitPrice
	}
	return in
}

// prices lists the intent's set prices with their field names, for the
// precision checks.
func (in intent) prices() []named {
	limitName := "price"
	if in.typ == command.StopLimit {
		limitName = "limit_price"
	}
	var out []named
	for _, p := range []named{{"stop_price", in.stop}, {limitName, in.limit}, {"trail_amount", in.trailAmount}} {
		if !p.v.IsZero() {
			out = append(out, p)
		}
	}
	return out
}

type named struct {
	name string
	v    decimal.Decimal
}

// TrailingStop is where a trailing stop of side starts when placed at
// mark: trailAmount below a sell's mark (above a buy's), or trailPercent
// of it (give one, the other zero). The paper venue holds it from there
// by the same rule (internal/intrabar).
func TrailingStop(side command.Side, trailAmount, trailPercent, mark decimal.Decimal) decimal.Decimal {
	trail, fraction := trailAmount, false
	if trailPercent.IsPositive() {
		trail, fraction = trailPercent.Shift(-2), true
	}
	s := intrabar.Sell
	if side == command.Buy {
		s = intrabar.Buy
	}
	return intrabar.Trailing(s, trail, fraction, mark).Stop
}

// At is the price c is valued at (its notional, a buy's cost) against
// mark, and what that price is: a limit order's limit, a stop_limit's
// limit_price, a stop's stop_price, a trailing stop's first stop (from the
// mark), a market order's mark; an oco's dearest leg (only one fills); a
// bracket's entry (its exits close what the entry opens). ok is false
// when it needs a mark and haveMark is false.
func At(c command.Command, mark decimal.Decimal, haveMark bool) (at decimal.Decimal, what string, ok bool) {
	ok = true
	for _, l := range c.Legs() {
		if l.Exit {
			continue
		}
		p, w, valued := intentOf(l.Command).at(mark, haveMark)
		if !valued {
			return decimal.Decimal{}, w, false
		}
		if p.GreaterThan(at) {
			at, what = p, w
		}
	}
	return at, what, ok
}

func (in intent) at(mark decimal.Decimal, haveMark bool) (decimal.Decimal, string, bool) {
	switch in.typ {
	case command.Limit:
		return in.limit, "limit", true
	case command.StopLimit:
		return in.limit, "limit_price", true
	case command.Stop:
		return in.stop, "stop", true
	case command.TrailingStop:
		if in.anchor.IsPositive() {
			return TrailingStop(in.side, in.trailAmount, in.trailPercent, in.anchor), "new stop", true
		}
		if !haveMark {
			return decimal.Decimal{}, "trailing stop", false
		}
		return TrailingStop(in.side, in.trailAmount, in.trailPercent, mark), "first stop", true
	}
	return mark, "mark", haveMark
}
