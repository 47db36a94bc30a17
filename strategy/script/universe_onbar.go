package script

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"go.starlark.net/starlark"

	"wicket/strategy"
	"wicket/strategy/scriptapi"
)

// Event-driven portfolio strategies: a strategy that declares a universe
// and defines setup(ctx) and on_bar(ctx) is stepped once per calendar bar
// with the account as it stands. ctx[name] is an asset (its bar columns
// as series, read s[0] for this bar, s[k] k bars back; its position), and
// ctx.assets, ctx.cash, ctx.equity, ctx.positions and ctx.weights the
// portfolio; ctx.target(name, weight) sets an asset's target weight for
// this bar (an asset not targeted keeps its holding). ctx.rank and
// ctx.top are universe.rank and universe.top, computed in setup.

// PortfolioAccount is what a portfolio's on_bar sees at a bar's close
// (scriptapi.PortfolioAccount).
type PortfolioAccount = scriptapi.PortfolioAccount

// PortfolioStepper runs an on_bar portfolio strategy one bar at a time.
// Call Close when done: it stops the run's wall-clock timer.
type PortfolioStepper struct {
	s      *Strategy
	r      *run
	th     *starlark.Thread
	ctx    *portfolioCtx
	args   starlark.Tuple
	warmup int
	stop   func()
	err    error

	rec *PortfolioTrace
}

// BeginPortfolio runs setup(ctx) over assets (one calendar, as for
// Weights) and returns the stepper for on_bar.
func (s *Strategy) BeginPortfolio(ctx context.Context, assets []strategy.Bars) (*PortfolioStepper, error) {
	return s.beginPortfolio(ctx, assets, s.out, true, trackCap(calendarLen(assets)*max(1, len(assets))))
}

func calendarLen(assets []strategy.Bars) int {
	if len(assets) == 0 {
		return 0
	}
	return assets[0].Len()
}

func (s *Strategy) beginPortfolio(ctx context.Context, assets []strategy.Bars, out *capture, note bool, track int) (*PortfolioStepper, error) {
	if s.universe == nil || s.style != StyleOnBar {
		return nil, &Error{Kind: KindEntry, File: s.name, Bar: -1, Msg: "BeginPortfolio needs a portfolio strategy defining setup(ctx) and on_bar(ctx)",
			Hint: "check IsPortfolio() and Style(); a signals(universe) strategy runs through Weights"}
	}
	if err := checkCalendar(assets); err != nil {
		return nil, err
	}
	cal := strategy.Bars{Series: "universe", Time: assets[0].Time}
	r := newRun(s.memo, &cal)
	r.gaps = true
	r.cursor = -1
	th := newThread(r, out)
	stop, err := r.watch(ctx, th, s.limits.Wall)
	if err != nil {
		return nil, err
	}
	c := newPortfolioCtx(newUniverseValue(r, assets))
	r.tracing, r.trackCap = track > 0, track
	r.enter(th, "setup", s.limits.SetupSteps)
	if _, err := starlark.Call(th, s.setup, starlark.Tuple{c}, nil); err != nil {
		stop()
		e := evalError(s.name, err, r)
		e.Phase = "setup"
		return nil, e
	}
	r.tracing = false
	r.settle()
	if note {
		s.noteWarmup(r.warmup)
	}
	return &PortfolioStepper{s: s, r: r, th: th, ctx: c, args: starlark.Tuple{c}, warmup: r.warmup, stop: stop}, nil
}

func checkCalendar(assets []strategy.Bars) error {
	if len(assets) == 0 {
		return fmt.Errorf("a portfolio run needs the bars of at least one asset")
	}
	n := assets[0].Len()
	for _, a := range assets[1:] {
		if a.Len() != n || (n > 0 && (a.Time[0] != assets[0].Time[0] || a.Time[n-1] != assets[0].Time[n-1])) {
			return fmt.Errorf("the assets' bars are not on one calendar (%s has %d bars, %s %d); align them first", assets[0].Series, n, a.Series, a.Len())
		}
	}
	return nil
}

