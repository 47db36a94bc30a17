package book

import "math"

// Bracket is one tier of a contract's maintenance margin table, as a
// venue publishes it (Binance's notional brackets): a position whose
// notional is at least Floor (and below the next tier's Floor) keeps
// maintenance margin notional × Rate − Amount. Amount is the tier's
// cumulative deduction (Binance's cum), which makes the margin continuous
// across tiers; the first tier's Floor is 0 and its Amount 0.
type Bracket struct {
	Floor, Rate, Amount float64
}

// SingleBracket is the table of a contract with one maintenance margin
// rate for every notional: research's maintenance_margin.
func SingleBracket(rate float64) []Bracket { return []Bracket{{Rate: rate}} }

// LiquidationPrice is where a venue liquidates an isolated position of
// signed quantity qty entered at entry with leverage lev: the price P at
// which the position's equity — its margin |qty| × entry / lev plus its
// unrealised P&L — falls to the maintenance margin on its notional at P,
// |qty| × P, with the bracket that notional falls in (brackets sorted by
// Floor). For one bracket of rate r and amount a, with q = |qty|:
//
//	long:  (entry × (1 − 1/lev) − a/q) / (1 − r)
//	short: (entry × (1 + 1/lev) + a/q) / (1 + r)
//
// which is Binance's isolated rule with the margin as the wallet. The
// maintenance margin is on the notional at the liquidation price, not at
// entry: a 10x short at 0.5 % liquidates at 1.1/1.005 = 1.094527 × entry,
// not at 1 + 0.1 − 0.005 = 1.095. Equity minus maintenance margin moves
// one way in P (margin grows with slope q × r < q), so one bracket holds
// the root: the first whose candidate price's notional lies in its tier.
// Zero for no position, no leverage or no brackets.
func LiquidationPrice(qty, entry, lev float64, brackets []Bracket) float64 {
	if qty == 0 || !(lev > 0) || len(brackets) == 0 {
		return 0
	}
	q := math.Abs(qty)
	var p float64
	for i, b := range brackets {
		if qty > 0 {
			p = (entry*(1-1/lev) - b.Amount/q) / (1 - b.Rate)
		} else {
			p = (entry*(1+1/lev) + b.Amount/q) / (1 + b.Rate)
		}
		if n := q * p; n >= b.Floor && (i+1 == len(brackets) || n < brackets[i+1].Floor) {
			return max(p, 0)
		}
	}
	return max(p, 0) // a table whose tiers leave a gap: the last candidate
}
