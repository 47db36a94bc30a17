package script

import (
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"wicket/strategy"
	"wicket/strategy/ta"
)

// cursorEnd makes every series read relative to its own last value (the
// top level, and signals(bars), where the current bar is the last one).
const cursorEnd = -2

const runKey = "wicket.run"

// run is the state of one execution: the bars, the current bar, the
// memo, the largest warm-up seen, and why the thread was stopped.
type run struct {
	memo    *ta.Memo
	barKeys *BarKeys // nil: hash every column
	bars    *strategy.Bars
	n       int
	cursor  int
	warmup  int
	gaps    bool // a portfolio's calendar: indicators skip the bars an asset lacks (universe.go)

	mu   sync.Mutex
	cols map[string]*Series

	// tracing keeps the series computed (signals(bars), setup) in built,
	// in order, for the lookahead proof to compare with a prefix run's: the
	// first trackCap of them (see trackCap).
	tracing  bool
	trackCap int
	built    []*Series

	th      *starlark.Thread // the thread running this run's code
	phase   string
	stepCap uint64
	stop    atomic.Pointer[stopInfo]
	// Where a step limit hit: sampled over a few extra steps, because the
	// instruction at the exact step may be a loop's jump, which reports
	// the enclosing def's position rather than the loop's.
	limitPos   syntax.Position
	limitSteps int
}

type stopInfo struct {
	kind   Kind
	reason string
	pos    syntax.Position // where the strategy was when it was stopped, when known
}

func newRun(memo *ta.Memo, bars *strategy.Bars) *run {
	r := &run{memo: memo, bars: bars, cursor: cursorEnd, cols: map[string]*Series{}}
	if bars != nil {
		r.n = bars.Len()
	}
	return r
}

func runOf(th *starlark.Thread) *run {
	if r, ok := th.Local(runKey).(*run); ok {
		return r
	}
	panic("script: a thread without a run")
}

// pick returns the run whose cursor governs a value combining r and o:
// a series from the top level (no bars) defers to one from a bar run.
func (r *run) pick(o *run) *run {
	if r.bars == nil && o != nil {
		return o
	}
	return r
}

func (r *run) noteWarmup(start int) {
	if start > r.warmup {
		r.warmup = start
	}
}

// column returns a bar column as a series, keyed by its content.
func (r *run) column(name string) (*Series, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s, ok := r.cols[name]; ok {
		return s, nil
	}
	if r.bars == nil {
		return nil, fmt.Errorf("there are no bars at the top level; use bar columns in signals, setup or on_bar")
	}
	var vals []float64
	switch name {
	case "open":
		vals = r.bars.Open
	case "high":
		vals = r.bars.High
	case "low":
		vals = r.bars.Low
	case "close":
		vals = r.bars.Close
	case "volume":
		vals = r.bars.Volume
	case "time":
		vals = make([]float64, len(r.bars.Time))
		for i, t := range r.bars.Time {
			vals[i] = float64(t)
		}
	default:
		return nil, fmt.Errorf("no bar column %q", name)
	}
	if len(vals) != r.n {
		return nil, fmt.Errorf("bar column %s has %d values for %d bars", name, len(vals), r.n)
	}
	s := &Series{vals: vals, key: r.memo.Key("bars."+name, []ta.Key{r.barKeys.key(r.memo, name, vals)}, nil), start: leadingNaN(vals), run: r}
	r.cols[name] = s
	return s, nil
}

// derive computes (or fetches) a one-input elementwise series.
func (r *run) derive(name string, x *Series, params []float64, boolean bool, fill func([]float64)) *Series {
	key := r.memo.Key("series"+name, []ta.Key{x.key}, params)
	res, _ := r.memo.Do(key, "series"+name, func() (ta.Result, error) {
		out := make([]float64, len(x.values()))
		fill(out)
		return ta.Result{Outputs: [][]float64{out}}, nil
	})
	return r.track(&Series{vals: res.Outputs[0], key: key, start: x.start, boolean: boolean, run: r, what: "series " + name})
}

