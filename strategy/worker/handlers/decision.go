package handlers

import (
	"context"
	"fmt"

	"wicket/strategy"
	"wicket/strategy/script"
	"wicket/strategy/ta"
	"wicket/strategy/worker"
)

// runDecide is the decide handler: the strategy's decision at the last of
// the request's bars, made by decide, the one decision function backtests
// and sweep chunks use, so a deployment decides exactly as a backtest of
// the same bars does at that bar, with the protective exits its signals
// attach.
func runDecide(memo *ta.Memo) worker.Handler {
	return worker.Typed(func(ctx context.Context, req worker.DecideRequest) (worker.Decision, error) {
		bars, err := strategy.DecodeBars(req.Bars, req.Series, "")
		if err != nil {
			return worker.Decision{}, &worker.Error{Kind: worker.KindRequest, Msg: "decide: " + err.Error()}
		}
		if bars.Len() == 0 {
			return worker.Decision{}, &worker.Error{Kind: worker.KindRequest, Msg: "decide: no bars to decide at"}
		}
		opts, closeFS, err := options(req.StrategyRequest, memo)
		if err != nil {
			return worker.Decision{}, err
		}
		defer closeFS()
		s, err := script.Load(ctx, script.Source{Name: req.Name, Text: req.Source}, opts)
		if err != nil {
			return worker.Decision{}, err
		}
		if s.Style() != script.StyleSignals {
			return worker.Decision{}, &worker.Error{Kind: worker.KindRequest, Msg: fmt.Sprintf(
				"%s decides in on_bar, and a deployment runs signals(bars) strategies only for now: deploy a strategy with a signals entry point", req.Name)}
		}
		d, warmup, done, err := decide(ctx, s, bars, 0)
		if err != nil {
			return worker.Decision{}, err
		}
		defer done()
		last := bars.Len() - 1
		e := d.Signals.Exits
		out := worker.Decision{Style: s.Style(), Time: bars.Time[last], Warmup: warmup, Bars: bars.Len(),
			StopLoss: e.StopLoss, TakeProfit: e.TakeProfit, TrailingStop: e.TrailingStop}
		if t := d.Signals.TargetAt(last); t == t { // NaN: no change
			out.HasTarget, out.Target = true, t
		}
		return out, nil
	})
}
