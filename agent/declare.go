package agent

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"wicket/internal/intrabar"
	"wicket/strategy/ledger"
	"wicket/strategy/research"
)

// A tool's arguments are declared once, as a struct: each field's json
// name is the argument, its desc tag the description, and its arg tag the
// rest — required, default=V, min=V, max=V, enum=a|b, clamp (a value over
// max is clamped and the result says so), schema=NAME and shape=NAME (a
// named JSON schema and its words, for unions). A value may name a
// constant as $name (argConsts), so a bound the engine also reads is
// written once. From the struct come the input schema (paramsOf), the
// defaults, the bounds and the decoding (decodeArgs), so none of them can
// drift from another.
//
//	type listArgs struct {
//		Limit int `json:"limit" desc:"how many at most" arg:"default=$defaultListLimit,min=1,max=$maxListLimit,clamp"`
//	}

// argConsts are the constants arg tags may name.
var argConsts = map[string]any{
	"defaultListLimit":      defaultListLimit,
	"defaultHistoryLimit":   defaultHistoryLimit,
	"maxListLimit":          maxListLimit,
	"maxCostBps":            maxCostBps,
	"defaultTop":            research.DefaultTop,
	"maxTop":                research.MaxTop,
	"maxWindows":            research.MaxWindows,
	"rankSharpe":            research.RankSharpe,
	"rankMetrics":           strings.Join(research.RankMetrics, "|"),
	"intrabarRules":         strings.Join(intrabar.Rules, "|"),
	"ledgerKinds":           strings.Join(ledger.Kinds, "|"),
	"deflateScopes":         strings.Join(ledger.Scopes, "|"),
	"scopeSeries":           ledger.ScopeSeries,
	"defaultAnswerTrades":   defaultAnswerTrades,
	"maxAnswerTrades":       maxAnswerTrades,
	"defaultSnapshotEvents": defaultSnapshotEvents,
}

// argSchemas are the named schemas of union-typed arguments, and
// argShapes their words for errors.
var (
	argSchemas = map[string]map[string]any{
		"decimal": {"type": []string{"string", "number"}},
		"grid":    {"type": "object"}, // its values' shape is in the description and argShapes
		"length":  {"type": []string{"string", "integer"}},
		"costs":   {"type": "object"},
	}
	argShapes = map[string]string{
		"decimal": "a decimal (a string like \"10000\")",
		"grid":    "an object mapping each knob to a list of values or to {from, to, step}",
		"length":  lengthShape,
		"knobs":   "an object mapping knob names to values",
		"costs":   "an object of funding, borrow_rate, leverage, maintenance_margin, max_volume_pct, volume_cap",
	}
)

// decimalText is a decimal argument given as a JSON string or number,
// kept as its exact text.
type decimalText string

// argField is one declared argument.
type argField struct {
	index []int
	param param
	clamp bool
}

type argDecl struct {
	params []param
	fields []argField
}

var argDecls sync.Map // reflect.Type → *argDecl

// declOf reads T's declaration once. A malformed tag is a programming
// error and panics (a test builds every tool).
func declOf(t reflect.Type) *argDecl {
	if d, ok := argDecls.Load(t); ok {
		return d.(*argDecl)
	}
	d := &argDecl{}
	collectArgs(t, nil, d)
	argDecls.Store(t, d)
	return d
}

func collectArgs(t reflect.Type, prefix []int, d *argDecl) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		idx := append(append([]int(nil), prefix...), i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			collectArgs(f.Type, idx, d)
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		p := param{Name: name, Description: f.Tag.Get("desc")}
		af := argField{index: idx}
		p.Type = jsonType(f.Type)
		for _, opt := range strings.Split(f.Tag.Get("arg"), ",") {
			key, val, _ := strings.Cut(strings.TrimSpace(opt), "=")
			val = argConst(val)
			switch key {
			case "":
			case "required":
				p.Required = true
			case "clamp":
				af.clamp = true
			case "default":
				p.Default = typedValue(f.Type, val)
			case "min":
				p.Min = num(mustFloat(val))
			case "max":
				p.Max = num(mustFloat(val))
			case "enum":
				p.Enum = strings.Split(val, "|")
			case "schema":
				s, ok := argSchemas[val]
				if !ok {
					panic("agent: unknown arg schema " + val)
				}
				p.Schema, p.Shape = s, argShapes[val]
			case "shape":
				p.Shape = argShapes[val]
			default:
				panic(fmt.Sprintf("agent: field %s: unknown arg option %q", f.Name, key))
			}
		}
		af.param = p
		d.params = append(d.params, p)
		d.fields = append(d.fields, af)
	}
}

