package book

import (
	"fmt"
	"math"
	"testing"

	"github.com/shopspring/decimal"
	"pgregory.net/rapid"
)

// ledger is one implementation of the book under test, driven with
// float64 inputs and read back as float64 state.
type ledger interface {
	fill(bar int, mark, dq, slip, fee float64) (charged float64, closed bool, pnl float64)
	charge(amt float64)
	book(bar int, dq, px, fee float64) bool // a venue's fill: its price and fee
	clip(p, dq float64) float64
	mark(day int64, eq float64) Breach
	markAt(day int64, p float64) Breach // marks the book's own equity at mark p
	state() []float64                   // cash, qty, fees, slipped, trip entry, qty in, day start, peak
}

// floatBook is the research loop's book: the float64 copy.
type floatBook struct {
	a FloatAccount
	p FloatPosition
	l FloatLimits
	d FloatDay
}

func (b *floatBook) fill(bar int, mark, dq, slip, fee float64) (float64, bool, float64) {
	c, closed := b.a.Fill(&b.p, bar, mark, dq, slip, fee)
	return c, closed, b.p.Closed.PnL()
}
func (b *floatBook) charge(amt float64) { b.a.Charge(&b.p, amt) }
func (b *floatBook) book(bar int, dq, px, fee float64) bool {
	return b.a.Book(&b.p, bar, dq, px, fee)
}
func (b *floatBook) clip(p, dq float64) float64 { return b.l.Clip(p, b.p.Qty, dq) }
func (b *floatBook) mark(day int64, eq float64) Breach {
	b.d.Mark(day, eq)
	return b.l.Breached(&b.d, eq)
}
func (b *floatBook) markAt(day int64, p float64) Breach {
	eq := b.a.Cash + b.p.Qty*p
	b.d.Mark(day, eq)
	return b.l.Breached(&b.d, eq)
}
func (b *floatBook) state() []float64 {
	return []float64{b.a.Cash, b.p.Qty, b.a.Fees, b.a.Slipped, b.p.Trip.Entry, b.p.Trip.QtyIn, b.d.Start, b.d.Peak}
}

// genericBook is the generic book at N (Float, or decimal.Decimal as a
// deployment keeps it).
type genericBook[N Number[N]] struct {
	a    Account[N]
	p    Position[N]
	l    Limits[N]
	d    Day[N]
	from func(float64) N
	to   func(N) (float64, bool)
}

func (b *genericBook[N]) fill(bar int, mark, dq, slip, fee float64) (float64, bool, float64) {
	c, closed := b.a.Fill(&b.p, bar, b.from(mark), b.from(dq), b.from(slip), b.from(fee))
	cf, _ := b.to(c)
	pnl, _ := b.to(b.p.Closed.PnL())
	return cf, closed, pnl
}
func (b *genericBook[N]) charge(amt float64) { b.a.Charge(&b.p, b.from(amt)) }
func (b *genericBook[N]) book(bar int, dq, px, fee float64) bool {
	return b.a.Book(&b.p, bar, b.from(dq), b.from(px), b.from(fee))
}
func (b *genericBook[N]) clip(p, dq float64) float64 {
	v, _ := b.to(b.l.Clip(b.from(p), b.p.Qty, b.from(dq)))
	return v
}
func (b *genericBook[N]) mark(day int64, eq float64) Breach {
	e := b.from(eq)
	b.d.Mark(day, e)
	return b.l.Breached(&b.d, e)
}
func (b *genericBook[N]) markAt(day int64, p float64) Breach {
	eq := b.a.Equity(&b.p, b.from(p))
	b.d.Mark(day, eq)
	return b.l.Breached(&b.d, eq)
}
func (b *genericBook[N]) state() []float64 {
	var out []float64
	for _, v := range []N{b.a.Cash, b.p.Qty, b.a.Fees, b.a.Slipped, b.p.Trip.Entry, b.p.Trip.QtyIn, b.d.Start, b.d.Peak} {
		f, _ := b.to(v)
		out = append(out, f)
	}
	return out
}

