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
	n := assets[0].Len()
	var last []float64
	if s.Style() == script.StyleOnBar {
		if last, err = stepPortfolio(ctx, s, assets, req); err != nil {
			return worker.PortfolioDecision{}, err
		}
		out.Warmup = 0
	} else {
		weights, err := s.Weights(ctx, assets)
		if err != nil {
			return worker.PortfolioDecision{}, err
		}
		last = make([]float64, len(assets))
		for k := range assets {
			last[k] = weights[k][n-1]
		}
	}
	out.Time, out.Bars = assets[0].Time[n-1], n
	if s.Style() != script.StyleOnBar {
		out.Warmup = s.Warmup()
	}
	out.Weights, out.Has = make([]float64, len(assets)), make([]bool, len(assets))
	for k := range assets {
		w := last[k]
		if math.IsInf(w, 0) {
			return worker.PortfolioDecision{}, &worker.Error{Kind: worker.KindRequest, Msg: fmt.Sprintf("%s: the weight of %s at its last bar is %v; a weight is a finite fraction of equity, or None for none", req.Name, req.Series[k], w)}
		}
		if !math.IsNaN(w) {
			out.Weights[k], out.Has[k] = w, true
		}
	}
	return out, nil
}

// stepPortfolio steps an on_bar portfolio strategy through every
// calendar bar of assets with the account req gives for it and the
// assets' last closes as marks (the engine's: an asset's mark is its last
// close, 0 before its first bar), as portfolio.RunStepper steps it, and
// returns its targets at the last bar (NaN: none).
func stepPortfolio(ctx context.Context, s *script.Strategy, assets []strategy.Bars, req worker.PortfolioDecideRequest) ([]float64, error) {
	st, err := s.BeginPortfolio(ctx, assets)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	m, n := len(assets), assets[0].Len()
	marks := make([]float64, m)
	cur := worker.PortfolioAccount{Cash: req.Capital, Equity: req.Capital, Positions: make([]float64, m)}
	k := 0
	var w []float64
	for i := range n {
		for a := range assets {
			if c, o := assets[a].Close[i], assets[a].Open[i]; !math.IsNaN(c) && !math.IsNaN(o) {
				marks[a] = c
			}
		}
		for k < len(req.Accounts) && req.Accounts[k].Time <= assets[0].Time[i] {
			cur = req.Accounts[k]
			k++
		}
		if len(cur.Positions) != m {
			return nil, &worker.Error{Kind: worker.KindRequest, Msg: fmt.Sprintf("decide_portfolio: an account of %d positions for %d assets", len(cur.Positions), m)}
		}
		acct := script.PortfolioAccount{Cash: cur.Cash, Equity: cur.Equity, Positions: append([]float64(nil), cur.Positions...), Marks: append([]float64(nil), marks...)}
		if w, err = st.Step(i, acct); err != nil {
			return nil, err
		}
	}
	return w, nil
}
