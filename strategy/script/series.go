package script

import (
	"fmt"
	"math"
	"strconv"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"wicket/strategy/ta"
)

// Series is a column of values over the bars of a run, read Pine-style:
// s[0] is the current bar, s[k] the bar k bars back. Missing values are NaN
// on the host side and None in Starlark. A Series is immutable.
type Series struct {
	vals    []float64 // nil while lazy is set
	lazy    *lazyCross
	key     ta.Key
	start   int // warm-up: the first position with a value, by lookback arithmetic
	boolean bool
	run     *run
	what    string    // what computed it (ta.sma, series +), for the lookahead proof's messages
	params  []float64 // a ta function's numeric parameters, for the start-point check's names
	call    *taCall   // how a traced full run computed it (share.go)

	// boxed are the last values on_bar read (s[k]), by position parity:
	// s[1] at a bar is s[0] at the bar before, so reading both each bar
	// boxes one new value instead of two. Only Get and Index use it, from
	// the one goroutine stepping the run.
	boxed [2]boxedValue
}

// boxedValue is one value of a series as Starlark sees it, at pos.
type boxedValue struct {
	pos int
	v   starlark.Value // nil: empty
}

var (
	_ starlark.Value     = (*Series)(nil)
	_ starlark.Mapping   = (*Series)(nil)
	_ starlark.Indexable = (*Series)(nil)
	_ starlark.Sliceable = (*Series)(nil)
	_ starlark.Iterable  = (*Series)(nil)
	_ starlark.HasBinary = (*Series)(nil)
	_ starlark.HasUnary  = (*Series)(nil)
)

// lazyCross is a ta.cross_above or ta.cross_below not computed yet. Most
// crosses go straight into the dict signals(bars) returns, where the
// engine needs a flag per bar, not a float column: toBools writes the
// flags from the inputs in one pass (ta.CrossFlags). Any other use
// computes the series through the memo, under the key it would have had.
type lazyCross struct {
	e    *ta.Entry
	cols [][]float64 // a and b, of one length
	keys []ta.Key
	dir  float64
}

// values is s's column, computing a lazy cross first. A series belongs to
// one run and is used by one goroutine at a time (a traced run's series
// are computed before the lookahead proof compares them in parallel).
func (s *Series) values() []float64 {
	if l := s.lazy; l != nil {
		res, _, err := s.run.memo.Compute(l.e, l.cols, l.keys, nil)
		if err != nil {
			// Unreachable: the inputs were checked when the cross was made.
			panic(fmt.Sprintf("ta.%s: %v", l.e.Name, err))
		}
		s.vals, s.lazy = res.Outputs[0], nil
	}
	return s.vals
}

func (s *Series) Type() string {
	if s.boolean {
		return "bool series"
	}
	return "series"
}
func (s *Series) Freeze() {}

func (s *Series) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: %s", s.Type()) }

// String shows no length, ever, and no value inside signals(bars), where
// every series is opaque (see opaque). In setup and on_bar it shows the
// current bar's value, which the strategy may read anyway.
func (s *Series) String() string {
	if s.opaque() {
		return s.Type()
	}
	cur := s.cursor()
	v := "None"
	if cur >= 0 && cur < len(s.values()) {
		v = s.elem(cur).String()
	}
	return fmt.Sprintf("%s(current=%s)", s.Type(), v)
}

// opaque reports whether s belongs to a run where the whole series is the
// "current" view (signals(bars)): there, any element, the length or a
// truth value would be a read of bars later than the one a decision is
// for, so each is refused.
func (s *Series) opaque() bool { return s.run != nil && s.run.cursor == cursorEnd }

// Truth is the truth of the current value, so `if f > s:` in on_bar asks
// about this bar; a missing value is false. In signals(bars) it is refused:
// the "current" value there is the last bar's.
func (s *Series) Truth() starlark.Bool {
	if s.opaque() {
		s.run.refuse(refusedTruth)
		return false
	}
	cur := s.cursor()
	if cur < 0 || cur >= len(s.values()) {
		return false
	}
	v := s.values()[cur]
	return starlark.Bool(v != 0 && !math.IsNaN(v))
}

// cursor is the position of the current bar in s.
func (s *Series) cursor() int {
	if s.run == nil || s.run.cursor == cursorEnd {
		return len(s.values()) - 1
	}
	return s.run.cursor
}

// Len is the number of bars of history up to and including the current
// one: s[k] has a position for k < len(s). Refused in signals(bars), where
// it would be the length of the whole data set.
func (s *Series) Len() int {
	if s.opaque() {
		s.run.refuse(refusedLen)
		return 0
	}
	c := s.cursor()
	if c >= len(s.values()) {
		return len(s.values())
	}
	return c + 1
}

// Index is s[i] for 0 <= i < Len() (Go callers only: Starlark's s[k]
// goes through Get).
func (s *Series) Index(i int) starlark.Value {
	if s.opaque() {
		s.run.refuse(refusedIndex)
		return starlark.None
	}
	if i < 0 {
		s.run.refuse((&LookaheadError{Index: i}).Error())
		return starlark.None
	}
	return s.read(s.cursor() - i)
}

