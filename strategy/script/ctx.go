package script

import (
	"fmt"
	"math"
	"sort"

	"go.starlark.net/starlark"

	"wicket/strategy"
)

// Ctx is the ctx an event-driven strategy receives in setup and on_bar: the
// bar columns as series, the current bar, the account, the order intents,
// and any value the strategy stores on it (ctx.f = ta.sma(ctx.close, 10)).
type Ctx struct {
	r                       *run
	acct                    strategy.Account
	intent                  strategy.Intent
	fields                  map[string]starlark.Value
	bar                     *barView
	target, flat, buy, sell *starlark.Builtin
}

var (
	_ starlark.HasAttrs    = (*Ctx)(nil)
	_ starlark.HasSetField = (*Ctx)(nil)
	_ columnSource         = (*Ctx)(nil)
)

var ctxBuiltins = []string{"bar", "buy", "cash", "close", "equity", "flat", "high", "index", "low", "open", "position", "sell", "target", "time", "volume"}

func newCtx(r *run) *Ctx {
	c := &Ctx{r: r, fields: map[string]starlark.Value{}}
	c.bar = &barView{r: r}
	c.target = starlark.NewBuiltin("ctx.target", c.doTarget)
	c.flat = starlark.NewBuiltin("ctx.flat", c.doFlat)
	c.buy = starlark.NewBuiltin("ctx.buy", c.doQty(1))
	c.sell = starlark.NewBuiltin("ctx.sell", c.doQty(-1))
	return c
}

func (c *Ctx) String() string        { return "ctx" }
func (c *Ctx) Type() string          { return "ctx" }
func (c *Ctx) Freeze()               {}
func (c *Ctx) Truth() starlark.Bool  { return true }
func (c *Ctx) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: ctx") }

func (c *Ctx) column(name string) (*Series, error) { return c.r.column(name) }

func (c *Ctx) Attr(name string) (starlark.Value, error) {
	// The strategy's own fields first: on_bar reads them at every bar, and
	// none has a name of wicket's (SetField refuses those).
	if v, ok := c.fields[name]; ok {
		return v, nil
	}
	switch name {
	case "position":
		return starlark.Float(c.acct.Position), nil
	case "equity":
		return starlark.Float(c.acct.Equity), nil
	case "cash":
		return starlark.Float(c.acct.Cash), nil
	case "index":
		if c.r.cursor < 0 {
			return starlark.None, nil
		}
		return starlark.MakeInt(c.r.cursor), nil
	case "bar":
		return c.bar, nil
	case "open", "high", "low", "close", "volume", "time":
		return c.r.column(name)
	case "target":
		return c.target, nil
	case "flat":
		return c.flat, nil
	case "buy":
		return c.buy, nil
	case "sell":
		return c.sell, nil
	}
	return nil, nil
}

func (c *Ctx) AttrNames() []string {
	names := append([]string(nil), ctxBuiltins...)
	for k := range c.fields {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// SetField stores a strategy's own value on ctx.
func (c *Ctx) SetField(name string, v starlark.Value) error {
	for _, b := range ctxBuiltins {
		if b == name {
			return fmt.Errorf("ctx.%s is provided by wicket and read-only; store your value under another name", name)
		}
	}
	c.fields[name] = v
	return nil
}

func (c *Ctx) inOnBar(what string) error {
	if c.r.phase != "on_bar" {
		return fmt.Errorf("ctx.%s is an order intent: call it from on_bar, not %s", what, c.r.phase)
	}
	return nil
}

func number(v starlark.Value) (float64, bool) {
	if _, isBool := v.(starlark.Bool); isBool {
		return 0, false
	}
	f, ok := scalar(v)
	return f, ok && !math.IsNaN(f) && !math.IsInf(f, 0)
}

// doTarget is ctx.target(f, stop_loss=, take_profit=, trailing_stop=,
// stop_limit=):
// the exposure, and the protective exits the position rests with (each a
// fraction of its entry price; none when left out).
func (c *Ctx) doTarget(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var v starlark.Value
	var sl, tp, trail, slim starlark.Value = starlark.None, starlark.None, starlark.None, starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "fraction", &v, "stop_loss?", &sl, "take_profit?", &tp, "trailing_stop?", &trail, "stop_limit?", &slim); err != nil {
		return nil, err
	}
	if err := c.inOnBar("target"); err != nil {
		return nil, err
	}
	f, ok := number(v)
	if !ok {
		return nil, fmt.Errorf("ctx.target(%s): want a finite number, the exposure as a fraction of equity (1.0 all in long, -0.5 half short)", v)
	}
	var e strategy.Exits
	for _, x := range [...]struct {
		name string
		v    starlark.Value
		to   *float64
	}{{"stop_loss", sl, &e.StopLoss}, {"take_profit", tp, &e.TakeProfit}, {"trailing_stop", trail, &e.TrailingStop}, {"stop_limit", slim, &e.StopLimit}} {
		if x.v == starlark.None {
			continue
		}
		g, ok := number(x.v)
		if !ok {
			return nil, fmt.Errorf("ctx.target(%s=%s): want a number, a fraction of the entry price (0.02 is 2 %%)", x.name, x.v)
		}
		*x.to = g
	}
	if err := e.Validate(); err != nil {
		return nil, fmt.Errorf("ctx.target: %w", err)
	}
	c.intent = strategy.Intent{Kind: strategy.Target, Value: f, Exits: e}
	return starlark.None, nil
}

func (c *Ctx) doFlat(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 0); err != nil {
		return nil, err
	}
	if err := c.inOnBar("flat"); err != nil {
		return nil, err
	}
	c.intent = strategy.Intent{Kind: strategy.Target, Value: 0}
	return starlark.None, nil
}

