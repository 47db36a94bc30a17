// Package scriptapi holds the plain types of the strategy runtime that
// cross process and package boundaries: a strategy's source and limits,
// its knobs and how an override is checked, its style, the validation
// report and the strategy error with its position. It lets the callers of
// strategy workers (the research API, the agent, the templates) speak
// about strategies without linking the Starlark interpreter.
//
// It never executes, parses or compiles strategy code; strategy/script
// does, and declares these types as aliases of the ones here.
package scriptapi

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Kind classifies an Error.
type Kind string

// Error kinds.
const (
	KindSyntax    Kind = "syntax"    // the source does not parse or refers to undefined names
	KindRuntime   Kind = "runtime"   // an error while running the code
	KindLimit     Kind = "limit"     // a step cap or the wall-clock limit was hit
	KindCanceled  Kind = "canceled"  // the caller cancelled the run
	KindLookahead Kind = "lookahead" // a read of bars after the current one: refused, or caught by the prefix proof
	KindLoad      Kind = "load"      // a forbidden or failing load
	KindKnob      Kind = "knob"      // a bad knob declaration or override
	KindEntry     Kind = "entry"     // missing, conflicting or ill-formed entry points
	KindResult    Kind = "result"    // an entry point returned or asked for something unusable
)

// Error is a strategy failure with its position in the source. Read it
// with errors.As; Problem gives its JSON-friendly form.
type Error struct {
	Kind   Kind   `json:"kind"`
	File   string `json:"file,omitempty"` // the file of the position: the strategy's name, or indicators/<name>.star
	Line   int    `json:"line"`           // 1-based; 0 when there is no position
	Column int    `json:"column"`
	Msg    string `json:"message"`
	Hint   string `json:"hint"`            // one line: what to do next
	Phase  string `json:"phase,omitempty"` // "the top level", "signals", "setup", "on_bar", or "" when not running
	Bar    int    `json:"bar"`             // the bar on_bar was called for, or -1
	// Cause is the underlying error (a Starlark evaluation error); it
	// does not cross the wire.
	Cause error `json:"-"`
}

// Error is "file:line:col: message (in phase at bar N)".
func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d:%d", e.Line, e.Column)
		}
		b.WriteString(": ")
	}
	b.WriteString(e.Message())
	return b.String()
}

// Message is Msg with the phase and bar it happened in.
func (e *Error) Message() string {
	switch {
	case e.Phase != "" && e.Bar >= 0:
		return fmt.Sprintf("%s (in %s at bar %d)", e.Msg, e.Phase, e.Bar)
	case e.Phase != "":
		return fmt.Sprintf("%s (in %s)", e.Msg, e.Phase)
	}
	return e.Msg
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Cause }

// Problem is one reported problem, JSON-friendly.
type Problem struct {
	Kind    Kind   `json:"kind"`
	File    string `json:"file,omitempty"`
	Line    int    `json:"line"`
	Column  int    `json:"column"`
	Message string `json:"message"`
	Hint    string `json:"hint"`
}

// Problem returns e as a Problem.
func (e *Error) Problem() Problem {
	return Problem{Kind: e.Kind, File: e.File, Line: e.Line, Column: e.Column, Message: e.Message(), Hint: e.Hint}
}

// Source is a strategy's text and the name its positions are reported
// under (e.g. "sma_cross.star").
type Source struct {
	Name string
	Text string
}

// Limits bound one strategy's execution. Zero fields take the defaults.
type Limits struct {
	TopSteps     uint64        `json:"top_steps,omitempty"`     // the top level, including loaded indicators
	SignalsSteps uint64        `json:"signals_steps,omitempty"` // one signals(bars) call
	SetupSteps   uint64        `json:"setup_steps,omitempty"`   // one setup(ctx) call
	BarSteps     uint64        `json:"bar_steps,omitempty"`     // each on_bar(ctx) call
	Wall         time.Duration `json:"wall_ns,omitempty"`       // one load, one signals run, or setup through the last on_bar
}

// DefaultLimits are the limits used for zero fields.
var DefaultLimits = Limits{
	TopSteps:     5_000_000,
	SignalsSteps: 5_000_000,
	SetupSteps:   5_000_000,
	BarSteps:     100_000,
	Wall:         2 * time.Minute,
}

// WithDefaults fills l's zero fields from DefaultLimits.
func (l Limits) WithDefaults() Limits {
	d := DefaultLimits
	if l.TopSteps == 0 {
		l.TopSteps = d.TopSteps
	}
	if l.SignalsSteps == 0 {
		l.SignalsSteps = d.SignalsSteps
	}
	if l.SetupSteps == 0 {
		l.SetupSteps = d.SetupSteps
	}
	if l.BarSteps == 0 {
		l.BarSteps = d.BarSteps
	}
	if l.Wall == 0 {
		l.Wall = d.Wall
	}
	return l
}

// Style says which entry points a strategy defines.
type Style string

// The two styles.
const (
	StyleSignals Style = "signals" // signals(bars)
	StyleOnBar   Style = "on_bar"  // setup(ctx) and on_bar(ctx)
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
		return &Error{Kind: KindKnob, Bar: -1, Msg: fmt.Sprintf("knob %s: %s; allowed: %s", k.Name, why, k.Range()), Hint: KnobHint}
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

// Report is the result of Validate, JSON-friendly.
type Report struct {
	Valid   bool   `json:"valid"`
	Style   Style  `json:"style,omitempty"`
	Summary string `json:"summary,omitempty"`
	Knobs   []Knob `json:"knobs"`
	Warmup  int    `json:"warmup"` // bars before every indicator has a value, from the smoke run
	// LookaheadCheck is the lookahead proof's verdict on the smoke run
	// ("passed (4 prefixes)"); empty when the smoke run did not finish.
	LookaheadCheck string `json:"lookahead_check,omitempty"`
	// StartPoint is the start-point check on the smoke run, judging the
	// strategy's own warm-up; nil when the smoke run did not finish.
	StartPoint *StartPoint `json:"start_point,omitempty"`
	Problems   []Problem   `json:"problems"`
	Warnings   []string    `json:"warnings,omitempty"`
	Output     string      `json:"output,omitempty"` // what the strategy printed
}

// KnobHint is the advice attached to a knob error.
const KnobHint = "declare knobs at top level as param.int/float/bool/choice(name, default, ...) and pass overrides within their range"
