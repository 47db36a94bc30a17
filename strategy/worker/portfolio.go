package worker

import (
	"context"

	"wicket/strategy/backtest"
)

// KindPortfolio backtests a portfolio strategy, one that declares a
// universe: backtest.Request (without a series: the strategy names its
// own) → backtest.Response, whose Result is a strategy/portfolio Result.
const KindPortfolio = "portfolio"

// Portfolio runs a portfolio backtest in a worker.
func (p *Pool) Portfolio(ctx context.Context, req backtest.Request) (backtest.Response, error) {
	return Call[backtest.Request, backtest.Response](ctx, p, KindPortfolio, req)
}
