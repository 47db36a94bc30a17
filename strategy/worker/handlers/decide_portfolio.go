package handlers

import (
	"context"
	"fmt"
	"math"

	"wicket/strategy"
	"wicket/strategy/portfolio"
	"wicket/strategy/script"
	"wicket/strategy/ta"
	"wicket/strategy/worker"
)

// runDecidePortfolio is the portfolio decide handler: a portfolio
// strategy's weights at the last bar of its assets' calendar, from
// signals(universe) over the assets aligned by portfolio.Align, the
// calls a portfolio backtest makes (decidePortfolio), so a deployment
// decides exactly as the backtest of the same bars does at that bar.
func runDecidePortfolio(memo *ta.Memo) worker.Handler {
	return worker.Typed(func(ctx context.Context, req worker.PortfolioDecideRequest) (worker.PortfolioDecision, error) {
		return DecidePortfolio(ctx, req, memo)
	})
}

// DecidePortfolio serves one portfolio decide request in this process
// (the handler calls it; it runs strategy code, so it belongs in a
// worker and in tests).
func DecidePortfolio(ctx context.Context, req worker.PortfolioDecideRequest, memo *ta.Memo) (worker.PortfolioDecision, error) {
	if len(req.Series) != len(req.Assets) {
		return worker.PortfolioDecision{}, &worker.Error{Kind: worker.KindRequest, Msg: fmt.Sprintf("decide_portfolio: %d series for %d assets; name each asset", len(req.Series), len(req.Assets))}
	}
	opts, closeFS, err := options(req.StrategyRequest, memo)
	if err != nil {
		return worker.PortfolioDecision{}, err
	}
	defer closeFS()
	s, err := script.Load(ctx, script.Source{Name: req.Name, Text: req.Source}, opts)
	if err != nil {
		return worker.PortfolioDecision{}, err
	}
	out := worker.PortfolioDecision{Style: string(s.Style()), Universe: s.Universe(), Rebalance: s.Rebalance(), Warmup: s.Warmup()}
	if !s.IsPortfolio() {
		return worker.PortfolioDecision{}, &worker.Error{Kind: worker.KindRequest, Msg: req.Name + " declares no universe: it is not a portfolio strategy"}
	}
	if len(req.Assets) == 0 {
		return out, nil // described only
	}
	if s.Style() != script.StyleSignals {
		return worker.PortfolioDecision{}, &worker.Error{Kind: worker.KindRequest, Msg: req.Name + " is an on_bar portfolio strategy; a portfolio deployment runs signals(universe) strategies"}
	}
	raw := make([]strategy.Bars, len(req.Assets))
	for k, enc := range req.Assets {
		if raw[k], err = strategy.DecodeBars(enc, req.Series[k], ""); err != nil {
			return worker.PortfolioDecision{}, &worker.Error{Kind: worker.KindRequest, Msg: fmt.Sprintf("decide_portfolio: %s: %v", req.Series[k], err)}
		}
	}
	assets, err := portfolio.Align(raw)
	if err != nil {
		return worker.PortfolioDecision{}, err
	}
	weights, err := s.Weights(ctx, assets)
	if err != nil {
		return worker.PortfolioDecision{}, err
	}
	n := assets[0].Len()
	out.Time, out.Bars, out.Warmup = assets[0].Time[n-1], n, s.Warmup()
	out.Weights, out.Has = make([]float64, len(assets)), make([]bool, len(assets))
	for k := range assets {
		w := weights[k][n-1]
		if math.IsInf(w, 0) {
			return worker.PortfolioDecision{}, &worker.Error{Kind: worker.KindRequest, Msg: fmt.Sprintf("%s: the weight of %s at its last bar is %v; a weight is a finite fraction of equity, or None for none", req.Name, req.Series[k], w)}
		}
		if !math.IsNaN(w) {
			out.Weights[k], out.Has[k] = w, true
		}
	}
	return out, nil
}
