package worker

import (
	"context"

	"wicket/strategy/backtest"
)

// KindBacktest runs a backtest: backtest.Request → backtest.Response.
const KindBacktest = "backtest"

// Backtest runs a backtest in a worker.
func (p *Pool) Backtest(ctx context.Context, req backtest.Request) (backtest.Response, error) {
	return Call[backtest.Request, backtest.Response](ctx, p, KindBacktest, req)
}