// derive2 computes (or fetches) a two-input elementwise series.
func (r *run) derive2(name string, x, y *Series, boolean bool, fill func([]float64)) *Series {
	key := r.memo.Key("series"+name, []ta.Key{x.key, y.key}, nil)
	res, _ := r.memo.Do(key, "series"+name, func() (ta.Result, error) {
		out := make([]float64, len(x.values()))
		fill(out)
		return ta.Result{Outputs: [][]float64{out}}, nil
	})
	return r.track(&Series{vals: res.Outputs[0], key: key, start: max(x.start, y.start), boolean: boolean, run: r, what: "series " + name})
}

// track keeps s in built while the run traces, up to its cap.
func (r *run) track(s *Series) *Series {
	if r.tracing && len(r.built) < r.trackCap {
		r.built = append(r.built, s)
	}
	return s
}

// settle computes the lazy series the run kept for the lookahead proof,
// which reads them from several goroutines at once.
func (r *run) settle() {
	for _, b := range r.built {
		b.values()
	}
}

// trackedBytes bounds what a traced run keeps alive for the lookahead
// proof beyond what the indicator memo holds anyway: a strategy that
// builds series in a loop would otherwise keep every intermediate one
// (each a value per bar) until the proof ends.
const trackedBytes = 128 << 20

// trackCap is how many series a traced run over n bars keeps: as many as
// fit trackedBytes, at least 16 and at most 1024. The full run and its
// prefix runs keep the same number (the full run's), so they keep the
// same series; the proof compares those, and every decision whatever
// the count.
func trackCap(n int) int { return min(1024, max(16, trackedBytes/8/max(n, 1))) }

// halt stops the thread, remembering why (the first reason wins).
func (r *run) halt(th *starlark.Thread, kind Kind, reason string) {
	r.stop.CompareAndSwap(nil, &stopInfo{kind: kind, reason: reason})
	th.Cancel(reason)
}

// refuse stops the run with a lookahead error at the strategy code being
// run: an operation that cannot return an error (len, truth, iteration)
// was asked to show bars the current decision may not see. The operation
// returns a neutral value, and the thread stops before its next
// instruction, so the strategy never uses it.
func (r *run) refuse(reason string) {
	th := r.th
	if th == nil {
		return
	}
	var pos syntax.Position
	stack := th.CallStack()
	for i := len(stack) - 1; i >= 0; i-- {
		if p := stack[i].Pos; p.IsValid() && p.Filename() != "<builtin>" {
			pos = p
			break
		}
	}
	r.stop.CompareAndSwap(nil, &stopInfo{kind: KindLookahead, reason: reason, pos: pos})
	th.Cancel(reason)
}

func (r *run) stopPos() syntax.Position {
	if s := r.stop.Load(); s != nil {
		return s.pos
	}
	return syntax.Position{}
}

func (r *run) stopKind() Kind {
	if s := r.stop.Load(); s != nil {
		return s.kind
	}
	return ""
}

func (r *run) stopReason() string {
	if s := r.stop.Load(); s != nil {
		return s.reason
	}
	return ""
}

// enter starts a phase on th with a fresh step budget.
func (r *run) enter(th *starlark.Thread, phase string, steps uint64) {
	r.phase = phase
	r.stepCap = steps
	r.limitPos, r.limitSteps = syntax.Position{}, 0
	th.SetMaxExecutionSteps(th.ExecutionSteps() + steps)
}