// exact reports the generic decimal book's state that is not exactly a
// float64 (the property on exact inputs demands none).
func (b *genericBook[N]) inexact() string {
	for i, v := range []N{b.a.Cash, b.p.Qty, b.a.Fees, b.a.Slipped} {
		if _, ok := b.to(v); !ok {
			return fmt.Sprintf("field %d = %v", i, v)
		}
	}
	return ""
}

// caps are the limits every book under test is built from.
type caps struct {
	order, position, loss, ddPct float64 // 0: none
	capital                      float64
}

func (c caps) dec() Caps {
	p := func(v float64) *decimal.Decimal {
		if v == 0 {
			return nil
		}
		d := decimal.NewFromFloat(v)
		return &d
	}
	return Caps{MaxOrderNotional: p(c.order), MaxPositionNotional: p(c.position), MaxDailyLoss: p(c.loss), MaxDrawdownPct: p(c.ddPct), Capital: decimal.NewFromFloat(c.capital)}
}

func newFloatBook(c caps) *floatBook {
	return &floatBook{a: FloatAccount{Cash: c.capital}, l: c.dec().Float(), d: NewFloatDay(c.capital)}
}

func newGenericFloat(c caps) *genericBook[Float] {
	fl := c.dec().Float()
	inf := func(v float64) (Float, bool) { return Float(v), !math.IsInf(v, 1) }
	l := Limits[Float]{One: 1}
	l.Order, l.HasOrder = inf(fl.Order)
	l.Position, l.HasPosition = inf(fl.Position)
	l.Loss, l.HasLoss = inf(fl.Loss)
	l.Drawdown, l.HasDrawdown = inf(fl.Drawdown)
	return &genericBook[Float]{a: Account[Float]{Cash: Float(c.capital), One: 1, Dust: FloatDust}, l: l, d: NewDay(Float(c.capital)),
		from: func(f float64) Float { return Float(f) }, to: func(f Float) (float64, bool) { return float64(f), true }}
}

func newGenericDecimal(c caps) *genericBook[decimal.Decimal] {
	capital := decimal.NewFromFloat(c.capital)
	return &genericBook[decimal.Decimal]{a: DecimalAccount(capital),
		l: c.dec().Decimal(), d: NewDay(capital),
		from: decimal.NewFromFloat, to: func(d decimal.Decimal) (float64, bool) { return d.Float64() }}
}

