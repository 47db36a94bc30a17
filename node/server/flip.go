package server

import (
	"wicket/internal/project"
	"wicket/node/command"
	"wicket/node/guardrail"
)

// checkFlip adds the flip check (guardrail.CheckFlip) to a submit_order's
// report at a margined venue (binance-futures) whose flip policy is
// refuse (the only one built): an order that would close the position,
// as the venue last reported it, and open the opposite one is refused.
// It reports whether the check passed.
func (e *engine) checkFlip(c command.Command, rep *guardrail.Report) bool {
	r := e.remotes[c.Venue]
	if r == nil || r.cfg.Kind != project.KindBinanceFutures || c.Verb != command.SubmitOrder || r.cfg.FlipPolicy() != project.FlipRefuse {
		return true
	}
	ch := guardrail.CheckFlip(c.Symbol, c.Side, c.Quantity, r.Position(c.Symbol))
	rep.Checks = append(rep.Checks, ch)
	rep.OK = rep.OK && ch.OK
	return ch.OK
}
