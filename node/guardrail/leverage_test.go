package guardrail_test

import (
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"wicket/internal/margin"
	"wicket/internal/testkit"
	"wicket/node/command"
	"wicket/node/guardrail"
)

func TestLiquidationPrice(t *testing.T) {
	for _, c := range []struct {
		qty, mmr, cum string
		lev           int
		want          string
	}{
		{"0.1", "0.005", "0", 10, "54271.35678392"}, // (60000 − 6000) / 0.995
		{"-0.1", "0.005", "0", 3, "79601.99004975"}, // (60000 + 20000) / 1.005
		{"-1", "0.005", "50", 10, "65721.39303483"}, // (60000 + 6000 + 50) / 1.005: a bracket's amount moves it away
		{"1", "0.005", "50", 10, "54221.10552764"},  // (60000 − 6000 − 50) / 0.995
		{"0", "0.005", "0", 3, "0"},
	} {
		one := []margin.Bracket[decimal.Decimal]{{Rate: testkit.D(c.mmr), Amount: testkit.D(c.cum)}}
		if got := guardrail.LiquidationPrice(testkit.D(c.qty), testkit.D("60000"), c.lev, one); !got.Equal(testkit.D(c.want)) {
			t.Errorf("%s at %dx: %s, want %s", c.qty, c.lev, got, c.want)
		}
	}
}

func TestCheckLeverage(t *testing.T) {
	d := testkit.D
	terms := guardrail.Leverage{Leverage: 10, MaxLeverage: 20, Brackets: []margin.Bracket[decimal.Decimal]{{Rate: d("0.005")}}, MinDistancePct: d("10")}
	failed := func(cs []guardrail.Check) []guardrail.Check {
		var out []guardrail.Check
		for _, c := range cs {
			if !c.OK {
				out = append(out, c)
			}
		}
		return out
	}
	// Opening 10x long at 60000: liquidation at 54271.36, 9.55 % away: refused naming both prices.
	f := failed(guardrail.CheckLeverage(command.Buy, d("0.1"), d("60000"), decimal.Zero, decimal.Zero, d("60000"), terms))
	if len(f) != 1 || f[0].Name != "liquidation_distance" || !strings.Contains(f[0].Detail, "54271.36") || !strings.Contains(f[0].Detail, "60000") {
		t.Errorf("10x long opening: %+v", f)
	}
	// At 3x it liquidates at 40201.01, far enough.
	terms3 := terms
	terms3.Leverage = 3
	if f := failed(guardrail.CheckLeverage(command.Buy, d("0.1"), d("60000"), decimal.Zero, decimal.Zero, d("60000"), terms3)); len(f) != 0 {
		t.Errorf("3x long opening: %+v", f)
	}
	// Closing part of a 10x long only reduces: it passes.
	if f := failed(guardrail.CheckLeverage(command.Sell, d("0.05"), d("60000"), d("0.1"), d("60000"), d("60000"), terms)); len(f) != 0 {
		t.Errorf("a reduce: %+v", f)
	}
	// Leverage above the cap is refused.
	over := terms3
	over.Leverage, over.MaxLeverage = 25, 20
	if f := failed(guardrail.CheckLeverage(command.Buy, d("0.001"), d("60000"), decimal.Zero, decimal.Zero, d("60000"), over)); len(f) == 0 || f[0].Name != "max_leverage" {
		t.Errorf("25x with a 20x cap: %+v", f)
	}
}

// TestLiquidationPriceBracketAtLiquidation: the guardrail picks the
// bracket the notional at the liquidation price falls in, as research
// does (internal/margin), not the one at the mark. A 10x long of 0.85 at
// 60,000 is 51,000 of notional at the mark (second tier: 0.5 %, cum 50)
// but liquidates near 54,000 × 0.85 = 45,900 (first tier: 0.4 %):
// 54,000 / 0.996 = 54216.86746988, where the mark's tier would give
// (54,000 − 50 / 0.85) / 0.995 = 54212.23647…
func TestLiquidationPriceBracketAtLiquidation(t *testing.T) {
	d := testkit.D
	table := []margin.Bracket[decimal.Decimal]{{Rate: d("0.004")}, {Floor: d("50000"), Rate: d("0.005"), Amount: d("50")}}
	if got := guardrail.LiquidationPrice(d("0.85"), d("60000"), 10, table); !got.Equal(d("54216.86746988")) {
		t.Errorf("liquidation price %s, want 54216.86746988", got)
	}
}