// doQty implements buy (sign +1) and sell (sign -1). Several in one bar
// add up; a buy or sell after a target replaces it.
func (c *Ctx) doQty(sign float64) func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
	return func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var v starlark.Value
		if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &v); err != nil {
			return nil, err
		}
		what := b.Name()[len("ctx."):]
		if err := c.inOnBar(what); err != nil {
			return nil, err
		}
		q, ok := number(v)
		if !ok || q <= 0 {
			return nil, fmt.Errorf("%s(%s): want a positive quantity", b.Name(), v)
		}
		if c.intent.Kind == strategy.Qty {
			c.intent.Value += sign * q
		} else {
			c.intent = strategy.Intent{Kind: strategy.Qty, Value: sign * q}
		}
		return starlark.None, nil
	}
}

// barView is ctx.bar: the current bar's time (unix seconds), open, high,
// low, close and volume; None before the first bar.
type barView struct{ r *run }

func (b *barView) String() string        { return "bar" }
func (b *barView) Type() string          { return "bar" }
func (b *barView) Freeze()               {}
func (b *barView) Truth() starlark.Bool  { return true }
func (b *barView) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: bar") }
func (b *barView) AttrNames() []string {
	return []string{"close", "high", "low", "open", "time", "volume"}
}

func (b *barView) Attr(name string) (starlark.Value, error) {
	i := b.r.cursor
	bars := b.r.bars
	if i < 0 || i >= b.r.n {
		switch name {
		case "time", "open", "high", "low", "close", "volume":
			return starlark.None, nil
		}
		return nil, nil
	}
	switch name {
	case "time":
		return starlark.MakeInt64(bars.Time[i]), nil
	case "open":
		return starlark.Float(bars.Open[i]), nil
	case "high":
		return starlark.Float(bars.High[i]), nil
	case "low":
		return starlark.Float(bars.Low[i]), nil
	case "close":
		return starlark.Float(bars.Close[i]), nil
	case "volume":
		return starlark.Float(bars.Volume[i]), nil
	}
	return nil, nil
}

// barsValue is the bars argument of signals(bars): the bar columns as
// series (bars.close, ...), with the last bar current.
type barsValue struct{ r *run }

var _ columnSource = (*barsValue)(nil)

// String and Truth show nothing of the bars: their number would tell a
// decision how much data lies ahead.
func (b *barsValue) String() string        { return "bars" }
func (b *barsValue) Type() string          { return "bars" }
func (b *barsValue) Freeze()               {}
func (b *barsValue) Truth() starlark.Bool  { return true }
func (b *barsValue) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: bars") }
func (b *barsValue) AttrNames() []string {
	return []string{"close", "high", "low", "open", "series", "time", "volume"}
}
func (b *barsValue) column(name string) (*Series, error) { return b.r.column(name) }

func (b *barsValue) Attr(name string) (starlark.Value, error) {
	switch name {
	case "open", "high", "low", "close", "volume", "time":
		return b.r.column(name)
	case "series":
		return starlark.String(b.r.bars.Series), nil
	}
	return nil, nil
}