// newThread returns a thread for r that prints to out and stops at the step
// cap of the current phase.
func newThread(r *run, out *capture) *starlark.Thread {
	th := &starlark.Thread{Name: "strategy", Print: func(_ *starlark.Thread, msg string) { out.add(msg) }}
	th.SetLocal(runKey, r)
	r.th = th
	th.OnMaxSteps = func(th *starlark.Thread) {
		if pos := th.CallFrame(0).Pos; pos.IsValid() && pos.Line > r.limitPos.Line {
			r.limitPos = pos
		}
		if r.limitSteps < 16 {
			r.limitSteps++
			th.SetMaxExecutionSteps(th.ExecutionSteps() + 1)
			return
		}
		r.halt(th, KindLimit, fmt.Sprintf("exceeded the step limit of %d steps", r.stepCap))
	}
	return th
}

// watch cancels th when the wall-clock limit passes or ctx ends, until the
// returned stop is called.
func (r *run) watch(ctx context.Context, th *starlark.Thread, wall time.Duration) (stop func(), err error) {
	if err := ctx.Err(); err != nil {
		return func() {}, &Error{Kind: KindCanceled, Bar: -1, Msg: "cancelled before the run started: " + context.Cause(ctx).Error(), Hint: hintFor(&Error{Kind: KindCanceled})}
	}
	t := time.AfterFunc(wall, func() {
		r.halt(th, KindLimit, fmt.Sprintf("exceeded the wall-clock limit of %s", wall))
	})
	unhook := context.AfterFunc(ctx, func() {
		r.halt(th, KindCanceled, "cancelled: "+context.Cause(ctx).Error())
	})
	return func() { t.Stop(); unhook() }, nil
}

// capture collects print output up to a limit.
type capture struct {
	discard   bool // drop everything (the lookahead proof's prefix runs)
	mu        sync.Mutex
	buf       []byte
	limit     int
	truncated bool
}

// discard is the capture of runs whose output nobody reads.
var discard = &capture{discard: true}

func (c *capture) add(msg string) {
	if c.discard {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.truncated {
		return
	}
	if len(c.buf)+len(msg)+1 > c.limit {
		c.buf = append(c.buf, "... (print output truncated)\n"...)
		c.truncated = true
		return
	}
	c.buf = append(c.buf, msg...)
	c.buf = append(c.buf, '\n')
}

func (c *capture) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return string(c.buf)
}

// Signals runs a signals(bars) strategy over bars: the dict it returns
// becomes per-bar long/short/exit flags and sizes (missing values are
// false, and size 0).
func (s *Strategy) Signals(ctx context.Context, bars strategy.Bars) (strategy.Signals, error) {
	sig, _, err := s.runSignals(ctx, bars, s.out, true, 0)
	return sig, err
}

// SignalsTrace is Signals that also returns the run's trace for
// CheckLookahead: the signals and every series computed on the way.
func (s *Strategy) SignalsTrace(ctx context.Context, bars strategy.Bars) (strategy.Signals, Trace, error) {
	sig, built, err := s.runSignals(ctx, bars, s.out, true, trackCap(bars.Len()))
	if err != nil {
		return sig, Trace{}, err
	}
	return sig, Trace{Signals: &sig, series: built}, nil
}

// runSignals is Signals printing to out; note says whether the run's
// warm-up counts towards Warmup (not for the proof's prefix runs); track
// is how many series to keep for the proof (0: none, no tracing).
func (s *Strategy) runSignals(ctx context.Context, bars strategy.Bars, out *capture, note bool, track int) (strategy.Signals, []*Series, error) {
	if s.style != StyleSignals {
		return strategy.Signals{}, nil, s.styleError(StyleSignals)
	}
	if s.universe != nil {
		return strategy.Signals{}, nil, s.portfolioError()
	}
	r := newRun(s.memo, &bars)
	r.tracing, r.trackCap = track > 0, track
	r.barKeys = s.barKeys
	th := newThread(r, out)
	stop, err := r.watch(ctx, th, s.limits.Wall)
	defer stop()
	if err != nil {
		return strategy.Signals{}, nil, err
	}
	r.enter(th, "signals", s.limits.SignalsSteps)
	v, err := starlark.Call(th, s.signals, starlark.Tuple{&barsValue{r: r}}, nil)
	if err != nil {
		e := evalError(s.name, err, r)
		e.Phase = "signals"
		e.Hint = hintFor(e)
		return strategy.Signals{}, nil, e
	}
	if note {
		s.noteWarmup(r.warmup)
	}
	s.flags.reset()
	sig, msg := toSignals(v, r.n, s.flags)
	if msg != "" {
		e := newError(KindResult, s.name, s.signals.Position(), "signals(bars) "+msg)
		e.Phase = "signals"
		return strategy.Signals{}, nil, e
	}
	r.settle()
	return sig, r.built, nil
}