// TestBookCases is the table every implementation passes bit for bit:
// the float64 copy, the generic book at Float and at decimal. The
// amounts are exact in both number types, so any difference is a rule
// that drifted.
func TestBookCases(t *testing.T) {
	type step struct {
		mark, dq, slip, fee float64
		charge              float64
		venueFee            float64 // a venue's fill at mark with this fee (Book)
	}
	cases := []struct {
		name  string
		caps  caps
		steps []step
		want  []float64 // cash, qty, fees, slipped, entry, qty in
		pnl   float64   // the last closed trip's
	}{
		{"buy", caps{capital: 10000}, []step{{mark: 100, dq: 10, slip: 1.0 / 128, fee: 1.0 / 1024}},
			[]float64{10000 - 1007.8125 - 1007.8125/1024, 10, 1007.8125 / 1024, 7.8125, 100.78125, 10}, 0},
		{"round trip", caps{capital: 10000}, []step{{mark: 100, dq: 10, fee: 1.0 / 1024}, {mark: 120, dq: -10, fee: 1.0 / 1024}},
			[]float64{10000 + 200 - 1000.0/1024 - 1200.0/1024, 0, 2200.0 / 1024, 0, 0, 0}, 200 - 2200.0/1024},
		{"reverse through zero", caps{capital: 10000}, []step{{mark: 100, dq: 10}, {mark: 80, dq: -30}},
			[]float64{10000 - 1000 + 2400, -20, 0, 0, 80, 20}, -200},
		{"average entry", caps{capital: 10000}, []step{{mark: 100, dq: 1}, {mark: 104, dq: 3}},
			[]float64{10000 - 100 - 312, 4, 0, 0, 103, 4}, 0},
		{"cost while open", caps{capital: 10000}, []step{{mark: 64, dq: -2}, {charge: 1.5}, {mark: 32, dq: 2}},
			[]float64{10000 + 128 - 1.5 - 64, 0, 0, 0, 0, 0}, 64 - 1.5},
		{"a venue's fill, then a sale", caps{capital: 10000}, []step{{mark: 64.5, dq: 4, venueFee: 0.25}, {mark: 66, dq: -1, venueFee: 0.125}},
			[]float64{10000 - 258 - 0.25 + 66 - 0.125, 3, 0.375, 0, 64.5, 4}, 0},
		{"position limit", caps{capital: 10000, position: 512}, []step{{mark: 64, dq: 100}},
			[]float64{10000 - 512, 8, 0, 0, 64, 8}, 0},
		{"capital bounds the position", caps{capital: 1024}, []step{{mark: 64, dq: 100}},
			[]float64{0, 16, 0, 0, 64, 16}, 0},
		{"order limit", caps{capital: 10000, order: 256}, []step{{mark: 64, dq: -100}},
			[]float64{10000 + 256, -4, 0, 0, 64, 4}, 0},
		{"drifted above the limit: not added to", caps{capital: 10000, position: 512}, []step{{mark: 64, dq: 8}, {mark: 128, dq: 2}},
			[]float64{10000 - 512, 8, 0, 0, 64, 8}, 0},
		{"drifted above the limit: reduced", caps{capital: 10000, position: 512}, []step{{mark: 64, dq: 8}, {mark: 128, dq: -2}},
			[]float64{10000 - 512 + 256, 6, 0, 0, 64, 8}, 0},
	}
	for _, c := range cases {
		for name, b := range map[string]ledger{"float": newFloatBook(c.caps), "generic float": newGenericFloat(c.caps), "decimal": newGenericDecimal(c.caps)} {
			var pnl float64
			for i, s := range c.steps {
				if s.charge != 0 {
					b.charge(s.charge)
					continue
				}
				if s.venueFee != 0 {
					b.book(i, s.dq, s.mark, s.venueFee)
					continue
				}
				if dq := b.clip(s.mark, s.dq); dq != 0 {
					if _, closed, p := b.fill(i, s.mark, dq, s.slip, s.fee); closed {
						pnl = p
					}
				}
				b.markAt(0, s.mark)
			}
			got := b.state()[:6]
			for k := range c.want {
				if got[k] != c.want[k] {
					t.Errorf("%s, %s: state %v, want %v", c.name, name, got, c.want)
					break
				}
			}
			if pnl != c.pnl {
				t.Errorf("%s, %s: closed trip pnl %v, want %v", c.name, name, pnl, c.pnl)
			}
		}
	}
}

// TestBreakerCases: the equity breakers, every implementation alike.
func TestBreakerCases(t *testing.T) {
	cases := []struct {
		name string
		caps caps
		eqs  []float64 // marks, one a day
		days []int64
		want []Breach
	}{
		{"daily loss from the day's start", caps{capital: 10000, loss: 500}, []float64{9800, 9400, 9300, 8800},
			[]int64{0, 0, 1, 1}, []Breach{NoBreach, DailyLoss, NoBreach, DailyLoss}},
		{"exactly the limit does not trip", caps{capital: 10000, loss: 500}, []float64{9500}, []int64{0}, []Breach{NoBreach}},
		{"drawdown from the peak", caps{capital: 10000, ddPct: 25}, []float64{12000, 9001, 8999}, []int64{0, 1, 2},
			[]Breach{NoBreach, NoBreach, Drawdown}},
	}
	for _, c := range cases {
		for name, b := range map[string]ledger{"float": newFloatBook(c.caps), "generic float": newGenericFloat(c.caps), "decimal": newGenericDecimal(c.caps)} {
			for k, eq := range c.eqs {
				if got := b.mark(c.days[k], eq); got != c.want[k] {
					t.Errorf("%s, %s: mark %d (%v) breached %v, want %v", c.name, name, k, eq, got, c.want[k])
				}
			}
		}
	}
}

// drawPath draws a bar path and the intents decided on it, on prices
// that are powers of two and quantities in eighths, where float64 and
// decimal arithmetic are both exact.
type action struct {
	exp    int     // the bar's mark is 2^exp
	dq     float64 // the order asked (0: none)
	slip   float64
	charge float64
	newDay bool
}

