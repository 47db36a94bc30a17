package handlers

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"wicket/strategy"
	"wicket/strategy/backtest"
	"wicket/strategy/history"
	"wicket/strategy/portfolio"
	"wicket/strategy/script"
	"wicket/strategy/ta"
	"wicket/strategy/tearsheet"
	"wicket/strategy/worker"
)

// runPortfolio is the portfolio handler (worker.KindPortfolio).
func runPortfolio(memo *ta.Memo) worker.Handler {
	return worker.Typed(func(ctx context.Context, req backtest.Request) (backtest.Response, error) {
		return Portfolio(ctx, req, memo)
	})
}

// Portfolio serves one portfolio backtest request in this process: it
// loads the strategy, resolves its universe against the history store
// (a pattern matches the stored series), reads every asset's bars in the
// range, aligns them on one calendar, asks the strategy for its weights,
// runs the portfolio engine and proves the weights free of lookahead. It
// runs strategy code, so it belongs in a worker (the handler calls it)
// and in tests.
func Portfolio(ctx context.Context, req backtest.Request, memo *ta.Memo) (backtest.Response, error) {
	cfg, err := req.Config(backtest.DefaultConfig())
	if err != nil {
		return backtest.Response{}, err
	}
	if req.HistoryPath == "" {
		return backtest.Response{}, &worker.Error{Kind: worker.KindRequest, Msg: "portfolio request without a history store path"}
	}
	if req.Series != "" {
		return backtest.Response{}, &worker.Error{Kind: worker.KindRequest, Msg: fmt.Sprintf("a portfolio strategy names its own universe; leave the series (%q) out", req.Series)}
	}
	if req.Robustness != nil || req.Plot || req.Allowance != nil || req.LookaheadOnly {
		return backtest.Response{}, &worker.Error{Kind: worker.KindRequest, Msg: "robustness, plot, allowance and lookahead_only are for single-series backtests; a portfolio backtest reports its metrics, assets, trades and curve, and its tear sheet (report)"}
	}
	res, s, err := portfolioRun(ctx, req, cfg, memo, nil, true, time.Time{})
	if err != nil {
		return backtest.Response{}, err
	}
	defer s.Close()
	resp, err := portfolio.Report(res)
	if err != nil {
		return backtest.Response{}, err
	}
	if req.Report {
		if resp.HTML, err = tearsheet.RenderPortfolio(res, req.Name); err != nil {
			return backtest.Response{}, err
		}
	}
	resp.Output = s.Output()
	return resp, nil
}

// universe is a resolved universe: its aligned bars and each asset's
// funding settlements (nil when none are charged).
type universe struct {
	assets  []strategy.Bars
	funding [][]backtest.FundingRate
}

// portfolioRun loads the strategy with req's params, resolves and aligns
// its universe and reads its funding (from universes when it holds the
// universe's series, which a sweep's chunk shares between its
// combinations) and runs it, trading from tradeFrom (zero: the first
// bar); prove adds the lookahead proof. The caller closes the strategy.
func portfolioRun(ctx context.Context, req backtest.Request, cfg backtest.Config, memo *ta.Memo, universes map[string]universe, prove bool, tradeFrom time.Time) (*portfolio.Result, *loadedStrategy, error) {
	sreq := worker.StrategyRequest{Name: req.Name, Source: req.Source, IndicatorsDir: req.IndicatorsDir, Overrides: req.Params}
	opts, closeFS, err := options(sreq, memo)
	if err != nil {
		return nil, nil, err
	}
	opts.ProofSeed = req.ProofSeed
	ls := &loadedStrategy{close: closeFS}
	fail := func(err error) (*portfolio.Result, *loadedStrategy, error) {
		ls.Close()
		return nil, nil, err
	}
	if cfg.Costs.Leverage != 0 {
		return fail(&worker.Error{Kind: worker.KindRequest, Msg: "leverage (isolated margin) is charged in a backtest over one series: a portfolio is one cash account sized by weights; it takes fee, slippage, funding, borrow and the volume cap: leave leverage out"})
	}
	s, err := script.Load(ctx, script.Source{Name: req.Name, Text: req.Source}, opts)
	if err != nil {
		return fail(err)
	}
	ls.Strategy = s
	if !s.IsPortfolio() {
		return fail(&worker.Error{Kind: worker.KindRequest, Msg: req.Name + " declares no universe: run it over one series (give a series)"})
	}
	reb, err := portfolio.ParseRebalance(s.Rebalance())
	if err != nil {
		return fail(err)
	}
	cfg.Params = s.Values()
	key := strings.Join(s.Universe(), ",")
	u, ok := universes[key]
	if !ok {
		raw, err := loadUniverse(req.HistoryPath, s.Universe(), cfg)
		if err != nil {
			return fail(err)
		}
		if u.assets, err = portfolio.Align(raw); err != nil {
			return fail(err)
		}
		if u.funding, err = universeFunding(req.HistoryPath, req.CostOptions, u.assets); err != nil {
			return fail(err)
		}
		if universes != nil {
			universes[key] = u
		}
	}
	assets := u.assets
	cfg.Costs.Funding = u.funding != nil
	// The per-bar record is kept for a backtest's tear sheet alone (a
	// sweep's trial, unproved, never draws one and pays nothing).
	record := prove && req.Report
	res, trace, err := decidePortfolio(ctx, s, assets, reb, cfg, portfolio.Options{TradeFrom: tradeFrom, Funding: u.funding, RecordHoldings: record})
	if err != nil {
		return fail(err)
	}
	if prove {
		if res.LookaheadCheck, err = s.CheckPortfolioLookahead(ctx, assets, trace); err != nil {
			return fail(err)
		}
	}
	return res, ls, nil
}

