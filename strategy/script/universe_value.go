package script

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"wicket/strategy"
	"wicket/strategy/ta"

	"go.starlark.net/starlark"
)

// universeValue is the argument of a portfolio's signals(universe).
type universeValue struct {
	r         *run
	assets    []strategy.Bars
	names     []string
	mu        sync.Mutex
	cols      map[string]*Series
	rank, top *starlark.Builtin
}

func newUniverseValue(r *run, assets []strategy.Bars) *universeValue {
	u := &universeValue{r: r, assets: assets, cols: map[string]*Series{}}
	for _, a := range assets {
		u.names = append(u.names, a.Series)
	}
	u.rank = starlark.NewBuiltin("universe.rank", u.doRank)
	u.top = starlark.NewBuiltin("universe.top", u.doTop)
	return u
}

func (u *universeValue) String() string { return "universe" }

func (u *universeValue) Type() string { return "universe" }

func (u *universeValue) Freeze() {}

func (u *universeValue) Truth() starlark.Bool { return true }

func (u *universeValue) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: universe") }

func (u *universeValue) AttrNames() []string { return []string{"assets", "rank", "time", "top"} }

func (u *universeValue) Attr(name string) (starlark.Value, error) {
	switch name {
	case "assets":
		t := make(starlark.Tuple, len(u.names))
		for i, n := range u.names {
			t[i] = starlark.String(n)
		}
		return t, nil
	case "rank":
		return u.rank, nil
	case "top":
		return u.top, nil
	case "time":
		return u.r.column("time")
	}
	return nil, nil
}

// asset finds an asset by its series name or its symbol.
func (u *universeValue) asset(k starlark.Value) (int, error) {
	s, ok := k.(starlark.String)
	if !ok {
		return -1, fmt.Errorf("a universe is indexed by an asset's name (a string such as %q), not %s", u.names[0], k.Type())
	}
	for i, n := range u.names {
		if n == string(s) {
			return i, nil
		}
	}
	for i, n := range u.names {
		if sym, _, _ := strings.Cut(n, "@"); sym == string(s) {
			return i, nil
		}
	}
	return -1, fmt.Errorf("%q is not in this universe; its assets are %s", string(s), strings.Join(u.names, ", "))
}

// Get is universe[name]: that asset's bars.
func (u *universeValue) Get(k starlark.Value) (starlark.Value, bool, error) {
	i, err := u.asset(k)
	if err != nil {
		return nil, false, err
	}
	return &assetValue{u: u, i: i}, true, nil
}

// column is asset i's bar column as a series on the calendar.
func (u *universeValue) column(i int, name string) (*Series, error) {
	key := strconv.Itoa(i) + "." + name
	u.mu.Lock()
	defer u.mu.Unlock()
	if s, ok := u.cols[key]; ok {
		return s, nil
	}
	b := &u.assets[i]
	vals, ok := b.Column(name)
	if !ok {
		return nil, fmt.Errorf("no bar column %q", name)
	}
	if len(vals) != u.r.n {
		return nil, fmt.Errorf("%s: bar column %s has %d values for %d bars", u.names[i], name, len(vals), u.r.n)
	}
	r := u.r
	s := &Series{vals: vals, key: r.memo.Key("bars."+name, []ta.Key{r.memo.ValuesKey(vals)}, nil), start: leadingNaN(vals), run: r}
	u.cols[key] = s
	return s, nil
}

// assetValue is universe[name]: one asset's bars, as signals(bars) reads
// them (asset.close, ta.atr(asset, 14)).
type assetValue struct {
	u *universeValue
	i int
}

func (a *assetValue) String() string { return "asset(" + a.u.names[a.i] + ")" }

func (a *assetValue) Type() string { return "asset" }

func (a *assetValue) Freeze() {}

func (a *assetValue) Truth() starlark.Bool { return true }

func (a *assetValue) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: asset") }

func (a *assetValue) AttrNames() []string {
	return []string{"close", "high", "low", "open", "series", "time", "volume"}
}

func (a *assetValue) column(name string) (*Series, error) { return a.u.column(a.i, name) }

func (a *assetValue) Attr(name string) (starlark.Value, error) {
	switch name {
	case "open", "high", "low", "close", "volume":
		return a.u.column(a.i, name)
	case "time":
		return a.u.r.column("time")
	case "series":
		return starlark.String(a.u.names[a.i]), nil
	}
	return nil, nil
}

// scores reads a dict asset → series (the argument of rank and top): the
// assets in universe order, with a series or nil for each.
func (u *universeValue) scores(fn string, v starlark.Value) ([]*Series, error) {
	d, ok := v.(*starlark.Dict)
	if !ok {
		return nil, fmt.Errorf("%s: want a dict asset → series (e.g. {a: ta.roc(universe[a].close, 20) for a in universe.assets}), not %s", fn, v.Type())
	}
	out := make([]*Series, len(u.names))
	for _, item := range d.Items() {
		i, err := u.asset(item[0])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", fn, err)
		}
		s, ok := item[1].(*Series)
		if !ok {
			return nil, fmt.Errorf("%s: the score of %s is a %s; want a series", fn, u.names[i], item[1].Type())
		}
		if len(s.values()) != u.r.n {
			return nil, fmt.Errorf("%s: the score of %s has %d values for %d bars", fn, u.names[i], len(s.values()), u.r.n)
		}
		out[i] = s
	}
	return out, nil
}

