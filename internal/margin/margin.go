// Package margin is the one rule for where a venue liquidates a margined
// position, written once over any number type so that research's float64
// loop and the node's decimal guardrail compute the same price by the same
// steps. It holds arithmetic only: it never reads a venue, a clock or a
// configuration, and it never rounds (callers round to their tick).
package margin

// Number is the arithmetic the rule needs. decimal.Decimal satisfies it as
// it is; Float wraps float64 for research.
type Number[T any] interface {
	Add(T) T
	Sub(T) T
	Mul(T) T
	Div(T) T
	Cmp(T) int
	Sign() int
}

// Bracket is one tier of a contract's maintenance margin table, as a venue
// publishes it (Binance's notional brackets): a position whose notional is
// at least Floor, and below the next tier's Floor, keeps maintenance margin
// notional × Rate − Amount. Amount is the tier's cumulative deduction
// (Binance's cum), which makes the margin continuous across tiers; the
// first tier's Floor is 0 and its Amount 0.
type Bracket[T Number[T]] struct {
	Floor, Rate, Amount T
}

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
// entry or at the mark: a 10x short at 0.5 % liquidates at 1.1/1.005 =
// 1.094527 × entry, not at 1 + 0.1 − 0.005 = 1.095. Equity minus
// maintenance margin moves one way in P (the margin grows with slope
// q × r < q), so one bracket holds the root: the first whose candidate
// price's notional lies in its tier. Zero for no position, no positive
// leverage or no brackets; never negative.
func LiquidationPrice[T Number[T]](qty, entry, lev T, brackets []Bracket[T]) T {
	var zero T
	if qty.Sign() == 0 || lev.Sign() <= 0 || len(brackets) == 0 {
		return zero
	}
	one := lev.Div(lev) // exactly 1 in both float64 and decimal arithmetic
	q := qty
	if q.Sign() < 0 {
		q = zero.Sub(q)
	}
	var p T
	for i, b := range brackets {
		if qty.Sign() > 0 {
			p = entry.Mul(one.Sub(one.Div(lev))).Sub(b.Amount.Div(q)).Div(one.Sub(b.Rate))
		} else {
			p = entry.Mul(one.Add(one.Div(lev))).Add(b.Amount.Div(q)).Div(one.Add(b.Rate))
		}
		n := q.Mul(p)
		if n.Cmp(b.Floor) >= 0 && (i+1 == len(brackets) || n.Cmp(brackets[i+1].Floor) < 0) {
			break
		}
	}
	if p.Sign() < 0 { // a table whose tiers leave a gap ends on the last candidate
		return zero
	}
	return p
}

// Float is float64 with the methods Number asks for: research's number.
type Float float64

// Add returns f + g.
func (f Float) Add(g Float) Float { return f + g }

// Sub returns f − g.
func (f Float) Sub(g Float) Float { return f - g }

// Mul returns f × g.
func (f Float) Mul(g Float) Float { return f * g }

// Div returns f / g.
func (f Float) Div(g Float) Float { return f / g }

// Cmp returns −1, 0 or +1 as f is below, equal to or above g.
func (f Float) Cmp(g Float) int {
	switch {
	case f < g:
		return -1
	case f > g:
		return 1
	}
	return 0
}

// Sign returns −1, 0 or +1 as f is negative, zero or positive.
func (f Float) Sign() int { return f.Cmp(0) }
