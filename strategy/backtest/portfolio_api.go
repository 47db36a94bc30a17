package backtest

// Exported for strategy/portfolio, which runs several assets on one cash
// account and reports the same figures as a single-series run.

// FillTradeMetrics sets the trade fields of m (trades, win rate, profit
// factor, expectancy) from the net PnLs of closed round trips, in the
// order they closed, as a run tallies its own.
func FillTradeMetrics(m *Metrics, pnls []float64) {
	var a tradeAcc
	for _, p := range pnls {
		a.add(p)
	}
	a.fill(m)
}