func drawActions(t *rapid.T, exact bool) ([]action, caps) {
	n := rapid.IntRange(1, 60).Draw(t, "bars")
	out := make([]action, n)
	exp := rapid.IntRange(2, 10).Draw(t, "start")
	for i := range out {
		exp = min(12, max(0, exp+rapid.IntRange(-1, 1).Draw(t, "move")))
		a := action{exp: exp, newDay: rapid.Bool().Draw(t, "day")}
		if rapid.IntRange(0, 3).Draw(t, "decide") > 0 {
			a.dq = float64(rapid.IntRange(-800, 800).Draw(t, "dq")) / 8
		}
		a.slip = float64(rapid.IntRange(0, 64).Draw(t, "slip")) / 1024
		if rapid.IntRange(0, 5).Draw(t, "cost") == 0 {
			a.charge = float64(rapid.IntRange(-64, 64).Draw(t, "charge")) / 16
		}
		if !exact {
			a.dq *= 1 + rapid.Float64Range(-0.3, 0.3).Draw(t, "noise")
			a.slip = rapid.Float64Range(0, 0.01).Draw(t, "slip")
			a.charge *= rapid.Float64Range(0.1, 3).Draw(t, "charge noise")
		}
		out[i] = a
	}
	pick := func(name string, vals ...float64) float64 { return vals[rapid.IntRange(0, len(vals)-1).Draw(t, name)] }
	c := caps{
		capital:  pick("capital", 1024, 65536, 1<<20),
		order:    pick("order", 0, 256, 4096),
		position: pick("position", 0, 2048, 32768),
		loss:     pick("loss", 0, 128, 4096),
		ddPct:    pick("dd", 0, 25, 50),
	}
	return out, c
}

// run drives a book through the actions: at each bar, a mark at its
// price, then its order (clipped, then filled with a fee of 1/1024), then
// its cost; it returns every step's state, flattened, and with pnl the
// closed trips' profits (a reversing fill splits its fee by a quotient,
// which decimals round elsewhere than floats).
func run(b ledger, acts []action, pnls bool) []float64 {
	var out []float64
	day := int64(0)
	for i, a := range acts {
		p := math.Ldexp(1, a.exp)
		if a.newDay {
			day++
		}
		out = append(out, float64(b.markAt(day, p)))
		if a.dq != 0 {
			if dq := b.clip(p, a.dq); dq != 0 {
				c, closed, pnl := b.fill(i, p, dq, a.slip, 1.0/1024)
				out = append(out, c)
				if closed {
					out = append(out, 1)
					if pnls {
						out = append(out, pnl)
					}
				}
			}
		}
		if a.charge != 0 {
			b.charge(a.charge)
		}
		out = append(out, b.state()[:4]...)
	}
	return out
}

// TestBacktestBookIsDeploymentBook: random bar paths and intents through
// the book the backtest uses (the float64 copy) and the one deployments
// use (the generic book at decimal): identical cash, position and fees,
// step for step, on inputs both number types hold exactly.
func TestBacktestBookIsDeploymentBook(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		acts, c := drawActions(t, true)
		f, d := newFloatBook(c), newGenericDecimal(c)
		got, want := run(f, acts, false), run(d, acts, false)
		if why := d.inexact(); why != "" {
			t.Fatalf("the decimal book left an amount no float64 holds (%s): the property's inputs are not exact", why)
		}
		compare(t, got, want)
	})
}

// TestFloatCopyIsGeneric: the float64 copy and the generic book at Float
// agree bit for bit on any inputs, so the research loop's hand
// specialisation cannot drift from the rules the deployment's decimals
// follow.
func TestFloatCopyIsGeneric(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		acts, c := drawActions(t, false)
		a, b := newFloatBook(c), newGenericFloat(c)
		compare(t, run(a, acts, true), run(b, acts, true))
		compare(t, a.state(), b.state())
	})
}

func compare(t *rapid.T, got, want []float64) {
	if len(got) != len(want) {
		t.Fatalf("%d steps of state, want %d", len(got), len(want))
	}
	for i := range got {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) && !(got[i] == 0 && want[i] == 0) {
			t.Fatalf("state %d: %v (%x), want %v (%x)", i, got[i], math.Float64bits(got[i]), want[i], math.Float64bits(want[i]))
		}
	}
}
