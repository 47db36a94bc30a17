package script

import "wicket/strategy/scriptapi"

// The runtime's plain types are declared in strategy/scriptapi, which the
// callers of workers import without linking Starlark; these are the same
// types under their names here.
type (
	Kind     = scriptapi.Kind
	Error    = scriptapi.Error
	Problem  = scriptapi.Problem
	Source   = scriptapi.Source
	Limits   = scriptapi.Limits
	Style    = scriptapi.Style
	KnobType = scriptapi.KnobType
	Knob     = scriptapi.Knob
	Report   = scriptapi.Report
)

// Error kinds, knob types and styles (see scriptapi).
const (
	KindSyntax    = scriptapi.KindSyntax
	KindRuntime   = scriptapi.KindRuntime
	KindLimit     = scriptapi.KindLimit
	KindCanceled  = scriptapi.KindCanceled
	KindLookahead = scriptapi.KindLookahead
	KindLoad      = scriptapi.KindLoad
	KindKnob      = scriptapi.KindKnob
	KindEntry     = scriptapi.KindEntry
	KindResult    = scriptapi.KindResult

	KnobInt    = scriptapi.KnobInt
	KnobFloat  = scriptapi.KnobFloat
	KnobBool   = scriptapi.KnobBool
	KnobChoice = scriptapi.KnobChoice

	StyleSignals = scriptapi.StyleSignals
	StyleOnBar   = scriptapi.StyleOnBar
)

// DefaultLimits are the limits used for zero fields (scriptapi.DefaultLimits).
var DefaultLimits = scriptapi.DefaultLimits

// CheckOverrides is scriptapi.CheckOverrides.
func CheckOverrides(knobs []Knob, overrides map[string]any) (map[string]any, error) {
	return scriptapi.CheckOverrides(knobs, overrides)
}

// ParseAssignments is scriptapi.ParseAssignments.
func ParseAssignments(args []string) (map[string]any, error) {
	return scriptapi.ParseAssignments(args)
}
