package script

import (
	"fmt"
	"slices"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// The chained proof of an on_bar strategy. The restarting proof (every
// prefix run steps on_bar from bar 0 to its cut) costs about twice the full
// run; the chained one steps only the last chainWindow bars before each
// cut in the prefix world, starting from the full run's state there, and
// then compares the state at the cut too. It is used where it can be shown
// to prove what the restarting one proves, and the restarting one runs
// everywhere else.
//
// Why it is as sound. A prefix run over the first c bars differs from the
// full run only in the bars it lacks, so up to a bar a < c its steps are
// the full run's as long as nothing on_bar saw before a came from bar c or
// later. What on_bar can see is: its own state (the ctx fields), the bar
// columns, ctx.bar and ctx.index at the current bar and before (rule 1's
// history-only indexing), the series setup computed (which the proof
// compares with the prefix run's own, value by value, on every bar before
// the cut, so they agree there), elementwise operations and comparisons of
// those (ours, a value at a bar from the inputs at that bar), the account
// (the prefix run is given the full run's), the module's globals (frozen
// after the top level: no step can change them) and pure built-ins (math,
// Starlark's own). A strategy that can see anything else does not chain:
//
//   - chainable refuses, when the strategy is loaded, a strategy whose
//     on_bar could reach a function that computes over the run's bars or
//     is not ours (ta, a loaded indicator, a host function): any reference
//     to one outside setup's own body (a helper, a closure, a global bound
//     to it) keeps the restarting proof, which reruns those computations
//     over the prefix's bars (the barcount leak of
//     TestProofCatchesLeakCarriedInState is caught that way);
//   - encodeValue refuses, at each snapshot, a state it cannot copy and
//     compare exactly: a series on_bar made (not setup's or a bar column),
//     a function or builtin kept on ctx (it may close over state the copy
//     cannot see), any other type, more than snapshotValues values; that
//     cut restarts.
//
// For the rest, by induction over the bars, the prefix run's state at
// every bar before the cut is the full run's, and so are its decisions:
// the state snapshotted at a = c-chainWindow is the prefix run's. From
// there the prefix run steps bars a..c-1 over its own bars and compares
// every intent and then its whole state with the full run's at c. That
// rechecks rule 1 itself (a hole that lets on_bar peek at a later bar, a
// value stored then that shows many bars later) where a hole would show
// first: at the bars just before each cut. What it gives up, and only for
// a hole in wicket's own reads, is a peek made more than chainWindow bars
// before every cut that never changes a decision or the state in a window;
// a strategy's own code cannot make one.

// chainWindow is how many bars before each cut the chained proof steps in
// the prefix world.
const chainWindow = 256

// chainTrace is what a recorded full run keeps for the chained proof: the
// state before each bar a prefix run starts at or ends at (nil: a state the
// proof cannot copy, so that cut restarts).
type chainTrace struct {
	snaps map[int]*encoded
}

// chainPoints are the bars whose state the chained proof of cuts needs.
func chainPoints(cuts []int) []int {
	var pts []int
	for _, c := range cuts {
		pts = append(pts, max(0, c-chainWindow), c)
	}
	slices.Sort(pts)
	return slices.Compact(pts)
}

// chainable reports whether on_bar of f can reach only what the chained
// proof's argument covers (see above): no name of a computation over the
// bars or of a host function (forbidden) outside setup's own body, and
// setup itself defined once and never named elsewhere (so on_bar cannot
// call it).
func chainable(f *syntax.File, forbidden func(string) bool) bool {
	if f == nil {
		return false
	}
	loaded := map[string]bool{}
	for _, st := range f.Stmts {
		if l, ok := st.(*syntax.LoadStmt); ok {
			for _, to := range l.To {
				loaded[to.Name] = true
			}
		}
	}
	bad := func(name string) bool { return loaded[name] || forbidden(name) }
	ok, setups := true, 0
	var walk func(n syntax.Node, inSetup bool)
	// walkFn walks a def or lambda other than setup: nothing in it is setup's.
	walkFn := func(params []syntax.Expr, body ...syntax.Node) {
		for _, p := range params {
			walk(p, false)
		}
		for _, b := range body {
			walk(b, false)
		}
	}
	walk = func(n syntax.Node, inSetup bool) {
		syntax.Walk(n, func(m syntax.Node) bool {
			if !ok {
				return false
			}
			switch m := m.(type) {
			case *syntax.LoadStmt:
				return false
			case *syntax.DefStmt:
				if m.Name.Name == "setup" {
					ok = false
				}
				body := make([]syntax.Node, len(m.Body))
				for i, b := range m.Body {
					body[i] = b
				}
				walkFn(m.Params, body...)
				return false
			case *syntax.LambdaExpr:
				walkFn(m.Params, m.Body)
				return false
			case *syntax.Ident:
				if m.Name == "setup" || (!inSetup && bad(m.Name)) {
					ok = false
				}
			}
			return true
		})
	}
	for _, st := range f.Stmts {
		if d, isDef := st.(*syntax.DefStmt); isDef && d.Name.Name == "setup" {
			setups++
			for _, p := range d.Params {
				walk(p, false)
			}
			for _, b := range d.Body {
				walk(b, true)
			}
			continue
		}
		walk(st, false)
	}
	return ok && setups == 1
}

// encoded is a copy of on_bar's state that no later step can change and
// that several prefix runs read at once: plain values as they are (they
// are immutable), containers copied, a series as where it comes from.
type encoded struct {
	kind   byte // 'v' value, 'l' list, 't' tuple, 'd' dict, 's' set, 'r' series, 'c' ctx
	v      starlark.Value
	elems  []*encoded // list, tuple, set; a dict's keys and values alternate
	built  int        // a series setup computed: its place in run.built; -1: a column
	column string
	fields []string // the top level (ctx's fields): their names, elems their values
}

// snapshotValues bounds the values one snapshot copies: a state that grows
// with the bars (a list of every close) would otherwise be copied at every
// snapshot point; past the bound that cut restarts instead.
const snapshotValues = 1 << 14

// snapshotCtx copies c's fields, or returns nil when one cannot be copied.
func snapshotCtx(c *Ctx, origin map[*Series]int) *encoded {
	budget := snapshotValues
	names := make([]string, 0, len(c.fields))
	for k := range c.fields {
		names = append(names, k)
	}
	slices.Sort(names)
	e := &encoded{kind: 'c', fields: names, elems: make([]*encoded, len(names))}
	for i, k := range names {
		if e.elems[i] = encodeValue(c.fields[k], c.r, origin, 0, &budget); e.elems[i] == nil {
			return nil
		}
	}
	return e
}

// encodeValue copies v, or returns nil (see the proof's argument above).
func encodeValue(v starlark.Value, r *run, origin map[*Series]int, depth int, budget *int) *encoded {
	if *budget--; depth > 32 || *budget < 0 {
		return nil
	}
	seq := func(kind byte, it starlark.Iterable, n int) *encoded {
		e := &encoded{kind: kind, elems: make([]*encoded, 0, n)}
		iter := it.Iterate()
		defer iter.Done()
		var x starlark.Value
		for iter.Next(&x) {
			c := encodeValue(x, r, origin, depth+1, budget)
			if c == nil {
				return nil
			}
			e.elems = append(e.elems, c)
		}
		return e
	}
	switch v := v.(type) {
	case starlark.NoneType, starlark.Bool, starlark.Int, starlark.Float, starlark.String, starlark.Bytes:
		return &encoded{kind: 'v', v: v}
	case starlark.Tuple:
		return seq('t', v, len(v))
	case *starlark.List:
		return seq('l', v, v.Len())
	case *starlark.Set:
		return seq('s', v, v.Len())
	case *starlark.Dict:
		e := &encoded{kind: 'd', elems: make([]*encoded, 0, 2*v.Len())}
		for _, kv := range v.Items() {
			k, x := encodeValue(kv[0], r, origin, depth+1, budget), encodeValue(kv[1], r, origin, depth+1, budget)
			if k == nil || x == nil {
				return nil
			}
			e.elems = append(e.elems, k, x)
		}
		return e
	case *Series:
		if k, ok := origin[v]; ok {
			return &encoded{kind: 'r', built: k}
		}
		if v.run == r {
			r.mu.Lock()
			defer r.mu.Unlock()
			for name, col := range r.cols {
				if col == v {
					return &encoded{kind: 'r', built: -1, column: name}
				}
			}
		}
	}
	return nil
}

// decode makes a fresh copy of e in run r, whose series setup computed
// are built; ok is false when a series has no counterpart there.
func (e *encoded) decode(r *run, built []*Series) (starlark.Value, bool) {
	switch e.kind {
	case 'v':
		return e.v, true
	case 'r':
		if e.built >= 0 {
			if e.built < len(built) {
				return built[e.built], true
			}
			return nil, false
		}
		s, err := r.column(e.column)
		return s, err == nil
	case 'd':
		d := starlark.NewDict(len(e.elems) / 2)
		for i := 0; i+1 < len(e.elems); i += 2 {
			k, ok1 := e.elems[i].decode(r, built)
			x, ok2 := e.elems[i+1].decode(r, built)
			if !ok1 || !ok2 || d.SetKey(k, x) != nil {
				return nil, false
			}
		}
		return d, true
	}
	xs := make([]starlark.Value, len(e.elems))
	for i, c := range e.elems {
		var ok bool
		if xs[i], ok = c.decode(r, built); !ok {
			return nil, false
		}
	}
	switch e.kind {
	case 't':
		return starlark.Tuple(xs), true
	case 'l':
		return starlark.NewList(xs), true
	case 's':
		s := starlark.NewSet(len(xs))
		for _, x := range xs {
			if s.Insert(x) != nil {
				return nil, false
			}
		}
		return s, true
	}
	return nil, false
}

// restore replaces c's fields with a fresh copy of the snapshot e.
func (e *encoded) restore(c *Ctx) bool {
	fields := make(map[string]starlark.Value, len(e.fields))
	for i, k := range e.fields {
		v, ok := e.elems[i].decode(c.r, c.r.built)
		if !ok {
			return false
		}
		fields[k] = v
	}
	c.fields = fields
	return true
}

// sameEncoded reports whether a and b are one state: the same shape, plain
// values equal (NaN equal to NaN, an int never equal to a float), series
// of the same origin.
func sameEncoded(a, b *encoded) bool {
	if a.kind != b.kind || len(a.elems) != len(b.elems) || !slices.Equal(a.fields, b.fields) {
		return false
	}
	switch a.kind {
	case 'v':
		if a.v.Type() != b.v.Type() {
			return false
		}
		if fa, ok := a.v.(starlark.Float); ok {
			return same(float64(fa), float64(b.v.(starlark.Float)))
		}
		eq, err := starlark.Equal(a.v, b.v)
		return err == nil && eq
	case 'r':
		return a.built == b.built && a.column == b.column
	}
	for i := range a.elems {
		if !sameEncoded(a.elems[i], b.elems[i]) {
			return false
		}
	}
	return true
}

// stateDifference names the first ctx field whose value differs between
// the full run's state full and a prefix run's pre, as of bar.
func stateDifference(full, pre *encoded, bar, cut int) *difference {
	if sameEncoded(full, pre) {
		return nil
	}
	field := func(e *encoded, name string) *encoded {
		if i, ok := slices.BinarySearch(e.fields, name); ok {
			return e.elems[i]
		}
		return nil
	}
	names := slices.Clone(full.fields)
	names = append(names, pre.fields...)
	slices.Sort(names)
	for _, k := range slices.Compact(names) {
		f, p := field(full, k), field(pre, k)
		if f != nil && p != nil && sameEncoded(f, p) {
			continue
		}
		return &difference{bar: bar, output: "ctx." + k + " after on_bar", full: f.text(), pre: p.text(), cut: cut}
	}
	return nil
}

// text shows e in a lookahead error.
func (e *encoded) text() string {
	if e == nil {
		return "unset"
	}
	parts := func() string {
		var b strings.Builder
		for i, c := range e.elems {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(c.text())
		}
		return b.String()
	}
	switch e.kind {
	case 'v':
		return e.v.String()
	case 'r':
		if e.built < 0 {
			return "ctx." + e.column
		}
		return fmt.Sprintf("series #%d", e.built+1)
	case 't':
		return "(" + parts() + ")"
	case 'l':
		return "[" + parts() + "]"
	case 's':
		return "set([" + parts() + "])"
	}
	var b strings.Builder
	b.WriteString("{")
	for i := 0; i+1 < len(e.elems); i += 2 {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(e.elems[i].text() + ": " + e.elems[i+1].text())
	}
	return b.String() + "}"
}
