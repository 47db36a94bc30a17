package script

import (
	"fmt"
	"math"
	"strconv"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

func fmtNum(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// validKnobName reports whether name is a knob's name: a letter or _,
// then letters, digits or _, at most 64 in all (ASCII).
func validKnobName(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c == '_', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// params records knob declarations while a strategy's top level runs and
// answers each with the override or the default.
type params struct {
	overrides map[string]any // raw, checked when the knob is declared
	knobs     []Knob
	open      bool // only the top level may declare knobs
}

// paramsKey is the thread-local under which a load keeps its params
// (load sets it on the thread that runs the top level).
const paramsKey = "wicket.params"

// paramModule is the param module, one for every load (built once rather
// than once a combination): its builtins find the load's params on the
// thread that calls them.
var paramModule = &starlarkstruct.Module{Name: "param", Members: starlark.StringDict{
	"int":    starlark.NewBuiltin("param.int", declare(KnobInt)),
	"float":  starlark.NewBuiltin("param.float", declare(KnobFloat)),
	"bool":   starlark.NewBuiltin("param.bool", declare(KnobBool)),
	"choice": starlark.NewBuiltin("param.choice", declare(KnobChoice)),
}}

func declare(t KnobType) func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
	return func(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		knobErr := func(format string, a ...any) error {
			return &Error{Kind: KindKnob, Bar: -1, Msg: b.Name() + ": " + fmt.Sprintf(format, a...)}
		}
		p, _ := th.Local(paramsKey).(*params)
		if p == nil || !p.open {
			return nil, knobErr("knobs are declared at the top level of the strategy, not inside a function or an indicator")
		}
		var name, doc string
		var def, min, max, step starlark.Value = nil, starlark.None, starlark.None, starlark.None
		var choices *starlark.List
		var err error
		switch t {
		case KnobChoice:
			err = starlark.UnpackArgs(b.Name(), args, kwargs, "name", &name, "default", &def, "choices", &choices, "doc?", &doc)
		case KnobBool:
			err = starlark.UnpackArgs(b.Name(), args, kwargs, "name", &name, "default", &def, "doc?", &doc)
		default:
			err = starlark.UnpackArgs(b.Name(), args, kwargs, "name", &name, "default", &def, "min?", &min, "max?", &max, "step?", &step, "doc?", &doc)
		}
		if err != nil {
			return nil, &Error{Kind: KindKnob, Bar: -1, Msg: err.Error()}
		}
		if !validKnobName(name) {
			return nil, knobErr("knob name %q must be an identifier (letters, digits, _)", name)
		}
		for _, k := range p.knobs {
			if k.Name == name {
				return nil, knobErr("knob %q is declared twice", name)
			}
		}
		k := Knob{Name: name, Type: t, Doc: doc}
		num := func(what string, v starlark.Value) (*float64, error) {
			if v == starlark.None {
				return nil, nil
			}
			f, ok := scalar(v)
			if _, isBool := v.(starlark.Bool); !ok || isBool {
				return nil, knobErr("%s %s of knob %q must be a number", what, v, name)
			}
			if t == KnobInt && f != math.Trunc(f) {
				return nil, knobErr("%s %s of int knob %q must be a whole number", what, v, name)
			}
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return nil, knobErr("%s of knob %q must be finite", what, name)
			}
			return &f, nil
		}
		switch t {
		case KnobInt, KnobFloat:
			d, ok := scalar(def)
			if _, isBool := def.(starlark.Bool); !ok || isBool {
				return nil, knobErr("default %s of knob %q must be a number", def, name)
			}
			if _, isInt := def.(starlark.Int); t == KnobInt && !isInt {
				return nil, knobErr("default %s of int knob %q must be an int", def, name)
			}
			if k.Min, err = num("min", min); err != nil {
				return nil, err
			}
			if k.Max, err = num("max", max); err != nil {
				return nil, err
			}
			if k.Step, err = num("step", step); err != nil {
				return nil, err
			}
			if k.Step != nil && *k.Step <= 0 {
				return nil, knobErr("step of knob %q must be positive", name)
			}
			if k.Min != nil && k.Max != nil && *k.Min > *k.Max {
				return nil, knobErr("knob %q has min %s above max %s", name, fmtNum(*k.Min), fmtNum(*k.Max))
			}
			if t == KnobInt {
				k.Default = int64(d)
			} else {
				k.Default = d
			}
			if _, err := k.Check(k.Default); err != nil {
				return nil, knobErr("default of knob %q is outside its own range [%s]", name, k.Range())
			}
		case KnobBool:
			b, ok := def.(starlark.Bool)
			if !ok {
				return nil, knobErr("default %s of bool knob %q must be True or False", def, name)
			}
			k.Default = bool(b)
		case KnobChoice:
			s, ok := def.(starlark.String)
			if !ok {
				return nil, knobErr("default %s of choice knob %q must be a string", def, name)
			}
			k.Default = string(s)
			seen := map[string]bool{}
			for i := 0; i < choices.Len(); i++ {
				c, ok := choices.Index(i).(starlark.String)
				if !ok {
					return nil, knobErr("choices of knob %q must be strings", name)
				}
				if seen[string(c)] {
					return nil, knobErr("choice %q of knob %q is listed twice", string(c), name)
				}
				seen[string(c)] = true
				k.Choices = append(k.Choices, string(c))
			}
			if !seen[string(s)] {
				return nil, knobErr("default %q of knob %q is not one of its choices", string(s), name)
			}
		}
		p.knobs = append(p.knobs, k)
		val := k.Default
		if raw, ok := p.overrides[name]; ok {
			v, err := k.Check(raw)
			if err != nil {
				return nil, err
			}
			val = v
		}
		return toStarlark(val), nil
	}
}

func toStarlark(v any) starlark.Value {
	switch v := v.(type) {
	case int64:
		return starlark.MakeInt64(v)
	case float64:
		return starlark.Float(v)
	case bool:
		return starlark.Bool(v)
	case string:
		return starlark.String(v)
	}
	return starlark.None
}
