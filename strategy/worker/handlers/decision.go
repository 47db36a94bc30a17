package handlers

import (
	"context"
	"fmt"
	"math"

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
			return decideOnBar(ctx, s, bars, req)
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

// decideOnBar steps an on_bar strategy through every bar with the account
// it had at that bar's close (req.Accounts), as the backtest's engine
// steps it with its own, and returns its intent at the last bar.
func decideOnBar(ctx context.Context, s *script.Strategy, bars strategy.Bars, req worker.DecideRequest) (worker.Decision, error) {
	n := bars.Len()
	if len(req.Accounts) != 0 && len(req.Accounts) != n {
		return worker.Decision{}, &worker.Error{Kind: worker.KindRequest, Msg: fmt.Sprintf("decide: %d accounts for %d bars; give one per bar", len(req.Accounts), n)}
	}
	st, err := s.Begin(ctx, bars)
	if err != nil {
		return worker.Decision{}, err
	}
	defer st.Close()
	var in strategy.Intent
	for i := range n {
		var a strategy.Account
		if len(req.Accounts) == n {
			a = strategy.Account{Position: req.Accounts[i].Position, Cash: req.Accounts[i].Cash, Equity: req.Accounts[i].Equity}
		}
		if in, err = st.Step(i, a); err != nil {
			return worker.Decision{}, err
		}
	}
	out := worker.Decision{Style: s.Style(), Time: bars.Time[n-1], Warmup: st.Warmup(), Bars: n,
		StopLoss: in.Exits.StopLoss, TakeProfit: in.Exits.TakeProfit, TrailingStop: in.Exits.TrailingStop}
	switch in.Kind {
	case strategy.Target:
		out.HasTarget, out.Target = true, in.Value
	case strategy.Qty:
		out.HasQty, out.Qty = true, in.Value
	}
	if in.Kind != strategy.None && (math.IsNaN(in.Value) || math.IsInf(in.Value, 0)) {
		return worker.Decision{}, &worker.Error{Kind: worker.KindRequest, Msg: fmt.Sprintf("%s asked for %v at its last bar; an intent needs a finite value", req.Name, in.Value)}
	}
	return out, nil
}
