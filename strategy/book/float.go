package book

import "math"

// The float64 copy of the book, for the research loop: the same rules as
// Account, Position, Trip and Limits, the same operations in the same
// order, without a generic call per operation. The tests hold it to
// Account[Float] bit for bit; the float64() conversions keep a product
// rounded before it is added (no fused multiply-add on any platform), as
// the generic code's method calls do.

// FloatDust is the flat tolerance of the float64 book (Account.Dust).
const FloatDust = 1e-9

// FloatAccount is Account in float64.
type FloatAccount struct {
	Cash, Fees, Slipped float64
}

// FloatPosition is Position in float64.
type FloatPosition struct {
	Qty    float64
	Trip   FloatTrip
	Closed FloatTrip
}

// FloatTrip is Trip in float64.
type FloatTrip struct {
	Active                        bool
	Short                         bool
	EntryBar                      int
	Entry, QtyIn, ValueIn, QtyOut float64
	ValueOut, Fees, Costs         float64
}

// PnL is Trip.PnL.
func (t *FloatTrip) PnL() float64 {
	d := t.ValueOut - t.ValueIn
	if t.Short {
		d = -d
	}
	return d - t.Fees - t.Costs
}

// ExitPrice is Trip.ExitPrice.
func (t *FloatTrip) ExitPrice() float64 { return t.ValueOut / t.QtyOut }

// Side is +1 for a long trip and -1 for a short one.
func (t *FloatTrip) Side() float64 {
	if t.Short {
		return -1
	}
	return 1
}

// FloatSizing is Sizing in float64.
func FloatSizing(slip, fee float64) float64 { return (1 + slip) * (1 + fee) }

// FloatTarget is Target in float64.
func FloatTarget(f, eq, p, sizing, pos float64) float64 { return f*eq/(p*sizing) - pos }

// Charge is Account.Charge.
func (a *FloatAccount) Charge(p *FloatPosition, amt float64) {
	a.Cash -= amt
	p.Trip.Costs += amt
}

// Fill is Account.Fill.
func (a *FloatAccount) Fill(p *FloatPosition, bar int, mark, dq, slip, fee float64) (charged float64, closed bool) {
	buy := dq > 0
	qty := math.Abs(dq)
	var px float64
	if buy {
		px = mark * (1 + slip)
	} else {
		px = mark * (1 - slip)
	}
	charged = qty * px * fee
	a.Slipped += float64(qty * mark * slip)
	return charged, a.Book(p, bar, dq, px, charged)
}

// Book is Account.Book.
func (a *FloatAccount) Book(p *FloatPosition, bar int, dq, px, fee float64) (closed bool) {
	buy := dq > 0
	qty := math.Abs(dq)
	a.Cash -= float64(dq*px) + fee
	a.Fees += fee

	prev := p.Qty
	pos := prev + dq
	if math.Abs(pos) <= FloatDust*max(math.Abs(prev), qty) {
		pos = 0
	}
	if prev == 0 || (prev > 0) == buy {
		p.Trip.add(bar, !buy, qty, px, fee)
		p.Qty = pos
		return false
	}
	flips := pos == 0 || (pos > 0) != (prev > 0)
	closing := qty
	if flips {
		closing = math.Abs(prev)
	}
	share := closing / qty
	t := &p.Trip
	t.QtyOut += closing
	t.ValueOut += float64(closing * px)
	t.Fees += float64(fee * share)
	if flips {
		p.Closed, closed = *t, true
		*t = FloatTrip{}
	}
	if pos != 0 && (pos > 0) != (prev > 0) {
		t.add(bar, !buy, math.Abs(pos), px, fee*(1-share))
	}
	p.Qty = pos
	return closed
}

func (t *FloatTrip) add(bar int, short bool, qty, px, fee float64) {
	if !t.Active {
		*t = FloatTrip{Active: true, Short: short, EntryBar: bar, Entry: px}
	} else {
		t.Entry += (px - t.Entry) * qty / (t.QtyIn + qty)
	}
	t.QtyIn += qty
	t.ValueIn += float64(qty * px)
	t.Fees += fee
}
