package guardrail

import (
	"fmt"

	"github.com/shopspring/decimal"

	"wicket/internal/margin"
	"wicket/node/command"
)

// Leverage is a futures contract's terms for the leverage checks: the
// leverage it trades at and its cap (wicket.toml's contracts and
// max_leverage; zero: no cap), the symbol's maintenance margin brackets
// as the venue states them (Binance's notionalFloor, maintMarginRatio and
// cum; none: one bracket at DefaultMaintenanceRate), and the least
// distance, in percent of the mark, the liquidation price of a position an
// order opens or adds to must keep (zero: no minimum).
type Leverage struct {
	Leverage, MaxLeverage int
	Brackets              []margin.Bracket[decimal.Decimal]
	MinDistancePct        decimal.Decimal
}

var hundred = decimal.NewFromInt(100)

// DefaultMaintenanceRate is the maintenance margin rate the node assumes
// for a contract whose bracket the venue has not told: 0.5 %, above
// Binance's first bracket for the majors (0.4 % for BTCUSDT), so the
// estimate errs toward a liquidation price nearer the mark.
var DefaultMaintenanceRate = decimal.RequireFromString("0.005")

// LiquidationPrice is an isolated position's liquidation price: signed
// quantity qty entered at entry with leverage, by the one rule research
// also uses (internal/margin.LiquidationPrice: the maintenance margin on
// the notional at the liquidation price, with the bracket that notional
// falls in), to 8 decimals. No brackets: one at DefaultMaintenanceRate.
// Zero for no position.
func LiquidationPrice(qty, entry decimal.Decimal, leverage int, brackets []margin.Bracket[decimal.Decimal]) decimal.Decimal {
	if len(brackets) == 0 {
		brackets = []margin.Bracket[decimal.Decimal]{{Rate: DefaultMaintenanceRate}}
	}
	return margin.LiquidationPrice(qty, entry, decimal.NewFromInt(int64(leverage)), brackets).Round(8)
}

// CheckLeverage checks an order of side and quantity qty filling at
// price on a position of signed posQty entered at posEntry, with the
// mark: the contract's leverage within its cap, and — for an order that
// opens or adds — the liquidation price after the fill at least
// MinDistancePct of the mark away, refused naming both prices. An order
// that only reduces passes both: it never moves the liquidation closer.
func CheckLeverage(side command.Side, qty, price, posQty, posEntry, mark decimal.Decimal, t Leverage) []Check {
	capCheck := Check{Name: "max_leverage", OK: true, Detail: fmt.Sprintf("leverage %dx, no cap", t.Leverage)}
	if t.MaxLeverage > 0 {
		capCheck.OK = t.Leverage <= t.MaxLeverage
		capCheck.Detail = fmt.Sprintf("leverage %dx, cap %dx", t.Leverage, t.MaxLeverage)
		if !capCheck.OK {
			capCheck.Detail += "; lower the contract's leverage in wicket.toml"
		}
	}
	signed := qty
	if side == command.Sell {
		signed = qty.Neg()
	}
	after := posQty.Add(signed)
	// It opens or adds when the position grows, or flips through zero.
	adds := !after.IsZero() && (posQty.IsZero() || after.IsPositive() != posQty.IsPositive() || after.Abs().GreaterThan(posQty.Abs()))
	dist := Check{Name: "liquidation_distance", OK: true}
	if !adds || !mark.IsPositive() {
		dist.Detail = "the order only reduces the position"
		if adds {
			dist.Detail = "no mark to measure the liquidation price from"
		}
		return []Check{capCheck, dist}
	}
	entry := price
	if !posQty.IsZero() && posQty.IsPositive() == after.IsPositive() { // adds: the average entry
		entry = posEntry.Mul(posQty.Abs()).Add(price.Mul(qty)).Div(after.Abs())
	}
	liq := LiquidationPrice(after, entry, t.Leverage, t.Brackets)
	pct := mark.Sub(liq).Abs().Div(mark).Mul(hundred)
	dist.OK = pct.GreaterThanOrEqual(t.MinDistancePct)
	dist.Detail = fmt.Sprintf("liquidation price after the fill %s is %s%% from the mark %s", liq.Round(2), pct.Round(2), mark)
	switch {
	case t.MinDistancePct.IsZero():
		dist.Detail += " (no minimum set)"
	case !dist.OK:
		dist.Detail += fmt.Sprintf(" (minimum %s%%); trade a smaller size or a lower leverage", t.MinDistancePct)
	default:
		dist.Detail += fmt.Sprintf(" (minimum %s%%)", t.MinDistancePct)
	}
	return []Check{capCheck, dist}
}