func argConst(v string) string {
	name, ok := strings.CutPrefix(v, "$")
	if !ok {
		return v
	}
	c, found := argConsts[name]
	if !found {
		panic("agent: unknown arg constant $" + name)
	}
	return fmt.Sprint(c)
}

func mustFloat(v string) float64 {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		panic("agent: arg bound " + v + " is not a number")
	}
	return f
}

var decimalType = reflect.TypeFor[decimalText]()

// jsonType is the schema type of a Go field type ("" for a named schema).
func jsonType(t reflect.Type) string {
	if t == decimalType {
		return ""
	}
	switch t.Kind() {
	case reflect.Pointer:
		return jsonType(t.Elem())
	case reflect.String:
		return "string"
	case reflect.Int, reflect.Int64:
		return "integer"
	case reflect.Float64:
		return "number"
	case reflect.Bool:
		return "boolean"
	case reflect.Map:
		return "object"
	case reflect.Slice:
		return "array"
	}
	return ""
}

func typedValue(t reflect.Type, v string) any {
	switch jsonType(t) {
	case "integer":
		n, err := strconv.Atoi(v)
		if err != nil {
			panic("agent: default " + v + " is not an integer")
		}
		return n
	case "number":
		return mustFloat(v)
	case "boolean":
		return v == "true"
	}
	return v
}

// paramsOf is the declared arguments of T, for the input schema.
func paramsOf[T any]() []param { return declOf(reflect.TypeFor[T]()).params }

// decodeArgs fills dst (a pointer to a declared struct) from a call's
// arguments: defaults for what is absent, types and bounds checked with
// errors in the schema's words. clamped names the arguments a clamp
// lowered to their maximum.
func decodeArgs(a args, dst any) (clamped map[string]int, err error) {
	v := reflect.ValueOf(dst).Elem()
	d := declOf(v.Type())
	for _, f := range d.fields {
		p := f.param
		fv := v.FieldByIndex(f.index)
		switch {
		case fv.Type() == decimalType:
			s, err := a.decimalText(p.Name, "")
			if err != nil {
				return nil, err
			}
			fv.SetString(s)
		case fv.Kind() == reflect.String:
			def, _ := p.Default.(string)
			s, err := a.str(p.Name, def)
			if err != nil {
				return nil, err
			}
			if len(p.Enum) > 0 && s != "" && !contains(p.Enum, s) {
				return nil, fmt.Errorf("argument %q is %q; valid: %s", p.Name, s, strings.Join(p.Enum, ", "))
			}
			fv.SetString(s)
		case fv.Kind() == reflect.Bool:
			def, _ := p.Default.(bool)
			b, err := a.boolean(p.Name, def)
			if err != nil {
				return nil, err
			}
			fv.SetBool(b)
		case fv.Kind() == reflect.Int:
			def, _ := p.Default.(int)
			lo, hi := -1<<31, 1<<31-1
			if p.Min != nil {
				lo = int(*p.Min)
			}
			if p.Max != nil && !f.clamp {
				hi = int(*p.Max)
			}
			n, err := a.integer(p.Name, def, lo, hi)
			if err != nil {
				return nil, err
			}
			if f.clamp && p.Max != nil && n > int(*p.Max) {
				n = int(*p.Max)
				if clamped == nil {
					clamped = map[string]int{}
				}
				clamped[p.Name] = n
			}
			fv.SetInt(int64(n))
		case fv.Kind() == reflect.Pointer && fv.Type().Elem().Kind() == reflect.Float64:
			if !a.has(p.Name) {
				continue
			}
			var x float64
			if err := a.object(p.Name, p.shape(), &x); err != nil {
				return nil, err
			}
			if (p.Min != nil && x < *p.Min) || (p.Max != nil && x > *p.Max) {
				return nil, fmt.Errorf("argument %q is %v; allowed range %v..%v", p.Name, x, *p.Min, *p.Max)
			}
			fv.Set(reflect.ValueOf(&x))
		default:
			if err := a.object(p.Name, p.shape(), fv.Addr().Interface()); err != nil {
				return nil, err
			}
		}
	}
	return clamped, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
