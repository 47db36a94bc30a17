package research

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Grid maps a knob name to the values a sweep tries for it.
type Grid map[string]GridSpec

// GridSpec is the values one knob takes in a sweep: a list (Values), or a
// range From..To (both inclusive) by Step. In JSON it is a list
// ([5, 10, 20]), an object ({"from": 5, "to": 50, "step": 5}), or a single
// value (0.5, meaning [0.5]). A range's step defaults to the knob's
// declared step, else 1 for an int knob; a float knob without a declared
// step needs one. Ranges are for int and float knobs only.
type GridSpec struct {
	Values         []any
	From, To, Step *float64
}

// IsRange reports whether g is a range rather than a list.
func (g GridSpec) IsRange() bool { return g.Values == nil }

// MarshalJSON writes a list or a {from, to, step} object.
func (g GridSpec) MarshalJSON() ([]byte, error) {
	if !g.IsRange() {
		return json.Marshal(g.Values)
	}
	return json.Marshal(struct {
		From *float64 `json:"from"`
		To   *float64 `json:"to"`
		Step *float64 `json:"step,omitempty"`
	}{g.From, g.To, g.Step})
}

// UnmarshalJSON reads a list, a {from, to, step} object or a single value.
func (g *GridSpec) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	*g = GridSpec{}
	switch {
	case len(b) > 0 && b[0] == '[':
		var vs []any
		if err := json.Unmarshal(b, &vs); err != nil {
			return fmt.Errorf("a grid list holds numbers, booleans or strings: %w", err)
		}
		if vs == nil {
			vs = []any{}
		}
		for _, v := range vs {
			switch v.(type) {
			case float64, bool, string:
			default:
				return fmt.Errorf("a grid list holds numbers, booleans or strings, not %s", jsonType(v))
			}
		}
		g.Values = vs
	case len(b) > 0 && b[0] == '{':
		var r struct {
			From *float64 `json:"from"`
			To   *float64 `json:"to"`
			Step *float64 `json:"step"`
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			return fmt.Errorf("a grid range is {\"from\": N, \"to\": N, \"step\": N}: %w", err)
		}
		if r.From == nil || r.To == nil {
			return fmt.Errorf("a grid range needs both from and to, e.g. {\"from\": 5, \"to\": 50, \"step\": 5}")
		}
		g.From, g.To, g.Step = r.From, r.To, r.Step
	default:
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		switch v.(type) {
		case float64, bool, string:
			g.Values = []any{v}
		default:
			return fmt.Errorf("a grid entry is a list of values or {\"from\", \"to\", \"step\"}, not %s", jsonType(v))
		}
	}
	return nil
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	}
	return fmt.Sprintf("%T", v)
}

// ParseGridFlag reads a command-line grid entry: KNOB=FROM:TO[:STEP] for a
// range, KNOB=V1,V2,... for a list, or KNOB=V for one value. List values
// stay strings; they are converted by the knob's type when the sweep
// expands the grid.
func ParseGridFlag(s string) (string, GridSpec, error) {
	name, val, ok := strings.Cut(s, "=")
	name, val = strings.TrimSpace(name), strings.TrimSpace(val)
	if !ok || name == "" || val == "" {
		return "", GridSpec{}, fmt.Errorf("grid %q: write KNOB=FROM:TO:STEP (e.g. fast=5:50:5) or KNOB=V1,V2,... (e.g. slow=20,30,50)", s)
	}
	if strings.Contains(val, ":") {
		parts := strings.Split(val, ":")
		if len(parts) < 2 || len(parts) > 3 {
			return "", GridSpec{}, fmt.Errorf("grid %s: a range is FROM:TO or FROM:TO:STEP, got %q", name, val)
		}
		nums := make([]*float64, 3)
		for i, p := range parts {
			f, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
				return "", GridSpec{}, fmt.Errorf("grid %s: %q in %q is not a number", name, p, val)
			}
			nums[i] = &f
		}
		return name, GridSpec{From: nums[0], To: nums[1], Step: nums[2]}, nil
	}
	var vs []any
	for p := range strings.SplitSeq(val, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			return "", GridSpec{}, fmt.Errorf("grid %s: empty value in %q", name, val)
		}
		vs = append(vs, p)
	}
	return name, GridSpec{Values: vs}, nil
}

// Length is a walk-forward window length: a number of bars, or a calendar
// duration converted to bars by the series' granularity. In JSON it is a
// number (bars) or a string: a duration with a unit m, h, d or w ("180d",
// "4320h", "26w") or a plain count of bars ("500").
type Length struct {
	Bars     int
	Duration time.Duration
}

// IsZero reports whether no length was given.
func (l Length) IsZero() bool { return l.Bars == 0 && l.Duration == 0 }

// String writes a length the way ParseLength reads it.
func (l Length) String() string {
	switch {
	case l.Duration == 0:
		return strconv.Itoa(l.Bars)
	case l.Duration%(7*24*time.Hour) == 0:
		return fmt.Sprintf("%dw", l.Duration/(7*24*time.Hour))
	case l.Duration%(24*time.Hour) == 0:
		return fmt.Sprintf("%dd", l.Duration/(24*time.Hour))
	case l.Duration%time.Hour == 0:
		return fmt.Sprintf("%dh", l.Duration/time.Hour)
	}
	return fmt.Sprintf("%dm", l.Duration/time.Minute)
}

// MarshalJSON writes bars as a number and a duration as a string.
func (l Length) MarshalJSON() ([]byte, error) {
	if l.Duration == 0 {
		return json.Marshal(l.Bars)
	}
	return json.Marshal(l.String())
}

// UnmarshalJSON reads a number of bars or a string (see ParseLength).
func (l *Length) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	switch v := v.(type) {
	case float64:
		if v != math.Trunc(v) || v < 1 || v > math.MaxInt32 {
			return fmt.Errorf("a window length in bars is a whole number of at least 1, not %v", v)
		}
		*l = Length{Bars: int(v)}
		return nil
	case string:
		p, err := ParseLength(v)
		if err != nil {
			return err
		}
		*l = p
		return nil
	}
	return fmt.Errorf("a window length is a number of bars or a duration string like \"180d\", not %s", jsonType(v))
}

// ParseLength reads "500" (bars) or a duration with a unit m (minutes),
// h (hours), d (days) or w (weeks): "180d", "4320h".
func ParseLength(s string) (Length, error) {
	s = strings.TrimSpace(s)
	bad := fmt.Errorf("window length %q: give a number of bars (500) or a duration with a unit m, h, d or w (180d, 4320h, 26w)", s)
	if s == "" {
		return Length{}, bad
	}
	units := map[byte]time.Duration{'m': time.Minute, 'h': time.Hour, 'd': 24 * time.Hour, 'w': 7 * 24 * time.Hour}
	unit, isDuration := units[s[len(s)-1]]
	num := s
	if isDuration {
		num = s[:len(s)-1]
	}
	n, err := strconv.Atoi(num)
	if err != nil || n < 1 || n > math.MaxInt32 {
		return Length{}, bad
	}
	if !isDuration {
		return Length{Bars: n}, nil
	}
	if time.Duration(n) > math.MaxInt64/unit {
		return Length{}, bad
	}
	return Length{Duration: time.Duration(n) * unit}, nil
}

// barsOf converts l to bars of length bar (rounding a duration down).
func (l Length) barsOf(bar time.Duration) int {
	if l.Duration == 0 {
		return l.Bars
	}
	return int(l.Duration / bar)
}
