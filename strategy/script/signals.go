package script

import (
	"context"
	"fmt"
	"math"
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
	sig, built, err := s.runSignals(ctx, bars, s.out, true, trackCap(bars.Len()), nil)
	if err != nil {
		return sig, Trace{}, err
	}
	return sig, Trace{Signals: &sig, series: built}, nil
}

// runSignals is Signals printing to out; note says whether the run's
// warm-up counts towards Warmup (not for the proof's prefix runs); track
// is how many series to keep for the proof (0: none, no tracing).
func (s *Strategy) runSignals(ctx context.Context, bars strategy.Bars, out *capture, note bool, track int, against []*Series) (strategy.Signals, []*Series, error) {
	if s.style != StyleSignals {
		return strategy.Signals{}, nil, s.styleError(StyleSignals)
	}
	if s.universe != nil {
		return strategy.Signals{}, nil, s.portfolioError()
	}
	r := newRun(s.memo, &bars)
	r.tracing, r.trackCap, r.against = track > 0, track, against
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