// Slice is refused in every phase: a slice is many bars at once, and in
// signals(bars) any bar is a future one for the bars before it.
func (s *Series) Slice(_, _, _ int) starlark.Value {
	s.run.refuse(refusedSlice)
	return starlark.None
}

// Iterate is refused in every phase (for loops, comprehensions, list(),
// tuple(), sorted(), zip(), enumerate(), min(), max(), any(), all(), ...):
// iterating a series would visit every bar, the future ones included. The
// refusal stops the run at the next instruction; the iterator is empty.
func (s *Series) Iterate() starlark.Iterator {
	s.run.refuse(refusedIterate)
	return emptyIterator{}
}

type emptyIterator struct{}

func (emptyIterator) Next(*starlark.Value) bool { return false }
func (emptyIterator) Done()                     {}

func (s *Series) elem(pos int) starlark.Value {
	if pos < 0 || pos >= len(s.values()) {
		return starlark.None
	}
	v := s.values()[pos]
	switch {
	case math.IsNaN(v):
		return starlark.None
	case s.boolean:
		return starlark.Bool(v != 0)
	}
	return starlark.Float(v)
}

// LookaheadError is a negative series index: a read of the future.
type LookaheadError struct{ Index int }

func (e *LookaheadError) Error() string {
	return fmt.Sprintf("series index %d reads %d bar(s) into the future; s[0] is the current bar and s[k] the bar k bars ago", e.Index, -e.Index)
}

// refusal is a lookahead refusal other than a negative index: an operation
// that would show a strategy bars after the one it decides for.
type refusal struct{ msg string }

func (e *refusal) Error() string { return e.msg }

// The refusals. Each message says what was refused and why; those made in
// signals(bars) say so, which selects the hint (hintFor).
const (
	refusedIndex   = "reading one bar of a series is refused in signals(bars): there the series holds every bar, so s[0] is the last bar, in the future of every other"
	refusedLen     = "len() of a series is refused in signals(bars): it is the length of the whole data set, which no bar's decision may depend on"
	refusedTruth   = "the truth of a series is refused in signals(bars) (if, and, or, not, bool()): it would be the last bar's value, in the future of every other bar"
	refusedSlice   = "slicing a series is refused: a slice reads many bars at once, future ones included; read s[k] (k bars ago) in on_bar"
	refusedIterate = "iterating a series is refused (for, comprehensions, list, tuple, sorted, zip, enumerate, min, max, any, all): it would visit every bar, future ones included"
	refusedList    = "a series cannot be built from a list: its values could come from any bar, future ones included; pass a series (bars.close, ctx.close, or a ta.* result)"
)

// Get implements s[k]: the value k bars back (k >= 0). Refused in
// signals(bars), and for k < 0 everywhere.
func (s *Series) Get(k starlark.Value) (starlark.Value, bool, error) {
	if s.opaque() {
		// Also halt: `x in s` calls Get and ignores its error.
		s.run.refuse(refusedIndex)
		return nil, false, &refusal{refusedIndex}
	}
	var i int
	switch k := k.(type) {
	case starlark.Int:
		n, ok := k.Int64()
		if !ok {
			return nil, false, fmt.Errorf("series index %s is too large", k)
		}
		if n < 0 {
			return nil, false, &LookaheadError{Index: int(max(n, math.MinInt32))}
		}
		if n > math.MaxInt32 {
			return starlark.None, true, nil
		}
		i = int(n)
	default:
		return nil, false, fmt.Errorf("series index must be an int (bars back), not %s", k.Type())
	}
	return s.read(s.cursor() - i), true, nil
}

// read is elem for on_bar's reads, reusing the value boxed for pos when
// it was read last time round (see boxed).
func (s *Series) read(pos int) starlark.Value {
	b := &s.boxed[pos&1]
	if b.v != nil && b.pos == pos {
		return b.v
	}
	v := s.elem(pos)
	b.pos, b.v = pos, v
	return v
}

// binop names for memo keys and stats.
var opNames = map[syntax.Token]string{
	syntax.PLUS: "+", syntax.MINUS: "-", syntax.STAR: "*", syntax.SLASH: "/", syntax.SLASHSLASH: "//",
	syntax.PERCENT: "%", syntax.AMP: "&", syntax.PIPE: "|",
	syntax.LT: "<", syntax.GT: ">", syntax.LE: "<=", syntax.GE: ">=", syntax.EQL: "==", syntax.NEQ: "!=",
}

// Binary implements elementwise arithmetic (+ - * / // %) and logic
// (& |) with a number or another series on either side.
func (s *Series) Binary(op syntax.Token, y starlark.Value, side starlark.Side) (starlark.Value, error) {
	if _, ok := opNames[op]; !ok || isComparison(op) {
		return nil, nil
	}
	x, other := starlark.Value(s), y
	if side == starlark.Right {
		x, other = y, s
	}
	return seriesOp(op, x, other)
}

