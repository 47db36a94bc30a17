package handlers

import (
	"context"

	"wicket/strategy"
	"wicket/strategy/backtest"
	"wicket/strategy/script"
)

// decide asks a loaded strategy for its decisions over bars in its own
// style (signals once, or on_bar per bar) for an engine run that trades
// from bar start (earlier bars only feed the indicators). It returns the
// decisions, the warm-up left within the traded bars, and a func to call
// once the run is over. Backtests and sweep chunks both decide through it.
func decide(ctx context.Context, s *script.Strategy, bars strategy.Bars, start int) (backtest.Decisions, int, func(), error) {
	var d backtest.Decisions
	if s.Style() == script.StyleSignals {
		sig, err := s.Signals(ctx, bars)
		if err != nil {
			return d, 0, nil, err
		}
		sig = sig.From(start)
		d.Signals = &sig
		return d, max(0, s.Warmup()-start), func() {}, nil
	}
	st, err := s.Begin(ctx, bars)
	if err != nil {
		return d, 0, nil, err
	}
	d.Stepper = st
	if start > 0 {
		d.Stepper = offsetStepper{st, start}
	}
	return d, max(0, st.Warmup()-start), st.Close, nil
}

// decideTraced is decide for a whole backtest (from bar 0) that also
// keeps what the lookahead proof compares: the signals and every series
// computed on the way, or every on_bar intent.
func decideTraced(ctx context.Context, s *script.Strategy, bars strategy.Bars) (backtest.Decisions, int, func(), func() script.Trace, error) {
	var d backtest.Decisions
	if s.Style() == script.StyleSignals {
		sig, tr, err := s.SignalsTrace(ctx, bars)
		if err != nil {
			return d, 0, nil, nil, err
		}
		d.Signals = &sig
		return d, s.Warmup(), func() {}, func() script.Trace { return tr }, nil
	}
	st, err := s.Begin(ctx, bars)
	if err != nil {
		return d, 0, nil, nil, err
	}
	st.Record()
	d.Stepper = st
	return d, st.Warmup(), st.Close, func() script.Trace { tr, _ := st.Trace(); return tr }, nil
}

// offsetStepper runs an event-driven strategy set up over all the loaded
// bars while the engine trades only from bar off: engine bar i is the
// strategy's bar i+off.
type offsetStepper struct {
	st  *script.Stepper
	off int
}

func (o offsetStepper) Step(i int, acct strategy.Account) (strategy.Intent, error) {
	return o.st.Step(i+o.off, acct)
}
