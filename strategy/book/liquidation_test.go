package book

import (
	"math"
	"testing"
)

// TestLiquidationPriceCurrentNotional pins the venue's rule: maintenance
// margin on the notional at the liquidation price, not at entry.
//
// A 10x short of 1 unit entered at 100, maintenance rate 0.5 %, no
// deduction: its margin is 100 / 10 = 10, so at price P its equity is
// 10 − (P − 100) and its maintenance margin 0.005 × P. Equal when
// 110 − P = 0.005 P, P = 110 / 1.005 = 109.452736318… — 1.094527 × entry,
// where charging the margin on the entry notional gives 100 × (1 + 0.1 −
// 0.005) = 109.5. The long: 10 + (P − 100) = 0.005 P, P = 90 / 0.995 =
// 90.452261306… (entry rule: 90.5).
func TestLiquidationPriceCurrentNotional(t *testing.T) {
	for _, c := range []struct {
		qty  float64
		want float64
	}{
		{-1, 110 / 1.005},
		{1, 90 / 0.995},
		{-3, 110 / 1.005}, // the size does not move it with no deduction
		{0, 0},
	} {
		got := LiquidationPrice(c.qty, 100, 10, SingleBracket(0.005))
		if math.Abs(got-c.want) > 1e-9 {
			t.Errorf("qty %v: %v, want %v", c.qty, got, c.want)
		}
	}
	if got := LiquidationPrice(-1, 100, 10, SingleBracket(0.005)) / 100; math.Round(got*1e6)/1e6 != 1.094527 {
		t.Errorf("a 10x short liquidates at %v × entry, want 1.094527", got)
	}
}

// TestLiquidationPriceBrackets: the bracket is the one the notional at
// the liquidation price falls in, and its deduction keeps the margin
// continuous. Table: 0.4 % below 50,000 of notional, 0.5 % (cum
// 50,000 × 0.001 = 50) from 50,000. A 10x long of 1 at 60,000 liquidates
// near 54,000, a notional of 54,000 in the second tier:
// P = (60,000 × 0.9 − 50) / 0.995 = 53,950 / 0.995 = 54,221.105527…
// The same long of 0.5 at 60,000 (notional ~27,000, first tier):
// P = 54,000 / 0.996 = 54,216.867469… — the node's figure for a 0.1
// long at 10x with Binance's first BTCUSDT bracket (54216.87).
// A short of 1 at 40,000 at 10x: 44,000 / 1.004 = 43,824.70…, first
// tier; at 60,000: (66,000 + 50) / 1.005 = 65,721.39…, second tier.
func TestLiquidationPriceBrackets(t *testing.T) {
	table := []Bracket{{Floor: 0, Rate: 0.004}, {Floor: 50000, Rate: 0.005, Amount: 50}}
	for _, c := range []struct {
		qty, entry, want float64
	}{
		{1, 60000, 53950 / 0.995},
		{0.5, 60000, 54000 / 0.996},
		{-1, 40000, 44000 / 1.004},
		{-1, 60000, (66000 + 50) / 1.005},
	} {
		got := LiquidationPrice(c.qty, c.entry, 10, table)
		if math.Abs(got-c.want) > 1e-6 {
			t.Errorf("qty %v at %v: %v, want %v", c.qty, c.entry, got, c.want)
		}
	}
}
