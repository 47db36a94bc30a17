package research

import "context"

// Sweep evaluates every combination of req.Grid and ranks them; progress,
// when set, is called as combinations finish. A cancelled sweep returns
// what finished with Partial set.
func (l *Local) Sweep(ctx context.Context, req SweepRequest, progress func(Progress)) (SweepResult, error) {
	return SweepResult{}, errorf(KindUnavailable, "sweeps are being built")
}

// WalkForward runs a walk-forward analysis; progress, when set, is called
// as work finishes. A cancelled analysis returns the windows that finished
// with Partial set.
func (l *Local) WalkForward(ctx context.Context, req WalkForwardRequest, progress func(Progress)) (WalkForwardResult, error) {
	return WalkForwardResult{}, errorf(KindUnavailable, "walk-forward analysis is being built")
}
