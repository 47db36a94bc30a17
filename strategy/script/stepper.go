package script

import (
	"context"
	"fmt"
	"wicket/strategy"

	"go.starlark.net/starlark"
)

// Stepper runs an on_bar strategy one bar at a time. Call Close when done:
// it stops the run's wall-clock timer.
type Stepper struct {
	s      *Strategy
	r      *run
	th     *starlark.Thread
	ctx    *Ctx
	args   starlark.Tuple
	warmup int
	stop   func()
	err    error

	rec       *Trace // see Record
	recBroken bool
	// The bars before which Record snapshots the state for the chained
	// proof (chain.go), the next of them, and where setup's series are in
	// the run's built.
	snapAt   []int
	snapNext int
	origin   map[*Series]int
}

// Begin runs setup(ctx) over bars and returns the stepper for on_bar. The
// wall-clock limit covers setup and every Step until Close; ctx cancels
// the run at any point.
func (s *Strategy) Begin(ctx context.Context, bars strategy.Bars) (*Stepper, error) {
	return s.begin(ctx, bars, s.out, true, trackCap(bars.Len()), nil)
}

// begin is Begin printing to out; note and track as for runSignals.
func (s *Strategy) begin(ctx context.Context, bars strategy.Bars, out *capture, note bool, track int, against []*Series) (*Stepper, error) {
	if s.style != StyleOnBar {
		return nil, s.styleError(StyleOnBar)
	}
	if s.universe != nil {
		return nil, s.portfolioError()
	}
	r := newRun(s.memo, &bars)
	r.barKeys = s.barKeys
	r.cursor = -1
	th := newThread(r, out)
	stop, err := r.watch(ctx, th, s.limits.Wall)
	if err != nil {
		return nil, err
	}
	c := newCtx(r)
	r.tracing, r.trackCap, r.against = track > 0, track, against
	r.enter(th, "setup", s.limits.SetupSteps)
	if _, err := starlark.Call(th, s.setup, starlark.Tuple{c}, nil); err != nil {
		stop()
		e := evalError(s.name, err, r)
		e.Phase = "setup"
		return nil, e
	}
	r.tracing = false // on_bar's flow may depend on the data; only setup's series are compared
	r.settle()
	if note {
		s.noteWarmup(r.warmup)
	}
	return &Stepper{s: s, r: r, th: th, ctx: c, args: starlark.Tuple{c}, warmup: r.warmup, stop: stop}, nil
}

// Warmup is the number of leading bars before every indicator declared in
// setup has a value. Step does not call on_bar for them.
func (st *Stepper) Warmup() int { return st.warmup }

// Step calls on_bar for bar i (after its close) with the account as it
// stands, and returns the intent on_bar expressed (None when it expressed
// none). Bars inside the warm-up return None without calling on_bar. After
// an error every later Step returns the same error.
func (st *Stepper) Step(i int, acct strategy.Account) (strategy.Intent, error) {
	if st.err != nil {
		return strategy.Intent{}, st.err
	}
	if i < 0 || i >= st.r.n {
		return strategy.Intent{}, fmt.Errorf("step: bar %d is outside the %d bars of this run", i, st.r.n)
	}
	if st.snapNext < len(st.snapAt) && st.snapAt[st.snapNext] == i {
		st.snapshot(i)
	}
	if i < st.warmup {
		st.record(i, acct, strategy.Intent{})
		return strategy.Intent{}, nil
	}
	c := st.ctx
	st.r.cursor = i
	c.acct = acct
	c.intent = strategy.Intent{}
	st.r.enter(st.th, "on_bar", st.s.limits.BarSteps)
	if _, err := starlark.Call(st.th, st.s.onBar, st.args, nil); err != nil {
		e := evalError(st.s.name, err, st.r)
		e.Phase, e.Bar = "on_bar", i
		st.err = e
		return strategy.Intent{}, e
	}
	st.record(i, acct, c.intent)
	return c.intent, nil
}

// Close ends the run.
func (st *Stepper) Close() {
	if st.stop != nil {
		st.stop()
		st.stop = nil
	}
}
