package script

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// KnobType is the type of a knob.
type KnobType string

// Knob types, one per param.* function.
const (
	KnobInt    KnobType = "int"
	KnobFloat  KnobType = "float"
	KnobBool   KnobType = "bool"
	KnobChoice KnobType = "choice"
)

// Knob is a strategy parameter declared with param.int/float/bool/choice.
// Default is an int64, float64, bool or string by Type. Min, Max and Step
// are set for int and float knobs when declared; Choices for choice knobs.
type Knob struct {
	Name    string   `json:"name"`
	Type    KnobType `json:"type"`
	Default any      `json:"default"`
	Min     *float64 `json:"min,omitempty"`
	Max     *float64 `json:"max,omitempty"`
	Step    *float64 `json:"step,omitempty"`
	Choices []string `json:"choices,omitempty"`
	Doc     string   `json:"doc,omitempty"`
}

// UnmarshalJSON restores Default's Go type (JSON numbers decode as float64).
func (k *Knob) UnmarshalJSON(b []byte) error {
	type plain Knob
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	if f, ok := p.Default.(float64); ok && p.Type == KnobInt {
		p.Default = int64(f)
	}
	*k = Knob(p)
	return nil
}

// Range describes the knob's allowed values in words, for errors.
func (k Knob) Range() string {
	switch k.Type {
	case KnobBool:
		return "true or false"
	case KnobChoice:
		return "one of " + strings.Join(k.Choices, ", ")
	}
	lo, hi := "-inf", "+inf"
	if k.Min != nil {
		lo = fmtNum(*k.Min)
	}
	if k.Max != nil {
		hi = fmtNum(*k.Max)
	}
	kind := "a number"
	if k.Type == KnobInt {
		kind = "a whole number"
	}
	return fmt.Sprintf("%s in [%s, %s]", kind, lo, hi)
}

func fmtNum(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// Check validates one override value for the knob and returns it in the
// knob's Go type (int64, float64, bool or string). v may be any JSON-decoded
// value, a Go number, or a string as typed on a command line.
func (k Knob) Check(v any) (any, error) {
	bad := func(why string) error {
		return &Error{Kind: KindKnob, Bar: -1, Msg: fmt.Sprintf("knob %s: %s; allowed: %s", k.Name, why, k.Range()), Hint: hintFor(&Error{Kind: KindKnob})}
	}
	if s, ok := v.(string); ok && k.Type != KnobChoice {
		switch k.Type {
		case KnobBool:
			b, err := strconv.ParseBool(s)
			if err != nil {
				return nil, bad(fmt.Sprintf("%q is not true or false", s))
			}
			v = b
		default:
			f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil {
				return nil, bad(fmt.Sprintf("%q is not a number", s))
			}
			v = f
		}
	}
	switch k.Type {
	case KnobBool:
		b, ok := v.(bool)
		if !ok {
			return nil, bad(fmt.Sprintf("%v is not true or false", v))
		}
		return b, nil
	case KnobChoice:
		s, ok := v.(string)
		if !ok {
			return nil, bad(fmt.Sprintf("%v is not a string", v))
		}
		for _, c := range k.Choices {
			if c == s {
				return s, nil
			}
		}
		return nil, bad(fmt.Sprintf("%q is not a choice", s))
	}
	f, ok := toFloat(v)
	if !ok {
		return nil, bad(fmt.Sprintf("%v (%T) is not a number", v, v))
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, bad(fmt.Sprintf("%v is not finite", f))
	}
	if k.Type == KnobInt && f != math.Trunc(f) {
		return nil, bad(fmt.Sprintf("%v is not a whole number", f))
	}
	if (k.Min != nil && f < *k.Min) || (k.Max != nil && f > *k.Max) {
		return nil, bad(fmt.Sprintf("%s is out of range", fmtNum(f)))
	}
	if k.Type == KnobInt {
		return int64(f), nil
	}
	return f, nil
}

func toFloat(v any) (float64, bool) {
	switch v := v.(type) {
	case float64:
		return v, true
	case float32:
		return float64(v), true
	case int:
		return float64(v), true
	case int64:
		return float64(v), true
	case int32:
		return float64(v), true
	case json.Number:
		f, err := v.Float64()
		return f, err == nil
	}
	return 0, false
}

// CheckOverrides validates overrides against knobs: every name must be a
// knob, every value of its type and in its range. It returns the values in
// their Go types. Errors name the knob and the allowed values.
func CheckOverrides(knobs []Knob, overrides map[string]any) (map[string]any, error) {
	byName := make(map[string]Knob, len(knobs))
	for _, k := range knobs {
		byName[k.Name] = k
	}
	names := make([]string, 0, len(overrides))
	for n := range overrides {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make(map[string]any, len(overrides))
	for _, n := range names {
		k, ok := byName[n]
		if !ok {
			return nil, &Error{Kind: KindKnob, Bar: -1, Msg: fmt.Sprintf("unknown knob %q; this strategy's knobs are: %s", n, knobNames(knobs)),
				Hint: "list the knobs with `wicket strategy params` (or the params tool)"}
		}
		v, err := k.Check(overrides[n])
		if err != nil {
			return nil, err
		}
		out[n] = v
	}
	return out, nil
}

// ParseAssignments turns command-line "name=value" pairs into overrides.
// Values stay strings: CheckOverrides converts them by knob type.
func ParseAssignments(args []string) (map[string]any, error) {
	out := make(map[string]any, len(args))
	for _, a := range args {
		name, val, ok := strings.Cut(a, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, fmt.Errorf("knob override %q: write name=value, e.g. fast=10", a)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("knob %s is set twice", name)
		}
		out[name] = val
	}
	return out, nil
}

func knobNames(knobs []Knob) string {
	if len(knobs) == 0 {
		return "(none)"
	}
	names := make([]string, len(knobs))
	for i, k := range knobs {
		names[i] = k.Name
	}
	return strings.Join(names, ", ")
}

var knobName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)

// params records knob declarations while a strategy's top level runs and
// answers each with the override or the default.
type params struct {
	overrides map[string]any // raw, checked when the knob is declared
	knobs     []Knob
	open      bool // only the top level may declare knobs
}

func (p *params) module() *starlarkstruct.Module {
	return &starlarkstruct.Module{Name: "param", Members: starlark.StringDict{
		"int":    starlark.NewBuiltin("param.int", p.declare(KnobInt)),
		"float":  starlark.NewBuiltin("param.float", p.declare(KnobFloat)),
		"bool":   starlark.NewBuiltin("param.bool", p.declare(KnobBool)),
		"choice": starlark.NewBuiltin("param.choice", p.declare(KnobChoice)),
	}}
}

func (p *params) declare(t KnobType) func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
	return func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		knobErr := func(format string, a ...any) error {
			return &Error{Kind: KindKnob, Bar: -1, Msg: b.Name() + ": " + fmt.Sprintf(format, a...)}
		}
		if !p.open {
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
		if !knobName.MatchString(name) {
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
