package book

import "wicket/internal/margin"

// Bracket is one tier of a contract's maintenance margin table in
// research's numbers (internal/margin.Bracket: Floor, Rate, Amount).
type Bracket = margin.Bracket[margin.Float]

// SingleBracket is the table of a contract with one maintenance margin
// rate for every notional: research's maintenance_margin.
func SingleBracket(rate float64) []Bracket { return []Bracket{{Rate: margin.Float(rate)}} }

// LiquidationPrice is where a venue liquidates an isolated position of
// signed quantity qty entered at entry with leverage lev, by the one rule
// the node's guardrail also uses (internal/margin.LiquidationPrice: the
// maintenance margin on the notional at the liquidation price, with the
// bracket that notional falls in). Zero for no position.
func LiquidationPrice(qty, entry, lev float64, brackets []Bracket) float64 {
	return float64(margin.LiquidationPrice(margin.Float(qty), margin.Float(entry), margin.Float(lev), brackets))
}
