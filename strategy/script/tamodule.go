package script

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"wicket/strategy/ta"
)

// taModule is the predeclared `ta`: one builtin per catalog entry. The
// builtins find the current run (its memo, its bars) through the thread.
var taModule = func() *starlarkstruct.Module {
	m := &starlarkstruct.Module{Name: "ta", Members: starlark.StringDict{}}
	for _, e := range ta.Builtin().Entries() {
		e := e
		m.Members[e.Name] = starlark.NewBuiltin("ta."+e.Name, func(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			return callEntry(runOf(th), e, args, kwargs)
		})
	}
	return m
}()

// columnSource is a value that supplies bar columns: bars in signals(bars),
// ctx in setup and on_bar.
type columnSource interface {
	column(name string) (*Series, error)
}

var barColumns = map[string]bool{"open": true, "high": true, "low": true, "close": true, "volume": true}

func callEntry(r *run, e *ta.Entry, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	fail := func(format string, a ...any) error { return fmt.Errorf("ta.%s: %s", e.Name, fmt.Sprintf(format, a...)) }
	inputs := make([]starlark.Value, len(e.Inputs))
	pos := 0
	priceInputs := len(e.Inputs) > 0
	for _, in := range e.Inputs {
		priceInputs = priceInputs && barColumns[in]
	}
	if len(args) > 0 {
		if src, ok := args[0].(columnSource); ok {
			if !priceInputs {
				return nil, fail("pass a series (e.g. bars.close), not %s; only functions of bar columns (%s) take bars or ctx", args[0].Type(), "open/high/low/close/volume")
			}
			for i, name := range e.Inputs {
				s, err := src.column(name)
				if err != nil {
					return nil, fail("%v", err)
				}
				inputs[i] = s
			}
			pos = 1
		}
	}
	nIn := pos
	if pos == 0 {
		for i := range e.Inputs {
			if pos < len(args) {
				inputs[i] = args[pos]
				pos++
			}
		}
		nIn = pos
	}
	p := e.Defaults()
	set := make([]bool, len(p))
	for ; pos < len(args); pos++ {
		j := pos - nIn
		if j >= len(p) {
			return nil, fail("too many positional arguments; it takes %s", e.Signature())
		}
		v, err := paramValue(e, j, args[pos])
		if err != nil {
			return nil, fail("%v", err)
		}
		p[j], set[j] = v, true
	}
	for _, kv := range kwargs {
		name := string(kv[0].(starlark.String))
		if i := indexOf(e.Inputs, name); i >= 0 {
			if inputs[i] != nil {
				return nil, fail("input %s given twice", name)
			}
			inputs[i] = kv[1]
			continue
		}
		j := e.Param(name)
		if j < 0 {
			return nil, fail("unexpected keyword %q; it takes %s", name, e.Signature())
		}
		if set[j] {
			return nil, fail("parameter %s given twice", e.Params[j].Name)
		}
		v, err := paramValue(e, j, kv[1])
		if err != nil {
			return nil, fail("%v", err)
		}
		p[j], set[j] = v, true
	}
	if e.Name == "shift" && p[0] < 0 {
		return nil, &refusal{fmt.Sprintf("ta.shift(s, %v) would read %v bar(s) into the future; shift delays a series by k >= 0 bars", p[0], -p[0])}
	}
	// Resolve inputs to series; a number is allowed for the helpers' b.
	series := make([]*Series, len(inputs))
	n := -1
	for i, v := range inputs {
		if v == nil {
			hint := ""
			if priceInputs {
				hint = " (or bars/ctx as the first argument)"
			}
			return nil, fail("missing input %s; it takes %s%s", e.Inputs[i], e.Signature(), hint)
		}
		if s, ok := v.(*Series); ok {
			series[i] = s
			n = len(s.values())
		}
	}
	for i, v := range inputs {
		if series[i] != nil {
			continue
		}
		s, err := r.toSeries(v, n, e.Inputs[i] == "b")
		var rf *refusal
		if errors.As(err, &rf) {
			return nil, &refusal{fmt.Sprintf("ta.%s: input %s: %s", e.Name, e.Inputs[i], rf.msg)}
		}
		if err != nil {
			return nil, fail("input %s: %v", e.Inputs[i], err)
		}
		series[i] = s
		if n < 0 {
			n = len(s.values())
		}
	}
	cols := make([][]float64, len(series))
	keys := make([]ta.Key, len(series))
	start := 0
	for i, s := range series {
		cols[i], keys[i] = s.values(), s.key
		start = max(start, s.start)
		r = r.pick(s.run)
	}
	if dir, ok := crossDir[e.Name]; ok && len(cols[0]) == len(cols[1]) && len(p) == 0 && !r.gaps { // a portfolio's crosses skip gaps (r.compute)
		// Not kept for the lookahead proof: a cross at a bar is a function
		// of its inputs there and one bar before, and the inputs are kept
		// (or are bar columns or numbers), as is whatever uses the cross.
		start += e.Lookback(p)
		r.noteWarmup(start)
		return &Series{lazy: &lazyCross{e: e, cols: cols, keys: keys, dir: dir}, key: r.memo.Key("ta."+e.Name, keys, p),
			start: start, boolean: e.Bool, run: r, what: "ta." + e.Name, params: p}, nil
	}
	var res ta.Result
	var key ta.Key
	if outs := r.shared(e, cols, p); outs != nil { // share.go: a prefix run takes the full run's output
		res, key = ta.Result{Outputs: outs}, r.memo.Key("ta."+e.Name, keys, p)
	} else {
		var err error
		if res, key, err = r.compute(e, cols, keys, p); err != nil { // universe.go: a portfolio's gaps are skipped
			return nil, err
		}
	}
	call := r.recordCall(e, cols, p, res.Outputs)
	start += e.Lookback(p)
	r.noteWarmup(start)
	if len(e.Outputs) == 1 {
		return r.track(&Series{vals: res.Outputs[0], key: key, start: start, boolean: e.Bool, run: r, what: "ta." + e.Name, params: p, call: call}), nil
	}
	out := &multi{name: e.Name, names: e.Outputs, vals: make([]*Series, len(e.Outputs))}
	for j := range e.Outputs {
		out.vals[j] = r.track(&Series{vals: res.Outputs[j], key: r.memo.Key("out", []ta.Key{key}, []float64{float64(j)}), start: start, boolean: e.Bool, run: r, what: "ta." + e.Name + "(...)." + e.Outputs[j], params: p, call: call})
	}
	return out, nil
}