// Unary implements -s, +s and ~s (logical not of a bool series).
func (s *Series) Unary(op syntax.Token) (starlark.Value, error) {
	switch op {
	case syntax.PLUS:
		return s, nil
	case syntax.MINUS:
		return s.run.derive("neg", s, nil, false, func(out []float64) {
			for i, v := range s.values() {
				out[i] = -v
			}
		}), nil
	case syntax.TILDE:
		return s.run.derive("not", s, nil, true, func(out []float64) {
			for i, v := range s.values() {
				switch {
				case math.IsNaN(v):
					out[i] = math.NaN()
				case v == 0:
					out[i] = 1
				default:
					out[i] = 0
				}
			}
		}), nil
	}
	return nil, nil
}

func isComparison(op syntax.Token) bool {
	switch op {
	case syntax.LT, syntax.GT, syntax.LE, syntax.GE, syntax.EQL, syntax.NEQ:
		return true
	}
	return false
}

// scalar reports whether v is a number (int, float or bool) and its value.
func scalar(v starlark.Value) (float64, bool) {
	switch v := v.(type) {
	case starlark.Float:
		return float64(v), true
	case starlark.Int:
		f, _ := strconv.ParseFloat(v.String(), 64)
		if i, ok := v.Int64(); ok {
			f = float64(i)
		}
		return f, true
	case starlark.Bool:
		if v {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// seriesOp applies op elementwise where at least one of x, y is a Series.
func seriesOp(op syntax.Token, x, y starlark.Value) (starlark.Value, error) {
	sx, xs := x.(*Series)
	sy, ys := y.(*Series)
	name := opNames[op]
	f := elementwise(op)
	boolean := isComparison(op) || ((op == syntax.AMP || op == syntax.PIPE) && (!xs || sx.boolean) && (!ys || sy.boolean))
	switch {
	case xs && ys:
		if len(sx.values()) != len(sy.values()) {
			return nil, fmt.Errorf("series %s series: lengths %d and %d differ; series must come from the same bars", name, len(sx.values()), len(sy.values()))
		}
		r := sx.run.pick(sy.run)
		return r.derive2(name, sx, sy, boolean, func(out []float64) {
			a, b := sx.values(), sy.values()[:len(sx.values())]
			for i := range out {
				out[i] = f(a[i], b[i])
			}
		}), nil
	case xs:
		v, ok := scalar(y)
		if !ok {
			return nil, fmt.Errorf("unsupported operation: %s %s %s (a series combines with numbers and series)", x.Type(), name, y.Type())
		}
		return sx.run.derive(name+"n", sx, []float64{v}, boolean, func(out []float64) {
			for i, a := range sx.values() {
				out[i] = f(a, v)
			}
		}), nil
	default:
		v, ok := scalar(x)
		if !ok {
			return nil, fmt.Errorf("unsupported operation: %s %s %s (a series combines with numbers and series)", x.Type(), name, y.Type())
		}
		return sy.run.derive("n"+name, sy, []float64{v}, boolean, func(out []float64) {
			for i, b := range sy.values() {
				out[i] = f(v, b)
			}
		}), nil
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// elementwise returns the scalar function of op; NaN (missing) propagates.
func elementwise(op syntax.Token) func(a, b float64) float64 {
	nan := math.NaN()
	cmp := func(c func(a, b float64) bool) func(a, b float64) float64 {
		return func(a, b float64) float64 {
			if math.IsNaN(a) || math.IsNaN(b) {
				return nan
			}
			return b2f(c(a, b))
		}
	}
	switch op {
	case syntax.PLUS:
		return func(a, b float64) float64 { return a + b }
	case syntax.MINUS:
		return func(a, b float64) float64 { return a - b }
	case syntax.STAR:
		return func(a, b float64) float64 { return a * b }
	case syntax.SLASH:
		return func(a, b float64) float64 {
			if b == 0 {
				return nan
			}
			return a / b
		}
	case syntax.SLASHSLASH:
		return func(a, b float64) float64 {
			if b == 0 {
				return nan
			}
			return math.Floor(a / b)
		}
	case syntax.PERCENT:
		return func(a, b float64) float64 {
			if b == 0 {
				return nan
			}
			m := math.Mod(a, b)
			if m != 0 && (m < 0) != (b < 0) {
				m += b
			}
			return m
		}
	case syntax.AMP:
		return cmp(func(a, b float64) bool { return a != 0 && b != 0 })
	case syntax.PIPE:
		return cmp(func(a, b float64) bool { return a != 0 || b != 0 })
	case syntax.LT:
		return cmp(func(a, b float64) bool { return a < b })
	case syntax.GT:
		return cmp(func(a, b float64) bool { return a > b })
	case syntax.LE:
		return cmp(func(a, b float64) bool { return a <= b })
	case syntax.GE:
		return cmp(func(a, b float64) bool { return a >= b })
	case syntax.EQL:
		return cmp(func(a, b float64) bool { return a == b })
	case syntax.NEQ:
		return cmp(func(a, b float64) bool { return a != b })
	}
	panic("script: no elementwise function for " + op.String())
}
