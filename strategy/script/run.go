package script

import (
	"context"
	"fmt"
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
	tracing bool
	// against are the full run's series when this is a prefix run of
	// the lookahead proof (adopt).
	against  []*Series
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
	vals, ok := r.bars.Column(name)
	switch {
	case name == "time":
		vals = make([]float64, len(r.bars.Time))
		for i, t := range r.bars.Time {
			vals[i] = float64(t)
		}
	case !ok:
		return nil, fmt.Errorf("no bar column %q", name)
	}
	if len(vals) != r.n {
		return nil, fmt.Errorf("bar column %s has %d values for %d bars", name, len(vals), r.n)
	}
	key, ok := r.prefixColumnKey(name, vals) // share.go
	if !ok {
		key = r.memo.Key("bars."+name, []ta.Key{r.barKeys.key(r.memo, name, vals)}, nil)
	}
	s := &Series{vals: vals, key: key, start: leadingNaN(vals), run: r}
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
		r.adopt(s, len(r.built))
		r.built = append(r.built, s)
	}
	return s
}

// adopt makes series #k of a prefix run of the lookahead proof go on
// with the full run's column (against's) when its own is that column's
// first values bit for bit: the prefix run computed it over its own bars
// (the proof's whole point), found it the same, and from then on reads
// the same values from the full run's memory, so its own column is
// garbage at once instead of held until the run ends. A prefix run kept
// every series it computed, two runs at once, each up to a million bars:
// the largest part of a proving worker's heap. Nothing the proof
// compares changes: a series that differs keeps its own column, and the
// comparison after the run (seriesDifference) finds what it found
// before; one that is the same reads the same bits either way.
func (r *run) adopt(s *Series, k int) {
	if k >= len(r.against) || s.lazy != nil || r.against[k].lazy != nil {
		return
	}
	own, full := s.vals, r.against[k].vals
	if len(own) == 0 || len(own) != r.n || len(full) < len(own) || &own[0] == &full[0] {
		return
	}
	if sameBits(full[:len(own)], own) {
		s.vals = full[:len(own):len(own)]
	}
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

// signalKeys are the keys a signals(bars) dict may have, as messages name
// them.
const signalKeys = `"long", "short", "exit", "size", "stop_loss", "take_profit", "trailing_stop", "stop_limit"`