// crossSection computes, through the memo, one output column per asset
// from the scores at each bar alone: what keeps a cross-sectional read on
// its bar (bar t's output reads every asset's bar t and nothing else).
func (u *universeValue) crossSection(name string, sc []*Series, params []float64, boolean bool, at func(vals []float64, out []float64)) starlark.Value {
	r := u.r
	var keys []ta.Key
	var present []int
	start := 0
	for i, s := range sc {
		if s != nil {
			keys = append(keys, s.key)
			present = append(present, i)
			start = max(start, s.start)
		}
	}
	key := r.memo.Key("universe."+name, keys, append(slices.Clone(params), float64(len(sc))))
	res, _ := r.memo.Do(key, "universe."+name, func() (ta.Result, error) {
		cols := make([][]float64, len(present))
		for k := range cols {
			cols[k] = make([]float64, r.n)
		}
		vals, out := make([]float64, len(present)), make([]float64, len(present))
		for t := 0; t < r.n; t++ {
			for k, i := range present {
				vals[k] = sc[i].values()[t]
			}
			at(vals, out)
			for k := range present {
				cols[k][t] = out[k]
			}
		}
		return ta.Result{Outputs: cols}, nil
	})
	d := starlark.NewDict(len(present))
	for k, i := range present {
		s := r.track(&Series{vals: res.Outputs[k], key: r.memo.Key("universe."+name+".out", []ta.Key{key}, []float64{float64(k)}),
			start: start, boolean: boolean, run: r, what: "universe." + name + " of " + u.names[i]})
		_ = d.SetKey(starlark.String(u.names[i]), s)
	}
	return d
}

// ranks writes, for the values of one bar, each one's rank among those
// present (1 = highest; ties by universe order), NaN where missing.
func ranks(vals, out []float64) {
	idx := make([]int, 0, len(vals))
	for i, v := range vals {
		out[i] = math.NaN()
		if !math.IsNaN(v) {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return vals[idx[a]] > vals[idx[b]] })
	for k, i := range idx {
		out[i] = float64(k + 1)
	}
}

// doRank is universe.rank(scores): per asset, its rank at each bar among
// the assets with a score there (1 = the highest score).
func (u *universeValue) doRank(_ *starlark.Thread, fn *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var scores starlark.Value
	if err := starlark.UnpackArgs(fn.Name(), args, kwargs, "scores", &scores); err != nil {
		return nil, err
	}
	sc, err := u.scores(fn.Name(), scores)
	if err != nil {
		return nil, err
	}
	return u.crossSection("rank", sc, nil, false, ranks), nil
}

// doTop is universe.top(scores, k): per asset, true at each bar where its
// score is among the k highest there, false where it is not, missing
// where it has no score.
func (u *universeValue) doTop(_ *starlark.Thread, fn *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var scores starlark.Value
	var k int
	if err := starlark.UnpackArgs(fn.Name(), args, kwargs, "scores", &scores, "k", &k); err != nil {
		return nil, err
	}
	if k < 1 {
		return nil, fmt.Errorf("%s: k is %d; want at least 1 (how many assets to pick)", fn.Name(), k)
	}
	sc, err := u.scores(fn.Name(), scores)
	if err != nil {
		return nil, err
	}
	return u.crossSection("top", sc, []float64{float64(k)}, true, func(vals, out []float64) {
		ranks(vals, out)
		for i, rk := range out {
			if !math.IsNaN(rk) {
				out[i] = b2f(rk <= float64(k))
			}
		}
	}), nil
}

// toWeights reads the dict signals(universe) returns.
func (u *universeValue) toWeights(v starlark.Value) ([][]float64, string) {
	d, ok := v.(*starlark.Dict)
	if !ok {
		return nil, fmt.Sprintf("returned %s; it must return a dict asset → target weight (a series or a number), e.g. {a: 1.0 / len(universe.assets) for a in universe.assets}", v.Type())
	}
	n := u.r.n
	w := make([][]float64, len(u.names))
	for _, item := range d.Items() {
		i, err := u.asset(item[0])
		if err != nil {
			return nil, "returned a dict with key " + item[0].String() + ": " + err.Error()
		}
		if w[i] != nil {
			return nil, fmt.Sprintf("returned two weights for %s", u.names[i])
		}
		switch x := item[1].(type) {
		case *Series:
			if len(x.values()) != n {
				return nil, fmt.Sprintf("[%q] is a series of %d values for %d bars", u.names[i], len(x.values()), n)
			}
			w[i] = slices.Clone(x.values())
		case starlark.NoneType:
			w[i] = make([]float64, n)
			for t := range w[i] {
				w[i][t] = math.NaN()
			}
		default:
			f, ok := scalar(x)
			if _, isBool := x.(starlark.Bool); !ok || isBool {
				return nil, fmt.Sprintf("[%q] is %s; want a number or a series (a fraction of equity, negative for short)", u.names[i], x.Type())
			}
			w[i] = make([]float64, n)
			for t := range w[i] {
				w[i][t] = f
			}
		}
		for t, f := range w[i] {
			if math.IsInf(f, 0) {
				return nil, fmt.Sprintf("[%q] is infinite at bar %d; a weight is a finite fraction of equity", u.names[i], t)
			}
		}
	}
	for i := range w {
		if w[i] == nil {
			w[i] = make([]float64, n) // left out: not held
		}
	}
	return w, ""
}
