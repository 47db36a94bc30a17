package guardrail

import (
	"fmt"

	"github.com/shopspring/decimal"

	"wicket/node/command"
)

// CheckFlip checks an order of side and quantity qty for symbol against
// the signed position pos at a margined venue whose operator refuses
// flips (or cannot split this one): an order that would take the position through zero (close it
// and open the opposite one in one order) is refused naming the
// position, the order, and the two orders to send instead — the close,
// which a reduce-only exit can carry, and the opening remainder, which
// then gets an opening order's checks on its own. An order that opens
// from flat, adds, reduces, or closes exactly passes. The caller says
// which policy refused it.
func CheckFlip(symbol string, side command.Side, qty, pos decimal.Decimal) Check {
	ch := Check{Name: "position_flip", OK: true, Detail: "the order does not take the position through zero"}
	closing := pos.IsPositive() && side == command.Sell || pos.IsNegative() && side == command.Buy
	if !closing || qty.LessThanOrEqual(pos.Abs()) {
		return ch
	}
	rest, after, opens := qty.Sub(pos.Abs()), pos.Sub(qty), "short"
	if side == command.Buy {
		after, opens = pos.Add(qty), "long"
	}
	ch.OK = false
	ch.Detail = fmt.Sprintf("%s %s %s would take the position of %s %s through zero to %s; send %s %s to close it (reduce-only), then %s %s to open the %s",
		side, qty, symbol, pos, symbol, after, side, pos.Abs(), side, rest, opens)
	return ch
}
