package backtest_test

import (
	"context"
	"fmt"
	"math"
	"time"

	"wicket/strategy"
	"wicket/strategy/backtest"
)

// A vectorised strategy hands the engine one target exposure per bar: go
// fully long at the first bar's close, flat at the third's. Each decision
// fills at the next bar's open, here without costs.
func ExampleRun() {
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	bars := strategy.Bars{
		Series: "DEMO@1d",
		Time:   []int64{start, start + 86400, start + 2*86400, start + 3*86400},
		Open:   []float64{100, 100, 110, 120},
		High:   []float64{100, 110, 120, 120},
		Low:    []float64{100, 100, 110, 120},
		Close:  []float64{100, 110, 120, 120},
		Volume: []float64{1, 1, 1, 1},
	}
	cfg := backtest.DefaultConfig()
	cfg.FeeBps, cfg.SlippageBps = 0, 0
	nan := math.NaN()
	r, err := backtest.Run(context.Background(), bars, cfg, backtest.Decisions{Targets: []float64{1, nan, 0, nan}})
	if err != nil {
		fmt.Println(err)
		return
	}
	t := r.Trades[0]
	fmt.Printf("%s %v @ %v -> %v, pnl %v\n", t.Side, t.Quantity, t.EntryPrice, t.ExitPrice, t.PnL)
	fmt.Printf("total return %.2f, exposure %.2f\n", r.Metrics.TotalReturn, r.Metrics.Exposure)
	// Output:
	// long 100 @ 100 -> 120, pnl 2000
	// total return 0.20, exposure 0.50
}