// Warmup is the number of leading bars before every indicator declared in
// setup has a value. Step does not call on_bar for them.
func (st *PortfolioStepper) Warmup() int { return st.warmup }

// Record makes st keep each bar's account and targets, for
// CheckPortfolioLookahead. Call it before the first Step.
func (st *PortfolioStepper) Record() {
	st.rec = &PortfolioTrace{series: st.r.built}
}

// Trace is what Record kept; ok is false when Record was not called or
// the bars were not stepped once each, in order, from bar 0.
func (st *PortfolioStepper) Trace() (PortfolioTrace, bool) {
	if st.rec == nil || len(st.rec.Accounts) != len(st.rec.steps) {
		return PortfolioTrace{}, false
	}
	return *st.rec, true
}

func (st *PortfolioStepper) record(i int, acct PortfolioAccount, w []float64) {
	if st.rec == nil {
		return
	}
	if i != len(st.rec.steps) {
		st.rec.steps = append(st.rec.steps, nil) // out of order: Trace refuses
		return
	}
	st.rec.Accounts = append(st.rec.Accounts, PortfolioAccount{Cash: acct.Cash, Equity: acct.Equity, Positions: slices.Clone(acct.Positions), Marks: slices.Clone(acct.Marks)})
	st.rec.steps = append(st.rec.steps, slices.Clone(w))
}

// Step calls on_bar for bar i (after its close) with the account, and
// returns each asset's target weight: NaN where on_bar set none. Bars
// inside the warm-up return no targets without calling on_bar. After an
// error every later Step returns the same error.
func (st *PortfolioStepper) Step(i int, acct PortfolioAccount) ([]float64, error) {
	if st.err != nil {
		return nil, st.err
	}
	m := len(st.ctx.u.names)
	if i < 0 || i >= st.r.n {
		return nil, fmt.Errorf("step: bar %d is outside the %d bars of this run", i, st.r.n)
	}
	if len(acct.Positions) != m || len(acct.Marks) != m {
		return nil, fmt.Errorf("step: an account of %d positions and %d marks for %d assets", len(acct.Positions), len(acct.Marks), m)
	}
	c := st.ctx
	c.targets = nanFill(m)
	if i < st.warmup {
		st.record(i, acct, c.targets)
		return c.targets, nil
	}
	st.r.cursor = i
	c.acct = acct
	st.r.enter(st.th, "on_bar", st.s.limits.BarSteps)
	if _, err := starlark.Call(st.th, st.s.onBar, st.args, nil); err != nil {
		e := evalError(st.s.name, err, st.r)
		e.Phase, e.Bar = "on_bar", i
		st.err = e
		return nil, e
	}
	st.record(i, acct, c.targets)
	return c.targets, nil
}

// Close ends the run.
func (st *PortfolioStepper) Close() {
	if st.stop != nil {
		st.stop()
		st.stop = nil
	}
}

// portfolioCtx is the ctx of a portfolio's setup and on_bar.
type portfolioCtx struct {
	u       *universeValue
	acct    PortfolioAccount
	targets []float64
	fields  map[string]starlark.Value
	target  *starlark.Builtin
}

var (
	_ starlark.HasAttrs    = (*portfolioCtx)(nil)
	_ starlark.HasSetField = (*portfolioCtx)(nil)
	_ starlark.Mapping     = (*portfolioCtx)(nil)
)

var portfolioCtxBuiltins = []string{"assets", "cash", "equity", "index", "positions", "rank", "target", "time", "top", "weights"}

func newPortfolioCtx(u *universeValue) *portfolioCtx {
	c := &portfolioCtx{u: u, fields: map[string]starlark.Value{}}
	c.target = starlark.NewBuiltin("ctx.target", c.doTarget)
	return c
}

func (c *portfolioCtx) String() string        { return "ctx" }
func (c *portfolioCtx) Type() string          { return "ctx" }
func (c *portfolioCtx) Freeze()               {}
func (c *portfolioCtx) Truth() starlark.Bool  { return true }
func (c *portfolioCtx) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: ctx") }

// Get is ctx[name]: the asset's bars, as in signals(universe).
func (c *portfolioCtx) Get(k starlark.Value) (starlark.Value, bool, error) {
	return c.u.Get(k)
}