// signalKeys are the keys a signals(bars) dict may have, as messages name
// them.
const signalKeys = `"long", "short", "exit", "size", "stop_loss", "take_profit", "trailing_stop", "stop_limit"`

// exitKey reads a signals dict's protective exit (stop_loss, take_profit,
// trailing_stop): one fraction of the entry price for every position.
func exitKey(e *strategy.Exits, key string, v starlark.Value) string {
	f, ok := number(v)
	if !ok {
		return fmt.Sprintf("is %s; want a number, a fraction of the entry price (0.02 is 2 %%)", v.Type())
	}
	var x strategy.Exits
	switch key {
	case "stop_loss":
		e.StopLoss, x.StopLoss = f, f
	case "take_profit":
		e.TakeProfit, x.TakeProfit = f, f
	case "trailing_stop":
		e.TrailingStop, x.TrailingStop = f, f
	case "stop_limit":
		e.StopLimit, x.StopLimit, x.StopLoss = f, f, f // checked with the stop-loss once the dict is read
	}
	if err := x.Validate(); err != nil {
		return err.Error()
	}
	return ""
}

func toSignals(v starlark.Value, n int, fl *Flags) (strategy.Signals, string) {
	d, ok := v.(*starlark.Dict)
	if !ok {
		return strategy.Signals{}, fmt.Sprintf("returned %s; it must return a dict with \"long\" and/or \"short\", and optionally \"exit\", \"size\" and exits (\"stop_loss\", \"take_profit\", \"trailing_stop\", \"stop_limit\")", v.Type())
	}
	var sig strategy.Signals
	pre := fusedCrosses(d, n, fl)
	for _, item := range d.Items() {
		k, ok := item[0].(starlark.String)
		if !ok {
			return sig, fmt.Sprintf("returned a dict with key %s; keys are %s", item[0], signalKeys)
		}
		var msg string
		flags := func() ([]bool, string) {
			if f, ok := pre[string(k)]; ok {
				return f, ""
			}
			return toBools(item[1], n, fl)
		}
		switch string(k) {
		case "long":
			sig.Long, msg = flags()
		case "short":
			sig.Short, msg = flags()
		case "exit":
			sig.Exit, msg = flags()
		case "size":
			sig.Size, msg = toSizes(item[1], n)
		case "stop_loss", "take_profit", "trailing_stop", "stop_limit":
			msg = exitKey(&sig.Exits, string(k), item[1])
		default:
			return sig, fmt.Sprintf("returned unknown key %q; keys are %s", string(k), signalKeys)
		}
		if msg != "" {
			return sig, fmt.Sprintf("[%q] %s", string(k), msg)
		}
	}
	if sig.Long == nil && sig.Short == nil {
		return sig, "returned neither \"long\" nor \"short\"; a strategy needs at least one entry signal"
	}
	if err := sig.Exits.Validate(); err != nil {
		return sig, err.Error()
	}
	return sig, ""
}

