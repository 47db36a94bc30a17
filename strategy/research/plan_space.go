package research

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// A plan's search space binds its trials (strategy.md, "Research plans"):
// a sweep, optimisation or walk-forward under a plan that sealed a grid
// may try only the knobs of that grid, each within it. Checked on the
// request, before any trial runs or is counted:
//
//   - every knob the request sweeps must be one of the plan's;
//   - against a plan's list, every value the request tries (a list, or a
//     range with a step, expanded) must be one of the list's;
//   - against a plan's range from..to, every value must lie within it
//     and, when the plan gave a step, on its steps from `from`;
//   - a range the request gives without a step is checked by its ends
//     within a plan's range without a step, and refused against a
//     plan's list or stepped range (its values are the knob's to say);
//   - a knob of the plan's grid that the request fixes (params) must hold
//     a value the plan's grid has, the same way.
//
// Knobs outside the plan's grid may be fixed; a plan without a grid
// binds no space.

// maxSpaceValues bounds a range expanded for the check.
const maxSpaceValues = 1_000_000

// spaceTolerance absorbs float steps (0.1 + 0.2) when matching values.
const spaceTolerance = 1e-9

// inSpace refuses grid or params reaching outside the gate's plan's grid.
func (g *planGate) inSpace(grid Grid, params map[string]any) error {
	if g == nil || g.plan == nil || len(g.plan.Spec.Grid) == 0 {
		return nil
	}
	var space Grid
	if err := json.Unmarshal(g.plan.Spec.Grid, &space); err != nil || len(space) == 0 {
		return nil // a plan row the ledger keeps but this reader cannot parse binds no space it can check
	}
	name := g.plan.Spec.Name
	knobs := make([]string, 0, len(grid))
	for k := range grid {
		knobs = append(knobs, k)
	}
	slices.Sort(knobs)
	for _, k := range knobs {
		s, ok := space[k]
		if !ok {
			return errorf(KindInvalid, "plan %q's grid has no knob %s (its knobs: %s): a trial under the plan sweeps only those; seal a new plan to search %s",
				name, k, strings.Join(sortedKnobs(space), ", "), k)
		}
		if r := grid[k]; r.IsRange() && r.Step == nil && (!s.IsRange() || s.Step != nil) {
			return errorf(KindInvalid, "knob %s's range %s under plan %q gives no step, so its values cannot be checked against the plan's grid for it (%s): give the step, or list the values",
				k, specText(r), name, specText(s))
		}
		vals, err := valuesOf(grid[k])
		if err != nil {
			return errorf(KindInvalid, "knob %s under plan %q (grid %s): %v", k, name, specText(s), err)
		}
		for _, v := range vals {
			if !s.holds(v) {
				return errorf(KindInvalid, "knob %s=%s is outside plan %q's grid for it (%s): a trial under the plan stays in the space it sealed; narrow the grid to %s",
					k, valueText(v), name, specText(s), specText(s))
			}
		}
	}
	for k, v := range params {
		if s, ok := space[k]; ok && !s.holds(v) {
			return errorf(KindInvalid, "knob %s=%s (fixed) is outside plan %q's grid for it (%s): fix it within %s or sweep it",
				k, valueText(v), name, specText(s), specText(s))
		}
	}
	return nil
}

// valuesOf lists the values a request's spec tries: its list, or its
// range expanded by its step; a range without a step (its knob's step
// applies) only by its ends, which suffices within a plan's range
// without a step (inSpace refuses it against any other).
func valuesOf(s GridSpec) ([]any, error) {
	if !s.IsRange() {
		return s.Values, nil
	}
	from, to := *s.From, *s.To
	if s.Step == nil {
		return []any{from, to}, nil
	}
	step := *s.Step
	if !(step > 0) {
		return nil, fmt.Errorf("step %v must be positive", step)
	}
	n := math.Floor((to-from)/step + spaceTolerance)
	if n > maxSpaceValues {
		return nil, fmt.Errorf("the range %v..%v by %v has too many values", from, to, step)
	}
	out := make([]any, 0, int(n)+1)
	for i := 0.0; i <= n; i++ {
		out = append(out, from+i*step)
	}
	return out, nil
}

// holds reports whether the plan's spec s has the value v.
func (s GridSpec) holds(v any) bool {
	if !s.IsRange() {
		for _, w := range s.Values {
			if sameValue(v, w) {
				return true
			}
		}
		return false
	}
	x, ok := number(v)
	if !ok {
		return false
	}
	lo, hi := *s.From, *s.To
	tol := spaceTolerance * math.Max(1, math.Max(math.Abs(lo), math.Abs(hi)))
	if x < lo-tol || x > hi+tol {
		return false
	}
	if s.Step == nil || !(*s.Step > 0) {
		return true
	}
	k := (x - lo) / *s.Step
	return math.Abs(k-math.Round(k)) <= spaceTolerance*math.Max(1, math.Abs(k))
}

// sameValue compares grid values as the knob would read them: numbers
// (and numeric strings, as the command line gives them) by value, other
// values by their text.
func sameValue(a, b any) bool {
	x, xok := number(a)
	y, yok := number(b)
	if xok && yok {
		return math.Abs(x-y) <= spaceTolerance*math.Max(1, math.Abs(y))
	}
	return valueText(a) == valueText(b)
}

// number reads v as a number: a JSON number, an integer, or a numeric
// string.
func number(v any) (float64, bool) {
	switch v := v.(type) {
	case float64:
		return v, true
	case int:
		return float64(v), true
	case int64:
		return float64(v), true
	case json.Number:
		f, err := v.Float64()
		return f, err == nil
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		return f, err == nil && !math.IsNaN(f) && !math.IsInf(f, 0)
	}
	return 0, false
}

func valueText(v any) string {
	if f, ok := v.(float64); ok {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return fmt.Sprint(v)
}

// specText writes a plan's spec for a knob: [5, 10, 20] or 5..50 step 5.
func specText(s GridSpec) string {
	if !s.IsRange() {
		parts := make([]string, len(s.Values))
		for i, v := range s.Values {
			parts[i] = valueText(v)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	t := valueText(*s.From) + ".." + valueText(*s.To)
	if s.Step != nil {
		t += " step " + valueText(*s.Step)
	}
	return t
}

func sortedKnobs(g Grid) []string {
	out := make([]string, 0, len(g))
	for k := range g {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