func (c *portfolioCtx) byAsset(vals []float64) *starlark.Dict {
	d := starlark.NewDict(len(c.u.names))
	for i, n := range c.u.names {
		v := 0.0
		if i < len(vals) {
			v = vals[i]
		}
		_ = d.SetKey(starlark.String(n), starlark.Float(v))
	}
	return d
}

func (c *portfolioCtx) Attr(name string) (starlark.Value, error) {
	r := c.u.r
	switch name {
	case "assets", "rank", "top":
		return c.u.Attr(name)
	case "cash":
		return starlark.Float(c.acct.Cash), nil
	case "equity":
		return starlark.Float(c.acct.Equity), nil
	case "positions":
		return c.byAsset(c.acct.Positions), nil
	case "weights":
		w := make([]float64, len(c.u.names))
		for i := range w {
			if i < len(c.acct.Positions) && c.acct.Equity > 0 {
				w[i] = c.acct.Positions[i] * c.acct.Marks[i] / c.acct.Equity
			}
		}
		return c.byAsset(w), nil
	case "index":
		if r.cursor < 0 {
			return starlark.None, nil
		}
		return starlark.MakeInt(r.cursor), nil
	case "time":
		if r.cursor < 0 || r.cursor >= r.n {
			return starlark.None, nil
		}
		return starlark.MakeInt64(r.bars.Time[r.cursor]), nil
	case "target":
		return c.target, nil
	}
	if v, ok := c.fields[name]; ok {
		return v, nil
	}
	return nil, nil
}

func (c *portfolioCtx) AttrNames() []string {
	names := slices.Clone(portfolioCtxBuiltins)
	for k := range c.fields {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// SetField stores a strategy's own value on ctx.
func (c *portfolioCtx) SetField(name string, v starlark.Value) error {
	if slices.Contains(portfolioCtxBuiltins, name) {
		return fmt.Errorf("ctx.%s is provided by wicket and read-only; store your value under another name", name)
	}
	c.fields[name] = v
	return nil
}

// doTarget is ctx.target(asset, weight): the asset's target weight for
// this bar, a fraction of equity (negative for short).
func (c *portfolioCtx) doTarget(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var asset, v starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "asset", &asset, "weight", &v); err != nil {
		return nil, err
	}
	if c.u.r.phase != "on_bar" {
		return nil, fmt.Errorf("ctx.target is an order intent: call it from on_bar, not %s", c.u.r.phase)
	}
	i, err := c.u.asset(asset)
	if err != nil {
		return nil, fmt.Errorf("ctx.target: %w", err)
	}
	f, ok := number(v)
	if !ok {
		return nil, fmt.Errorf("ctx.target(%s, %s): want a finite number, the weight as a fraction of equity (0.5 half long, -0.25 a quarter short)", asset, v)
	}
	c.targets[i] = f
	return starlark.None, nil
}

// prefixSteps is a prefix run of an on_bar portfolio: the recorded
// accounts replayed, every target compared.
func (s *Strategy) prefixSteps(ctx context.Context, assets []strategy.Bars, cut int, full PortfolioTrace) (*difference, error) {
	pre := make([]strategy.Bars, len(assets))
	for i := range assets {
		pre[i] = assets[i].Slice(0, cut)
	}
	st, err := s.beginPortfolio(ctx, pre, discard, false, trackCap(assets[0].Len()*len(assets)))
	if err != nil {
		return prefixError(err, cut)
	}
	defer st.Close()
	first := seriesDifference(full.series, st.r.built, cut)
	for i := 0; i < min(cut, len(full.steps)) && (first == nil || i < first.bar); i++ {
		w, err := st.Step(i, full.Accounts[i])
		if err != nil {
			return prefixError(err, cut)
		}
		for a, want := range full.steps[i] {
			if !same(w[a], want) {
				return &difference{bar: i, output: fmt.Sprintf("the target of %s", assets[a].Series), full: fmtFloat(want), pre: fmtFloat(w[a]), cut: cut}, nil
			}
		}
	}
	return first, nil
}
