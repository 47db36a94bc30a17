package research

import (
	"context"
	"strings"
)

// mode is what a sweep, a walk-forward analysis or an optimisation runs
// over: one series (seriesMode), a series set pooled
// (seriesSetMode), or a portfolio strategy's own universe, the request
// naming no series (portfolioMode). Each entry point checks its request,
// finds its plan gate, asks modeOf which mode the series names and calls
// that mode's method; nothing else branches on the kind of series.
type mode interface {
	sweep(ctx context.Context, req SweepRequest, gate *planGate, progress func(Progress)) (SweepResult, error)
	walkForward(ctx context.Context, req WalkForwardRequest, gate *planGate, progress func(Progress)) (WalkForwardResult, error)
	optimize(ctx context.Context, req OptimizeRequest, gate *planGate, progress func(Progress)) (OptimizeResult, error)
}

// modeOf is the mode series names: none (blank) is a portfolio
// strategy's own universe, one name is one series, a list or a pattern
// is a series set. A malformed name or a pattern matching nothing is
// refused here.
func (l *Local) modeOf(series string) (mode, error) {
	if seriesless(series) {
		return portfolioMode{l}, nil
	}
	names, single, err := l.seriesSet(series)
	if err != nil {
		return nil, err
	}
	if single {
		return seriesMode{l}, nil
	}
	return seriesSetMode{l, names}, nil
}

// seriesMode runs over one series (sweep.go, walkforward.go, optimize.go).
type seriesMode struct{ l *Local }

// seriesSetMode runs over every series of a series set and pools
// the figures (seriesset.go).
type seriesSetMode struct {
	l     *Local
	names []string
}

// portfolioMode runs a portfolio strategy over the universe it declares
// (portfolio_sweep.go, portfolio_walkforward.go).
type portfolioMode struct{ l *Local }

func (m seriesSetMode) sweep(ctx context.Context, req SweepRequest, _ *planGate, progress func(Progress)) (SweepResult, error) {
	return m.l.sweepSeriesSet(ctx, req, m.names, progress)
}

func (m seriesSetMode) walkForward(ctx context.Context, req WalkForwardRequest, _ *planGate, progress func(Progress)) (WalkForwardResult, error) {
	return m.l.walkForwardSeriesSet(ctx, req, m.names, progress)
}

func (m seriesSetMode) optimize(_ context.Context, req OptimizeRequest, _ *planGate, _ func(Progress)) (OptimizeResult, error) {
	return OptimizeResult{}, errorf(KindInvalid, "optimize runs over one series, and %q names a series set; optimise on one series, or sweep the set", req.Series)
}

func (m portfolioMode) sweep(ctx context.Context, req SweepRequest, _ *planGate, progress func(Progress)) (SweepResult, error) {
	return m.l.sweepPortfolio(ctx, req, progress)
}

func (m portfolioMode) walkForward(ctx context.Context, req WalkForwardRequest, _ *planGate, progress func(Progress)) (WalkForwardResult, error) {
	return m.l.walkForwardPortfolio(ctx, req, progress)
}

// optimize refuses: the optimiser searches one series' grid. The error is
// the one a missing series gets.
func (m portfolioMode) optimize(_ context.Context, req OptimizeRequest, _ *planGate, _ func(Progress)) (OptimizeResult, error) {
	return OptimizeResult{}, checkSeries(strings.TrimSpace(req.Series))
}
