package guardrail

import (
	"math/big"
	"wicket/node/command"

	"github.com/shopspring/decimal"
)

// checkPrecision checks the quantity and every price of in against the
// venue's instrument when the view knows it, else against the configured
// decimals; at is the price the order is valued at, for the minimum
// notional.
func (r *run) checkPrecision(in intent, at decimal.Decimal) {
	if iv, ok := r.view.(InstrumentView); ok {
		if inst, ok := iv.Instrument(r.venue.Name, in.symbol); ok {
			r.checkInstrument(inst, in, at)
			return
		}
	}
	v := r.venue
	qp := places(in.qty)
	if qp > v.QuantityDecimals {
		r.add("precision", false, "quantity %s has %d decimals; %s allows %d for %s (never rounded: send at most %d)", in.qty, qp, v.Name, v.QuantityDecimals, in.symbol, v.QuantityDecimals)
		return
	}
	var pp int32
	for _, p := range in.prices() {
		n := places(p.v)
		if n > v.PriceDecimals {
			r.add("precision", false, "%s %s has %d decimals; %s allows %d for %s (never rounded: send at most %d)", p.name, p.v, n, v.Name, v.PriceDecimals, in.symbol, v.PriceDecimals)
			return
		}
		pp = max(pp, n)
	}
	r.add("precision", true, "quantity %d of %d decimals, price %d of %d", qp, v.QuantityDecimals, pp, v.PriceDecimals)
}

// checkInstrument checks in against the venue's increments and minimums:
// never rounded, a value off the grid is a failed check.
func (r *run) checkInstrument(inst Instrument, in intent, at decimal.Decimal) {
	v := r.venue
	symbol, qty := in.symbol, in.qty
	step := inst.Step
	if !inst.Fractional && (step.IsZero() || step.LessThan(decimal.NewFromInt(1))) {
		step = decimal.NewFromInt(1)
	}
	offTick := func() (named, bool) {
		if !inst.Tick.IsPositive() {
			return named{}, false
		}
		for _, p := range in.prices() {
			if !p.v.Mod(inst.Tick).IsZero() {
				return p, true
			}
		}
		return named{}, false
	}
	if p, off := offTick(); off {
		r.add("precision", false, "%s %s is not a multiple of %s's tick %s for %s (never rounded)", p.name, p.v, v.Name, inst.Tick, symbol)
	} else {
		switch {
		case step.IsPositive() && !qty.Mod(step).IsZero():
			r.add("precision", false, "quantity %s is not a multiple of %s's step %s for %s (never rounded)", qty, v.Name, step, symbol)
		case inst.MinQuantity.IsPositive() && qty.LessThan(inst.MinQuantity):
			r.add("precision", false, "quantity %s is below %s's minimum %s for %s", qty, v.Name, inst.MinQuantity, symbol)
		default:
			r.add("precision", true, "quantity %s on step %s, price on tick %s (%s's rules for %s)", qty, step, inst.Tick, v.Name, symbol)
		}
	}
	if inst.MinNotional.IsPositive() {
		n := qty.Mul(at)
		r.add("min_notional", n.GreaterThanOrEqual(inst.MinNotional), "%s × %s = %s; %s's minimum for %s is %s", qty, at, n, v.Name, symbol, inst.MinNotional)
	}
	if in.side == command.Sell && !inst.Shortable {
		after := r.view.Position(v.Name, symbol).Sub(qty)
		r.add("shortable", !after.IsNegative(), "position after the sell %s %s; %s does not allow shorting %s", after, symbol, v.Name, symbol)
	}
}

func cmpWord(n, limit decimal.Decimal) string {
	if n.LessThanOrEqual(limit) {
		return "≤"
	}
	return "exceeds"
}

// places is the number of decimals d needs: trailing zeros do not count
// ("1.50" needs 1).
func places(d decimal.Decimal) int32 {
	exp := d.Exponent()
	if exp >= 0 {
		return 0
	}
	coef := d.Coefficient()
	ten, rem := big.NewInt(10), new(big.Int)
	n := -exp
	for n > 0 {
		q, r := new(big.Int).QuoRem(coef, ten, rem)
		if r.Sign() != 0 {
			break
		}
		coef = q
		n--
	}
	return n
}
