package handlers

import (
	"context"
	"fmt"

	"wicket/strategy"
	"wicket/strategy/backtest"
	"wicket/strategy/script"
	"wicket/strategy/scriptapi"
	"wicket/strategy/ta"
	"wicket/strategy/worker"
)

// runStartPoint is the start-point handler: inside the worker it loads
// the strategy with the request's overrides, reads the bars (from the
// worker's bar cache) and runs the check.
func runStartPoint(memo *ta.Memo, cache *barCache) worker.Handler {
	return worker.Typed(func(ctx context.Context, req worker.StartPointRequest) (scriptapi.StartPoint, error) {
		bars := script.SmokeBars(script.SmokeLength)
		if r := req.Bars; r != nil {
			cfg, err := backtest.Request{From: r.From, To: r.To}.Config(backtest.DefaultConfig())
			if err != nil {
				return scriptapi.StartPoint{}, err
			}
			e, err := cache.load(r.HistoryPath, r.Series, cfg.From, cfg.To, "")
			if err != nil {
				return scriptapi.StartPoint{}, err
			}
			bars = e.bars
		}
		return startPoint(ctx, req, memo, bars)
	})
}

func startPoint(ctx context.Context, req worker.StartPointRequest, memo *ta.Memo, bars strategy.Bars) (scriptapi.StartPoint, error) {
	if req.Warmup != nil && *req.Warmup < 0 {
		return scriptapi.StartPoint{}, &worker.Error{Kind: worker.KindRequest, Msg: fmt.Sprintf("warm-up %d must not be negative", *req.Warmup)}
	}
	opts, closeFS, err := options(req.StrategyRequest, memo)
	if err != nil {
		return scriptapi.StartPoint{}, err
	}
	defer closeFS()
	s, err := script.Load(ctx, script.Source{Name: req.Name, Text: req.Source}, opts)
	if err != nil {
		return scriptapi.StartPoint{}, err
	}
	warmup := -1
	if req.Warmup != nil {
		warmup = *req.Warmup
	}
	if warmup < 0 {
		// The strategy's own warm-up comes from a run over the bars.
		if warmup, err = ownWarmup(ctx, s, bars); err != nil {
			return scriptapi.StartPoint{}, err
		}
	}
	return s.CheckStartPoint(ctx, bars, warmup)
}

// ownWarmup runs s once over bars for the warm-up it declares.
func ownWarmup(ctx context.Context, s *script.Strategy, bars strategy.Bars) (int, error) {
	if s.Style() == script.StyleSignals {
		if _, err := s.Signals(ctx, bars); err != nil {
			return 0, err
		}
		return s.Warmup(), nil
	}
	st, err := s.Begin(ctx, bars)
	if err != nil {
		return 0, err
	}
	defer st.Close()
	return st.Warmup(), nil
}
