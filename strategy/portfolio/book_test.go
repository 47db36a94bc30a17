package portfolio

import (
	"context"
	"math"
	"testing"

	"wicket/strategy"
	"wicket/strategy/backtest"
)

// TestFundingInGapOneRule: a settlement inside a gap of an asset's bars
// is charged as a single-series run charges it, before the gap, at the
// open of the asset's last bar before it (issue 45 item 6: the portfolio
// charged it after the gap, at the next bar's open). B holds 100 units
// from day 1's open at 50; it has no bars on days 2 and 3 (A has), and
// opens day 4 at 80; funding +0.1% at day 2, 12:00: 100 × 50 × 0.001 = 5
// (after the gap it would have been 8).
func TestFundingInGapOneRule(t *testing.T) {
	a := series("A-USD@1d", 100, 100, 100, 100, 100, 100)
	full := series("B-USD@1d", 50, 50, 50, 80, 100, 100)
	keep := []int{0, 1, 4, 5}
	b := strategy.Bars{Series: full.Series}
	for _, i := range keep {
		b.Time, b.Open, b.High = append(b.Time, full.Time[i]), append(b.Open, full.Open[i]), append(b.High, full.High[i])
		b.Low, b.Close, b.Volume = append(b.Low, full.Low[i]), append(b.Close, full.Close[i]), append(b.Volume, full.Volume[i])
	}
	if b.Open[2] != 80 {
		t.Fatalf("fixture: B opens %v after the gap, want 80", b.Open[2])
	}
	rates := []backtest.FundingRate{{Time: a.Time[2] + 12*3600, Rate: 0.001}}
	cfg := frictionless()
	cfg.Costs = backtest.Costs{Funding: true, FundingRates: rates}

	single, err := backtest.Run(context.Background(), b, cfg, backtest.Decisions{Targets: []float64{0.5, math.NaN(), math.NaN(), math.NaN()}})
	if err != nil {
		t.Fatal(err)
	}
	al, err := Align([]strategy.Bars{a, b})
	if err != nil {
		t.Fatal(err)
	}
	reb, _ := ParseRebalance("weekly")
	n := al[0].Len()
	cfg.Costs.FundingRates = nil
	res, err := RunFrom(context.Background(), al, [][]float64{constant(n, 0), constant(n, 0.5)}, reb, cfg, Options{Funding: [][]backtest.FundingRate{nil, rates}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Metrics.FundingPaid, single.Metrics.FundingPaid; got != want || want != 5 {
		t.Errorf("funding paid: portfolio %v, single series %v; want 5 in both (charged before the gap)", got, want)
	}
}
