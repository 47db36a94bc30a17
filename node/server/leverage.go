package server

import (
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
	terms := guardrail.Leverage{Leverage: k.Leverage, MaxLeverage: k.MaxLeverage, MaintenanceRate: guardrail.DefaultMaintenanceRate,
		MinDistancePct: r.cfg.MinLiquidationDistancePct}
	ok = true
	for _, ch := range guardrail.CheckLeverage(c.Side, c.Quantity, price, qty, entry, mark, terms) {
		rep.Checks = append(rep.Checks, ch)
		ok = ok && ch.OK
	}
	rep.OK = rep.OK && ok
	return ok
}
