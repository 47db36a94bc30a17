package project

import (
	"fmt"

	"github.com/shopspring/decimal"
)

// AgentEnvelope is [agent.envelope.VENUE]: the most the agent's writes and
// the deployments it created may together hold on the venue (the gross
// notional of their positions at the mark) and lose in a UTC day (their
// book's value at the day's start less its value now). Past the loss the
// node refuses the agent's orders that open or add; with CloseOnBreach it
// also closes the agent's positions there. A zero limit is off.
type AgentEnvelope struct {
	MaxNotional   decimal.Decimal `toml:"max_notional"`
	MaxDailyLoss  decimal.Decimal `toml:"max_daily_loss"`
	CloseOnBreach bool            `toml:"close_on_breach"`
}

// validateEnvelope checks each envelope names a configured venue and
// limits that are not negative.
func (a *AgentConfig) validateEnvelope(venues []Venue) error {
	for name, e := range a.Envelope {
		known := false
		for _, v := range venues {
			known = known || v.Name == name
		}
		if !known {
			return fmt.Errorf("agent.envelope.%s: no such venue in [[venues]]; name one of the configured venues", name)
		}
		if e.MaxNotional.IsNegative() || e.MaxDailyLoss.IsNegative() {
			return fmt.Errorf("agent.envelope.%s: max_notional and max_daily_loss must not be negative (0 means no limit)", name)
		}
		if e.CloseOnBreach && !e.MaxDailyLoss.IsPositive() {
			return fmt.Errorf("agent.envelope.%s: close_on_breach needs max_daily_loss (the loss that closes the agent's positions)", name)
		}
	}
	return nil
}