// fusedCrosses computes, in one pass per pair of series, the flags of the
// signals (long, short, exit) that are a cross above and a cross below of
// the same two series, as an entry and its exit usually are; the others
// are left to toBools.
func fusedCrosses(d *starlark.Dict, n int, fl *Flags) map[string][]bool {
	var keys []string
	var crosses []*lazyCross
	for _, k := range [...]string{"long", "short", "exit"} {
		v, found, _ := d.Get(starlark.String(k))
		if s, ok := v.(*Series); found && ok && s.lazy != nil && len(s.lazy.cols[0]) == n {
			keys, crosses = append(keys, k), append(crosses, s.lazy)
		}
	}
	var out map[string][]bool
	for i := range crosses {
		for j := i + 1; j < len(crosses); j++ {
			a, b := crosses[i], crosses[j]
			if _, done := out[keys[i]]; done || a.dir != -b.dir || !sameColumn(a.cols[0], b.cols[0]) || !sameColumn(a.cols[1], b.cols[1]) {
				continue
			}
			if _, done := out[keys[j]]; done {
				continue
			}
			fi, fj := fl.take(n), fl.take(n)
			if a.dir > 0 {
				ta.CrossFlagsBoth(fi, fj, a.cols[0], a.cols[1])
			} else {
				ta.CrossFlagsBoth(fj, fi, a.cols[0], a.cols[1])
			}
			if out == nil {
				out = map[string][]bool{}
			}
			out[keys[i]], out[keys[j]] = fi, fj
		}
	}
	return out
}

// sameColumn reports whether a and b are one column (not equal values:
// the same memory).
func sameColumn(a, b []float64) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

func toBools(v starlark.Value, n int, fl *Flags) ([]bool, string) {
	var out []bool
	switch v := v.(type) {
	case *Series:
		if l := v.lazy; l != nil && len(l.cols[0]) == n {
			out = fl.take(n)
			ta.CrossFlags(out, l.cols[0], l.cols[1], l.dir)
			return out, ""
		}
		if len(v.values()) != n {
			return nil, fmt.Sprintf("is a series of %d values for %d bars", len(v.values()), n)
		}
		out = fl.take(n)
		for i, x := range v.values() {
			out[i] = x != 0 && !math.IsNaN(x)
		}
	case starlark.Bool:
		out = fl.take(n)
		for i := range out {
			out[i] = bool(v)
		}
	case starlark.String:
		return nil, "is a string; want a bool series"
	case starlark.Indexable:
		// A per-bar list is written knowing every bar (and how many there
		// are): refused like any other way of building a series by hand.
		return nil, fmt.Sprintf("is a %s; want a bool series (e.g. ta.cross_above(f, s) or f > s): per-bar values written by hand know every bar", v.Type())
	default:
		return nil, fmt.Sprintf("is %s; want a bool series (e.g. ta.cross_above(f, s) or f > s)", v.Type())
	}
	return out, ""
}

func toSizes(v starlark.Value, n int) ([]float64, string) {
	check := func(i int, f float64) (float64, string) {
		if math.IsNaN(f) {
			return 0, ""
		}
		if math.IsInf(f, 0) {
			return 0, fmt.Sprintf("is infinite at bar %d", i)
		}
		return f, ""
	}
	switch x := v.(type) {
	case *Series:
		if len(x.values()) != n {
			return nil, fmt.Sprintf("is a series of %d values for %d bars", len(x.values()), n)
		}
		out := make([]float64, n)
		for i, f := range x.values() {
			var msg string
			if out[i], msg = check(i, f); msg != "" {
				return nil, msg
			}
		}
		return out, ""
	}
	if _, isBool := v.(starlark.Bool); !isBool {
		if f, ok := scalar(v); ok {
			// One value for every bar (strategy.Signals.Size).
			f, msg := check(0, f)
			if msg != "" {
				return nil, msg
			}
			return []float64{f}, ""
		}
	}
	return nil, fmt.Sprintf("is %s; want a number or a series (fraction of equity)", v.Type())
}

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
	return s.begin(ctx, bars, s.out, true, trackCap(bars.Len()))
}

// begin is Begin printing to out; note and track as for runSignals.
func (s *Strategy) begin(ctx context.Context, bars strategy.Bars, out *capture, note bool, track int) (*Stepper, error) {
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
	r.tracing, r.trackCap = track > 0, track
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
