package margin_test

import (
	"math"
	"testing"

	"github.com/shopspring/decimal"

	"wicket/internal/margin"
)

// cases is the one table both number types pass: research's float64 and
// the node's decimal. Table two: 0.4 % below 50,000 of notional, 0.5 %
// (cum 50,000 × 0.001 = 50) from 50,000.
//
// One bracket, 0.5 %, 10x, entry 100: a short's margin is 10, so at P its
// equity is 10 − (P − 100) and its maintenance margin 0.005 P; equal at
// P = 110 / 1.005 = 109.452736… (1.094527 × entry), where a margin on the
// entry notional would give 109.5. The long: 90 / 0.995 = 90.452261….
// Table two: a 10x long of 1 at 60,000 liquidates near 54,000, in the
// second tier: (54,000 − 50) / 0.995; of 0.5 (first tier) 54,000 / 0.996
// = 54,216.867469…, the venue's figure for a 0.1 long at 10x (54216.87).
var cases = []struct {
	name            string
	qty, entry, lev string
	table           [][3]string // floor, rate, amount
	want            string      // to 6 decimals
}{
	{"short one bracket", "-1", "100", "10", one, "109.452736"},
	{"long one bracket", "1", "100", "10", one, "90.452261"},
	{"size does not move it without a deduction", "-3", "100", "10", one, "109.452736"},
	{"flat", "0", "100", "10", one, "0"},
	{"no leverage", "1", "100", "0", one, "0"},
	{"long, second tier", "1", "60000", "10", two, "54221.105528"},
	{"long, first tier", "0.5", "60000", "10", two, "54216.867470"},
	{"short, first tier", "-1", "40000", "10", two, "43824.701195"},
	{"short, second tier", "-1", "60000", "10", two, "65721.393035"},
	{"1x long never liquidates above zero", "2", "100", "1", one, "0"},
}

var (
	one = [][3]string{{"0", "0.005", "0"}}
	two = [][3]string{{"0", "0.004", "0"}, {"50000", "0.005", "50"}}
)

func TestLiquidationPriceBothNumbers(t *testing.T) {
	for _, c := range cases {
		d := func(s string) decimal.Decimal { return decimal.RequireFromString(s) }
		f := func(s string) margin.Float { v, _ := d(s).Float64(); return margin.Float(v) }
		var dt []margin.Bracket[decimal.Decimal]
		var ft []margin.Bracket[margin.Float]
		for _, b := range c.table {
			dt = append(dt, margin.Bracket[decimal.Decimal]{Floor: d(b[0]), Rate: d(b[1]), Amount: d(b[2])})
			ft = append(ft, margin.Bracket[margin.Float]{Floor: f(b[0]), Rate: f(b[1]), Amount: f(b[2])})
		}
		gotD := margin.LiquidationPrice(d(c.qty), d(c.entry), d(c.lev), dt).Round(6)
		if !gotD.Equal(d(c.want)) {
			t.Errorf("%s: decimal %s, want %s", c.name, gotD, c.want)
		}
		gotF := float64(margin.LiquidationPrice(f(c.qty), f(c.entry), f(c.lev), ft))
		if w, _ := d(c.want).Float64(); math.Abs(gotF-w) > 5e-7 {
			t.Errorf("%s: float %v, want %s", c.name, gotF, c.want)
		}
	}
}

// TestLiquidationPriceFloatMatchesResearch: the float instantiation is
// bit for bit the expression research wrote before it moved here.
func TestLiquidationPriceFloatMatchesResearch(t *testing.T) {
	for _, entry := range []float64{1, 99.5, 100, 60000, 12345.678} {
		for _, lev := range []float64{2, 3, 10, 20, 125} {
			for _, r := range []float64{0.004, 0.005, 0.0125} {
				long := (entry*(1-1/lev) - 0/1.0) / (1 - r)
				short := (entry*(1+1/lev) + 0/1.0) / (1 + r)
				tb := []margin.Bracket[margin.Float]{{Rate: margin.Float(r)}}
				if got := float64(margin.LiquidationPrice(1, margin.Float(entry), margin.Float(lev), tb)); got != long {
					t.Errorf("long %v %vx %v: %v, want %v", entry, lev, r, got, long)
				}
				if got := float64(margin.LiquidationPrice(-1, margin.Float(entry), margin.Float(lev), tb)); got != short {
					t.Errorf("short %v %vx %v: %v, want %v", entry, lev, r, got, short)
				}
			}
		}
	}
}
