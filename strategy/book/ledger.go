package book

// The fill rules, written once (FloatAccount is their float64 copy):
//
//   - A fill of dq (signed) at mark p with slippage slip (a fraction of
//     the mark, against the trader) fills at px = p(1+slip) buying or
//     p(1-slip) selling; its fee is |dq| × px × fee; cash falls by
//     dq × px + fee; the slippage cost |dq| × p × slip is tallied.
//   - A position that a fill should leave flat does: a remainder within
//     Dust (a fraction) of the larger of the position and the fill is 0,
//     so float rounding never leaves a crumb open.
//   - A round trip opens with the first fill from flat and closes when a
//     fill takes the position to flat or through zero (the rest opens the
//     next trip, at the same price, with the rest of the fee). Increases
//     add to its entry side and reductions to its exit side; its fees are
//     the fills' fees (a reversing fill's split by quantity), its costs
//     what Charge booked while it was open.
//   - The entry price is kept exactly: the first fill's price, moved by
//     each increase toward that increase's price by its share of the
//     quantity (entry + (px − entry) × q / (Q + q)), so a trip entered at
//     one price has exactly that price as its entry (never value ÷
//     quantity, which can be a unit in the last place off and move a stop
//     off the bar's low).

// Account is a cash account: its cash and what its fills cost.
type Account[N Number[N]] struct {
	Cash    N
	Fees    N // fees paid
	Slipped N // the slippage cost: quantity × mark × slippage, summed
	// One is 1 and Dust the flat tolerance (1e-9), in N.
	One, Dust N
}

// Position is one instrument's signed quantity and its round trip.
type Position[N Number[N]] struct {
	Qty  N
	Trip Trip[N]
	// Closed is the round trip the last closing fill ended (valid when
	// Fill or Book reports closed).
	Closed Trip[N]
}

// Trip is a round trip: a position from flat back to flat.
type Trip[N Number[N]] struct {
	Active   bool
	Short    bool
	EntryBar int
	Entry    N // the exact average entry price
	QtyIn    N // quantity entered
	ValueIn  N // Σ quantity × price of the increases
	QtyOut   N
	ValueOut N
	Fees     N
	Costs    N // funding, borrow, a liquidation's forfeit (Charge)
}

// PnL is a closed trip's profit: exit value less entry value (reversed
// for a short), less its fees and costs.
func (t *Trip[N]) PnL() N {
	d := t.ValueOut.Sub(t.ValueIn)
	if t.Short {
		d = d.Neg()
	}
	return d.Sub(t.Fees).Sub(t.Costs)
}

// ExitPrice is the average exit price.
func (t *Trip[N]) ExitPrice() N { return t.ValueOut.Div(t.QtyOut) }

// Sizing is the cost of a target's position per unit of mark: the fill
// pays slippage and then the fee on it, (1+slip)(1+fee).
func Sizing[N Number[N]](one, slip, fee N) N { return one.Add(slip).Mul(one.Add(fee)) }

// Target is the order that takes a position of pos to the fraction f of
// equity eq at mark p, where a unit costs p × sizing (Sizing).
func Target[N Number[N]](f, eq, p, sizing, pos N) N { return f.Mul(eq).Div(p.Mul(sizing)).Sub(pos) }

// Equity is cash plus the position at mark p.
func (a *Account[N]) Equity(p *Position[N], mark N) N { return a.Cash.Add(p.Qty.Mul(mark)) }

// Charge books a cost amt (negative: an income) to position p's trip.
func (a *Account[N]) Charge(p *Position[N], amt N) {
	a.Cash = a.Cash.Sub(amt)
	p.Trip.Costs = p.Trip.Costs.Add(amt)
}

// Fill books a fill of dq (signed, nonzero) of position p at mark on bar,
// with slippage slip and fee rate fee. It returns the fee charged and
// whether the fill ended p's round trip (then in p.Closed).
func (a *Account[N]) Fill(p *Position[N], bar int, mark, dq, slip, fee N) (charged N, closed bool) {
	buy := dq.Sign() > 0
	qty := dq.Abs()
	var px N
	if buy {
		px = mark.Mul(a.One.Add(slip))
	} else {
		px = mark.Mul(a.One.Sub(slip))
	}
	charged = qty.Mul(px).Mul(fee)
	a.Slipped = a.Slipped.Add(qty.Mul(mark).Mul(slip))
	return charged, a.Book(p, bar, dq, px, charged)
}

// Book books a fill of dq (signed, nonzero) of position p at price px
// (slippage included) charged fee, as a venue reports one: cash falls by
// dq × px + fee, and the round trip grows, shrinks, closes or reverses by
// the rules above. It reports whether the fill ended p's round trip (then
// in p.Closed).
func (a *Account[N]) Book(p *Position[N], bar int, dq, px, fee N) (closed bool) {
	buy := dq.Sign() > 0
	qty := dq.Abs()
	a.Cash = a.Cash.Sub(dq.Mul(px).Add(fee))
	a.Fees = a.Fees.Add(fee)

	prev := p.Qty
	pos := prev.Add(dq)
	if pos.Abs().Cmp(a.Dust.Mul(larger(prev.Abs(), qty))) <= 0 {
		var zero N
		pos = zero
	}
	if prev.IsZero() || (prev.Sign() > 0) == buy {
		p.Trip.add(bar, !buy, qty, px, fee)
		p.Qty = pos
		return false
	}
	flips := pos.IsZero() || (pos.Sign() > 0) != (prev.Sign() > 0)
	closing := qty
	if flips {
		closing = prev.Abs()
	}
	share := closing.Div(qty)
	t := &p.Trip
	t.QtyOut = t.QtyOut.Add(closing)
	t.ValueOut = t.ValueOut.Add(closing.Mul(px))
	t.Fees = t.Fees.Add(fee.Mul(share))
	if flips {
		p.Closed, closed = *t, true
		*t = Trip[N]{}
	}
	if !pos.IsZero() && (pos.Sign() > 0) != (prev.Sign() > 0) {
		t.add(bar, !buy, pos.Abs(), px, fee.Mul(a.One.Sub(share)))
	}
	p.Qty = pos
	return closed
}

// add books an increase of qty at px with fee fee, opening the trip.
func (t *Trip[N]) add(bar int, short bool, qty, px, fee N) {
	if !t.Active {
		*t = Trip[N]{Active: true, Short: short, EntryBar: bar, Entry: px}
	} else {
		t.Entry = t.Entry.Add(px.Sub(t.Entry).Mul(qty).Div(t.QtyIn.Add(qty)))
	}
	t.QtyIn = t.QtyIn.Add(qty)
	t.ValueIn = t.ValueIn.Add(qty.Mul(px))
	t.Fees = t.Fees.Add(fee)
}

// FundingEnd is where the span of a bar opening at open ends for funding:
// a settlement at t is charged at the open of the bar of the same series
// whose span holds it, open <= t < end, where end is that series' next
// bar's open (next, when hasNext; so a settlement inside a gap of its
// series' bars is charged before the gap, on the position held through
// it) or open + the bar's length for its last bar. The single-series and
// the portfolio engine both charge by it.
func FundingEnd(open, next int64, hasNext bool, barSecs int64) int64 {
	if hasNext {
		return next
	}
	return open + barSecs
}
