package server

import (
	"fmt"

	"github.com/shopspring/decimal"

	"wicket/internal/margin"
	"wicket/internal/project"
	"wicket/node/command"
	"wicket/node/guardrail"
)

// checkLeverage adds the leverage checks (guardrail.CheckLeverage) to a
// submit_order's report at a margined venue (binance-futures): the
// contract's leverage within its cap, and for an order that opens or adds
// the liquidation price after the fill at least the venue's
// min_liquidation_distance_pct from the mark. The figures are the
// venue's: its position and entry as last read, its mark. It reports
// whether every check it added passed.
func (e *engine) checkLeverage(c command.Command, rep *guardrail.Report) bool {
	r := e.remotes[c.Venue]
	if r == nil || r.cfg.Kind != project.KindBinanceFutures || c.Verb != command.SubmitOrder {
		return true
	}
	mark, ok := r.Mark(c.Symbol)
	if !ok {
		return true // the guardrail's own checks already refuse an order with no mark
	}
	qty, entry := r.Position(c.Symbol), mark
	for _, p := range r.account.Positions {
		if p.Symbol == c.Symbol && p.AveragePrice.IsPositive() {
			entry = p.AveragePrice
		}
	}
	price := mark
	if c.Type != command.Market && c.Price.IsPositive() && !c.Type.Protective() {
		price = c.Price
	}
	k := r.cfg.Contract(c.Symbol)
	terms := guardrail.Leverage{Leverage: k.Leverage, MaxLeverage: k.MaxLeverage, MinDistancePct: r.cfg.MinLiquidationDistancePct}
	if mm, ok := maintenanceOf(r.ex); ok { // the venue's brackets; the rule picks the one at the liquidation price
		terms.Brackets = mm.MaintenanceBrackets(c.Symbol)
	}
	margin := c.Quantity.Mul(price).Div(decimal.NewFromInt(int64(max(k.Leverage, 1)))).Round(2)
	info := guardrail.Check{Name: "margin", OK: true, Detail: fmt.Sprintf("margin required %s (notional %s at %dx)", margin, c.Quantity.Mul(price).Round(2), k.Leverage)}
	if fr, ok := fundingRateOf(r.ex); ok {
		if rate, ok := fr.FundingRate(c.Symbol); ok {
			info.Detail += fmt.Sprintf("; funding rate in force %s%%", rate.Mul(decimal.NewFromInt(100)))
		}
	}
	rep.Checks = append(rep.Checks, info)
	ok = true
	for _, ch := range guardrail.CheckLeverage(c.Side, c.Quantity, price, qty, entry, mark, terms) {
		rep.Checks = append(rep.Checks, ch)
		ok = ok && ch.OK
	}
	rep.OK = rep.OK && ok
	return ok
}

// fundingRater is a margined venue's funding rate in force per symbol,
// as its last marks read it (binance-futures), for the preview.
type fundingRater interface {
	FundingRate(symbol string) (decimal.Decimal, bool)
}

func fundingRateOf(ex Exchange) (fundingRater, bool) {
	if x, ok := ex.(scrubbedExchange); ok {
		ex = x.ex
	}
	fr, ok := ex.(fundingRater)
	return fr, ok
}

// maintenancer is a margined venue's maintenance margin table for a
// symbol (binance-futures: its notional brackets), sorted by floor; none
// when the venue has not told it.
type maintenancer interface {
	MaintenanceBrackets(symbol string) []margin.Bracket[decimal.Decimal]
}

func maintenanceOf(ex Exchange) (maintenancer, bool) {
	if x, ok := ex.(scrubbedExchange); ok {
		ex = x.ex
	}
	m, ok := ex.(maintenancer)
	return m, ok
}

// checkMargin is checkCash at a margined venue: the part of an order
// that opens or adds to a position, on either side, needs its notional
// over the contract's leverage in available balance (the venue's
// buying power); a part that closes needs none.
func checkMargin(r *remote, symbol string, side command.Side, qty, at decimal.Decimal) *rejection {
	if !qty.IsPositive() {
		return nil
	}
	pos := r.Position(symbol)
	signed := qty
	if side == command.Sell {
		signed = qty.Neg()
	}
	opening := qty
	if !pos.IsZero() && pos.IsPositive() != signed.IsPositive() { // closes first, opens the rest
		opening = decimal.Max(decimal.Zero, qty.Sub(pos.Abs()))
	}
	if opening.IsZero() {
		return nil
	}
	lev := max(r.cfg.Contract(symbol).Leverage, 1)
	need := opening.Mul(at).Div(decimal.NewFromInt(int64(lev))).Round(8)
	if need.LessThanOrEqual(r.Cash()) {
		return nil
	}
	return &rejection{code: "insufficient_margin",
		reason: fmt.Sprintf("opening %s %s at %s needs %s margin at %dx; %s has %s available", opening, symbol, at, need, lev, r.cfg.Name, r.Cash())}
}