// crossDir is the direction of the crosses computed lazily (lazyCross).
var crossDir = map[string]float64{"cross_above": 1, "cross_below": -1}

func indexOf(xs []string, s string) int {
	for i, x := range xs {
		if x == s {
			return i
		}
	}
	return -1
}

func paramValue(e *ta.Entry, j int, v starlark.Value) (float64, error) {
	q := e.Params[j]
	if q.Type == ta.MAType {
		if s, ok := v.(starlark.String); ok {
			for i, name := range ta.MATypes {
				if strings.EqualFold(name, string(s)) {
					return float64(i), nil
				}
			}
			return 0, fmt.Errorf("%s %q is not one of %s", q.Name, string(s), strings.Join(ta.MATypes, ", "))
		}
	}
	if _, isBool := v.(starlark.Bool); isBool {
		return 0, fmt.Errorf("%s must be a number, not bool", q.Name)
	}
	f, ok := scalar(v)
	if !ok {
		return 0, fmt.Errorf("%s must be a number, not %s", q.Name, v.Type())
	}
	return f, nil
}

// multi is the result of a multi-output function: a struct of series,
// e.g. ta.macd(close).hist.
type multi struct {
	name  string
	names []string
	vals  []*Series
}

func (m *multi) String() string        { return "ta." + m.name + "(" + strings.Join(m.names, ", ") + ")" }
func (m *multi) Type() string          { return "ta." + m.name }
func (m *multi) Freeze()               {}
func (m *multi) Truth() starlark.Bool  { return true }
func (m *multi) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: %s", m.Type()) }
func (m *multi) AttrNames() []string {
	names := append([]string(nil), m.names...)
	sort.Strings(names)
	return names
}
func (m *multi) Attr(name string) (starlark.Value, error) {
	if i := indexOf(m.names, name); i >= 0 {
		return m.vals[i], nil
	}
	return nil, nil
}

// toSeries converts a list or tuple of numbers (None for missing), or with
// allowNumber a single number, into a series of length n (n < 0: any).
func (r *run) toSeries(v starlark.Value, n int, allowNumber bool) (*Series, error) {
	if f, ok := scalar(v); ok {
		if _, isBool := v.(starlark.Bool); !allowNumber || isBool {
			return nil, fmt.Errorf("want a series, got %s", v.Type())
		}
		if n < 0 {
			return nil, fmt.Errorf("a number needs a series beside it to take its length")
		}
		key := r.memo.Key("const", nil, []float64{f, float64(n)})
		res, _ := r.memo.Do(key, "const", func() (ta.Result, error) {
			out := make([]float64, n)
			for i := range out {
				out[i] = f
			}
			return ta.Result{Outputs: [][]float64{out}}, nil
		})
		return &Series{vals: res.Outputs[0], key: key, run: r}, nil
	}
	if _, isStr := v.(starlark.String); isStr {
		return nil, fmt.Errorf("want a series, got string")
	}
	if _, ok := v.(starlark.Iterable); ok {
		// A list, tuple, dict, set or range: refused, never converted.
		return nil, &refusal{refusedList + ", not " + v.Type()}
	}
	return nil, fmt.Errorf("want a series, got %s", v.Type())
}

func leadingNaN(v []float64) int {
	i := 0
	for i < len(v) && math.IsNaN(v[i]) {
		i++
	}
	return i
}