// loadedStrategy is a loaded portfolio strategy and what its options
// opened, released together.
type loadedStrategy struct {
	*script.Strategy
	close func()
}

// Close releases what the strategy's options opened.
func (l *loadedStrategy) Close() { l.close() }

// decidePortfolio runs the strategy in its own style (signals(universe)
// once, or on_bar per bar) through the engine, and returns the run and
// its trace for the lookahead proof.
func decidePortfolio(ctx context.Context, s *script.Strategy, assets []strategy.Bars, reb portfolio.Rebalance, cfg backtest.Config, opts portfolio.Options) (*portfolio.Result, script.PortfolioTrace, error) {
	if s.Style() == script.StyleOnBar {
		st, err := s.BeginPortfolio(ctx, assets)
		if err != nil {
			return nil, script.PortfolioTrace{}, err
		}
		defer st.Close()
		st.Record()
		cfg.Warmup = st.Warmup()
		res, err := portfolio.RunStepperFrom(ctx, assets, st, reb, cfg, opts)
		if err != nil {
			return nil, script.PortfolioTrace{}, err
		}
		tr, ok := st.Trace()
		if !ok {
			return nil, script.PortfolioTrace{}, fmt.Errorf("portfolio: the run did not step every bar in order")
		}
		return res, tr, nil
	}
	weights, tr, err := s.WeightsTrace(ctx, assets)
	if err != nil {
		return nil, script.PortfolioTrace{}, err
	}
	cfg.Warmup = s.Warmup()
	res, err := portfolio.RunFrom(ctx, assets, weights, reb, cfg, opts)
	return res, tr, err
}

// universeFunding reads each asset's funding settlements as o asks
// (fundingRates, per asset: "on" requires every asset's); nil when no
// asset has any to charge.
func universeFunding(historyPath string, o backtest.CostOptions, assets []strategy.Bars) ([][]backtest.FundingRate, error) {
	var out [][]backtest.FundingRate
	for a, b := range assets {
		rates, ok, err := fundingRates(fundingSource{path: historyPath}, b.Series, o, b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.Series, err)
		}
		if ok {
			if out == nil {
				out = make([][]backtest.FundingRate, len(assets))
			}
			out[a] = rates
		}
	}
	return out, nil
}

// loadUniverse resolves a declared universe against the store and reads
// each series over the range.
func loadUniverse(historyPath string, universe []string, cfg backtest.Config) ([]strategy.Bars, error) {
	store, err := history.OpenReadOnly(historyPath)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	var names []string
	var stored []history.SeriesInfo
	for _, e := range universe {
		if !script.UniversePattern(e) {
			if _, _, err := history.CheckSeries(e); err != nil {
				return nil, err
			}
			if !slices.Contains(names, e) {
				names = append(names, e)
			}
			continue
		}
		if stored == nil {
			if stored, err = store.List(); err != nil {
				return nil, err
			}
		}
		matched := 0
		for _, info := range stored {
			if ok, _ := path.Match(e, info.Name); ok {
				matched++
				if !slices.Contains(names, info.Name) {
					names = append(names, info.Name)
				}
			}
		}
		if matched == 0 {
			return nil, &worker.Error{Kind: worker.KindRequest, Msg: fmt.Sprintf("the universe's pattern %q matches no stored series; see `wicket data list`, or fetch some (`wicket data fetch`)", e)}
		}
	}
	if len(names) > script.MaxUniverse {
		return nil, &worker.Error{Kind: worker.KindRequest, Msg: fmt.Sprintf("the universe resolves to %d series (%s, ...); a portfolio holds at most %d: narrow the pattern", len(names), strings.Join(names[:5], ", "), script.MaxUniverse)}
	}
	out := make([]strategy.Bars, 0, len(names))
	for _, n := range names {
		b, err := store.Load(n, cfg.From, cfg.To)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}
