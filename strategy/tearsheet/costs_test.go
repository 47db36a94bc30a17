package tearsheet

import (
	"context"
	"strings"
	"testing"

	"wicket/strategy/backtest"
)

// TestSheetShowsEveryCost (issue 44 item 19): a run that charged funding
// and borrow shows both on its tear sheet, beside fees and slippage.
func TestSheetShowsEveryCost(t *testing.T) {
	b := bars(400, "1h", 5)
	cfg := backtest.DefaultConfig()
	var rates []backtest.FundingRate
	for i := 0; i < b.Len(); i += 8 {
		rates = append(rates, backtest.FundingRate{Time: b.Time[i], Rate: 0.0001})
	}
	cfg.Costs = backtest.Costs{Funding: true, FundingRates: rates, BorrowRate: 0.05}
	r, err := backtest.Run(context.Background(), b, cfg, backtest.Decisions{Targets: trend(b.Close)})
	if err != nil {
		t.Fatal(err)
	}
	page := string(render(t, r))
	for _, want := range []string{"fees paid", "slippage cost", "funding paid", backtest.Money(r.Metrics.FundingPaid), "borrow paid"} {
		if !strings.Contains(page, want) {
			t.Errorf("the tear sheet lacks %q", want)
		}
	}
}
