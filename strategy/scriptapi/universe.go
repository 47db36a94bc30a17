package scriptapi

import (
	"fmt"
	"strconv"
	"strings"
)

// Rebalance schedules a portfolio strategy may declare.
const (
	RebalanceBar     = "bar"
	RebalanceDaily   = "daily"
	RebalanceWeekly  = "weekly"
	RebalanceMonthly = "monthly"
	rebalanceDrift   = "drift:"
)

// RebalanceHelp names the schedules, for messages.
const RebalanceHelp = `"bar", "daily", "weekly", "monthly" or "drift:F" (F a fraction of equity, e.g. "drift:0.05")`

// MaxUniverse bounds the assets of one portfolio strategy.
const MaxUniverse = 64

// ParseRebalance reads a rebalance schedule: its period ("bar", "daily",
// "weekly", "monthly", or "drift") and, for drift, the threshold (a
// fraction of equity above 0 and below 1).
func ParseRebalance(s string) (period string, drift float64, err error) {
	switch s {
	case "", RebalanceBar:
		return RebalanceBar, 0, nil
	case RebalanceDaily, RebalanceWeekly, RebalanceMonthly:
		return s, 0, nil
	}
	if f, ok := strings.CutPrefix(s, rebalanceDrift); ok {
		d, perr := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if perr == nil && d > 0 && d < 1 {
			return "drift", d, nil
		}
		return "", 0, fmt.Errorf("rebalance %q: the drift threshold must be a fraction of equity above 0 and below 1, e.g. \"drift:0.05\"", s)
	}
	return "", 0, fmt.Errorf("rebalance %q is not one of %s", s, RebalanceHelp)
}

// UniversePattern reports whether a universe entry is a pattern.
func UniversePattern(name string) bool { return strings.ContainsAny(name, "*?[") }

// PortfolioAccount is what a portfolio's on_bar sees at a bar's close:
// the cash, the equity, and each asset's position (signed quantity) and
// mark (its last close), in universe order.
type PortfolioAccount struct {
	Cash, Equity     float64
	Positions, Marks []float64
}
