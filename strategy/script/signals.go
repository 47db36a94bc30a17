package script

import (
	"context"
	"fmt"
	"math"
	"slices"

	"wicket/strategy"
	"wicket/strategy/ta"

	"go.starlark.net/starlark"
)

// Signals runs a signals(bars) strategy over bars: the dict it returns
// becomes per-bar long/short/exit flags and sizes (missing values are
// false, and size 0).
func (s *Strategy) Signals(ctx context.Context, bars strategy.Bars) (strategy.Signals, error) {
	sig, _, err := s.runSignals(ctx, bars, s.out, true, 0, nil)
	return sig, err
}

// SignalsTrace is Signals that also returns the run's trace for
// CheckLookahead: the signals and every series computed on the way.
func (s *Strategy) SignalsTrace(ctx context.Context, bars strategy.Bars) (strategy.Signals, Trace, error) {
	sig, tr, err := s.runSignals(ctx, bars, s.out, true, trackCap(bars.Len()), nil)
	if err != nil {
		return sig, Trace{}, err
	}
	tr.Signals = &sig
	return sig, tr, nil
}

// runSignals is Signals printing to out; note says whether the run's
// warm-up counts towards Warmup (not for the proof's prefix runs); track
// is how many series to keep for the proof (0: none, no tracing), and
// the trace it returns holds them and the crosses its signals were
// (Signals is left to the caller). full is the full run's trace when
// this is a prefix run of the lookahead proof, else nil.
func (s *Strategy) runSignals(ctx context.Context, bars strategy.Bars, out *capture, note bool, track int, full *Trace) (strategy.Signals, Trace, error) {
	if s.style != StyleSignals {
		return strategy.Signals{}, Trace{}, s.styleError(StyleSignals)
	}
	if s.universe != nil {
		return strategy.Signals{}, Trace{}, s.portfolioError()
	}
	r := newRun(s.memo, &bars)
	r.tracing, r.trackCap = track > 0, track
	if full != nil {
		r.against = full.series
	}
	r.barKeys = s.barKeys
	th := newThread(r, out)
	stop, err := r.watch(ctx, th, s.limits.Wall)
	defer stop()
	if err != nil {
		return strategy.Signals{}, Trace{}, err
	}
	r.enter(th, "signals", s.limits.SignalsSteps)
	v, err := starlark.Call(th, s.signals, starlark.Tuple{&barsValue{r: r}}, nil)
	if err != nil {
		e := evalError(s.name, err, r)
		e.Phase = "signals"
		e.Hint = hintFor(e)
		return strategy.Signals{}, Trace{}, e
	}
	if note {
		s.noteWarmup(r.warmup)
	}
	s.flags.reset()
	var from *Trace // share.go: a prefix run takes the full run's crosses
	if r.tracing && full != nil && !r.gaps {
		from = full
	}
	sig, crosses, msg := toSignals(v, r.n, s.flags, from)
	if msg != "" {
		e := newError(KindResult, s.name, s.signals.Position(), "signals(bars) "+msg)
		e.Phase = "signals"
		return strategy.Signals{}, Trace{}, e
	}
	r.settle()
	tr := Trace{series: r.built}
	if r.tracing && full == nil {
		tr.crosses = crosses
	}
	return sig, tr, nil
}

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

// toSignals reads the dict signals(bars) returned over n bars, its flags
// in fl's columns. crosses are the lazy crosses its long, short and exit
// flags were computed from (signalCrosses). from, when set, is the full
// run's trace of a prefix run of the lookahead proof: a signal that is
// the cross of the full run's columns cut to the n bars takes the full
// run's flags cut to them (sharedFlags).
func toSignals(v starlark.Value, n int, fl *Flags, from *Trace) (sig strategy.Signals, crosses [3]*lazyCross, msg string) {
	d, ok := v.(*starlark.Dict)
	if !ok {
		return strategy.Signals{}, crosses, fmt.Sprintf("returned %s; it must return a dict with \"long\" and/or \"short\", and optionally \"exit\", \"size\" and exits (\"stop_loss\", \"take_profit\", \"trailing_stop\", \"stop_limit\")", v.Type())
	}
	crosses = signalCrosses(d, n)
	pre := sharedFlags(crosses, n, from)
	fusedCrosses(crosses, n, fl, &pre)
	for _, item := range d.Items() {
		k, ok := item[0].(starlark.String)
		if !ok {
			return sig, crosses, fmt.Sprintf("returned a dict with key %s; keys are %s", item[0], signalKeys)
		}
		flags := func() ([]bool, string) {
			if j := slices.Index(signalNames[:], string(k)); j >= 0 && pre[j] != nil {
				return pre[j], ""
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
			return sig, crosses, fmt.Sprintf("returned unknown key %q; keys are %s", string(k), signalKeys)
		}
		if msg != "" {
			return sig, crosses, fmt.Sprintf("[%q] %s", string(k), msg)
		}
	}
	if sig.Long == nil && sig.Short == nil {
		return sig, crosses, "returned neither \"long\" nor \"short\"; a strategy needs at least one entry signal"
	}
	if err := sig.Exits.Validate(); err != nil {
		return sig, crosses, err.Error()
	}
	return sig, crosses, ""
}

// signalNames are the signals a dict's flags are for, in the order of
// signalCrosses and fusedCrosses.
var signalNames = [...]string{"long", "short", "exit"}

// signalCrosses are the lazy crosses over n bars that d's long, short and
// exit are (nil for a signal that is not one): toBools or fusedCrosses
// computes each one's flags as ta.CrossFlags of its two columns.
func signalCrosses(d *starlark.Dict, n int) (out [3]*lazyCross) {
	for j, k := range signalNames {
		v, found, _ := d.Get(starlark.String(k))
		if s, ok := v.(*Series); found && ok && s.lazy != nil && len(s.lazy.cols[0]) == n {
			out[j] = s.lazy
		}
	}
	return out
}

// fusedCrosses computes, in one pass per pair of series, the flags of the
// signals (long, short, exit) that are a cross above and a cross below of
// the same two series, as an entry and its exit usually are, into out;
// those out has already, and the others, are left alone (toBools).
func fusedCrosses(crosses [3]*lazyCross, n int, fl *Flags, out *[3][]bool) {
	for i := range crosses {
		for j := i + 1; j < len(crosses); j++ {
			a, b := crosses[i], crosses[j]
			if a == nil || b == nil || out[i] != nil || out[j] != nil || a.dir != -b.dir || !sameColumn(a.cols[0], b.cols[0]) || !sameColumn(a.cols[1], b.cols[1]) {
				continue
			}
			fi, fj := fl.take(n), fl.take(n)
			if a.dir > 0 {
				ta.CrossFlagsBoth(fi, fj, a.cols[0], a.cols[1])
			} else {
				ta.CrossFlagsBoth(fj, fi, a.cols[0], a.cols[1])
			}
			out[i], out[j] = fi, fj
		}
	}
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
