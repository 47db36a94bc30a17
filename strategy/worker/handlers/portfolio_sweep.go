package handlers

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"wicket/strategy/backtest"
	"wicket/strategy/portfolio"
	"wicket/strategy/ta"
	"wicket/strategy/worker"
)

// runPortfolioSweep is the portfolio sweep handler
// (worker.KindPortfolioSweep).
func runPortfolioSweep(memo *ta.Memo) worker.Handler {
	return worker.Typed(func(ctx context.Context, req worker.PortfolioSweepChunk) (worker.PortfolioSweepResult, error) {
		return PortfolioSweep(ctx, req, memo)
	})
}

// PortfolioSweep runs each combination of a portfolio sweep's chunk as
// a portfolio backtest (Portfolio's run, without the lookahead proof,
// which the sweep asks of its winner alone) and reports it as a trial:
// its metrics as the backtest reports them, its scores, the moments of
// its equity curve's returns on the calendar (for the deflated Sharpe
// ratio) and, when asked, those returns in blocks (for PBO). The
// universe is read and aligned once per chunk. A combination that fails
// is a trial with its error; a bad request fails the chunk.
func PortfolioSweep(ctx context.Context, req worker.PortfolioSweepChunk, memo *ta.Memo) (worker.PortfolioSweepResult, error) {
	began := time.Now()
	base := req.Request
	if base.HistoryPath == "" {
		return worker.PortfolioSweepResult{}, &worker.Error{Kind: worker.KindRequest, Msg: "portfolio sweep chunk without a history store path"}
	}
	if base.Series != "" {
		return worker.PortfolioSweepResult{}, &worker.Error{Kind: worker.KindRequest, Msg: "a portfolio strategy names its own universe; leave the series (" + base.Series + ") out"}
	}
	cfg, err := base.Config(backtest.DefaultConfig())
	if err != nil {
		return worker.PortfolioSweepResult{}, err
	}
	capital := cfg.Capital.InexactFloat64() // for the return statistics only
	var tradeFrom time.Time
	if req.TradeFrom != "" {
		if tradeFrom, err = time.Parse(time.RFC3339, req.TradeFrom); err != nil {
			return worker.PortfolioSweepResult{}, &worker.Error{Kind: worker.KindRequest, Msg: fmt.Sprintf("trade_from %q is not an RFC3339 time", req.TradeFrom)}
		}
	}
	universes := map[string]universe{}
	resp := worker.PortfolioSweepResult{SweepChunkResult: worker.SweepChunkResult{Trials: make([]worker.Trial, len(req.Combos))}}
	work := time.Now()
	for i, combo := range req.Combos {
		if err := ctx.Err(); err != nil {
			return worker.PortfolioSweepResult{}, err
		}
		r := base
		r.Params = maps.Clone(base.Params)
		if r.Params == nil {
			r.Params = map[string]any{}
		}
		maps.Copy(r.Params, combo)
		var res *portfolio.Result
		var bad error
		resp.Trials[i], res, bad = portfolioTrial(ctx, r, cfg, capital, memo, universes, req, tradeFrom)
		if bad != nil {
			return worker.PortfolioSweepResult{}, bad
		}
		if res != nil && resp.Series == "" {
			resp.Series = res.Series
			if n := len(res.Curve.Time); n > 0 {
				resp.Calendar = worker.BarsSeen{Count: n, First: res.Curve.Time[0], Last: res.Curve.Time[n-1]}
			}
			if req.Times {
				resp.Times = res.Curve.Time
			}
		}
		if resp.Trials[i].Values == nil {
			resp.Trials[i].Values = combo
		}
	}
	resp.Work = time.Since(work).Seconds()
	resp.Seconds = time.Since(began).Seconds()
	return resp, nil
}

// portfolioTrial runs one combination; the run is nil when it failed. A
// bad request (a strategy that declares no universe: every combination
// would fail alike) is returned as bad, to fail the chunk.
func portfolioTrial(ctx context.Context, req backtest.Request, cfg backtest.Config, capital float64, memo *ta.Memo, universes map[string]universe, chunk worker.PortfolioSweepChunk, tradeFrom time.Time) (_ worker.Trial, _ *portfolio.Result, bad error) {
	res, s, err := portfolioRun(ctx, req, cfg, memo, universes, false, tradeFrom)
	var we *worker.Error
	if errors.As(err, &we) && we.Kind == worker.KindRequest {
		return worker.Trial{}, nil, err
	}
	if err != nil {
		return worker.Trial{Error: err.Error()}, nil, nil
	}
	defer s.Close()
	metrics, err := res.Metrics.MarshalJSON()
	if err != nil {
		return worker.Trial{Error: err.Error()}, nil, nil
	}
	m := res.Metrics
	returns := backtest.Returns(res.Curve.Equity, capital)
	t := worker.Trial{
		Values:  s.Values(),
		Metrics: metrics,
		Scores: worker.Scores{
			Sharpe: worker.Num(m.Sharpe), CAGR: worker.Num(m.CAGR), Calmar: worker.Num(m.Calmar), ProfitFactor: worker.Num(m.ProfitFactor),
			TotalReturn: worker.Num(m.TotalReturn), MaxDrawdown: worker.Num(m.MaxDrawdown),
			Sortino: worker.Num(m.Sortino), WinRate: worker.Num(m.WinRate), Exposure: worker.Num(m.Exposure),
		},
		Stats:  worker.StatsOf(backtest.MomentsOf(returns)),
		Trades: m.Trades,
		Warmup: s.Warmup(),
	}
	if chunk.Blocks > 0 {
		t.Blocks = backtest.BlockStats(returns, chunk.Blocks)
	}
	if chunk.Returns {
		t.Returns = returns
	}
	return t, res, nil
}
