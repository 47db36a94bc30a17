package optimize

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Kind is how a dimension's values are laid out.
type Kind int

// The kinds of dimension.
const (
	KindInt   Kind = iota // whole numbers From..To by Step
	KindFloat             // numbers From..To by Step, or continuous when Step is 0
	KindList              // a list of values, unordered
)

func (k Kind) String() string {
	switch k {
	case KindInt:
		return "int"
	case KindFloat:
		return "float"
	case KindList:
		return "list"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Dim is one knob of a search space. An int or float range is inclusive
// of From and To; a float range with Step 0 is continuous.
type Dim struct {
	Name           string
	Kind           Kind
	From, To, Step float64
	Values         []any // KindList only
}

// Int is the whole numbers from..to by step.
func Int(name string, from, to, step int64) Dim {
	return Dim{Name: name, Kind: KindInt, From: float64(from), To: float64(to), Step: float64(step)}
}

// Float is the numbers from..to by step, or every number between them
// when step is 0.
func Float(name string, from, to, step float64) Dim {
	return Dim{Name: name, Kind: KindFloat, From: from, To: to, Step: step}
}

// List is a choice among values (numbers, booleans or strings).
func List(name string, values ...any) Dim {
	return Dim{Name: name, Kind: KindList, Values: values}
}

// MaxLevels bounds one dimension's number of values.
const MaxLevels = 1_000_000

// levels is the number of values of d, 0 for a continuous range.
func (d Dim) levels() int {
	switch d.Kind {
	case KindList:
		return len(d.Values)
	case KindFloat:
		if d.Step == 0 {
			return 0
		}
	}
	return int(math.Floor((d.To-d.From)/d.Step+1e-9)) + 1
}

func (d Dim) check() error {
	if d.Name == "" {
		return errors.New("a dimension needs a name (the knob it sets)")
	}
	switch d.Kind {
	case KindList:
		if len(d.Values) == 0 {
			return fmt.Errorf("%s: the list is empty; give at least one value", d.Name)
		}
		seen := map[string]bool{}
		for _, v := range d.Values {
			switch v.(type) {
			case bool, string, int, int64, float64:
			default:
				return fmt.Errorf("%s: a list holds numbers, booleans or strings, not %T", d.Name, v)
			}
			k := valueKey(v)
			if seen[k] {
				return fmt.Errorf("%s: the value %v is listed twice", d.Name, v)
			}
			seen[k] = true
		}
		return nil
	case KindInt, KindFloat:
	default:
		return fmt.Errorf("%s: unknown kind %v", d.Name, d.Kind)
	}
	for _, x := range []float64{d.From, d.To, d.Step} {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("%s: from, to and step must be finite numbers", d.Name)
		}
	}
	switch {
	case d.From > d.To:
		return fmt.Errorf("%s: from %s is above to %s", d.Name, fmtNum(d.From), fmtNum(d.To))
	case d.Step < 0 || (d.Kind == KindInt && d.Step == 0):
		return fmt.Errorf("%s: step %s must be positive", d.Name, fmtNum(d.Step))
	case d.Kind == KindInt && (d.From != math.Trunc(d.From) || d.To != math.Trunc(d.To) || d.Step != math.Trunc(d.Step)):
		return fmt.Errorf("%s: an int range needs whole from, to and step", d.Name)
	}
	if d.Step > 0 && (d.To-d.From)/d.Step+1 > MaxLevels {
		return fmt.Errorf("%s: from %s to %s by %s is more than %d values; coarsen the step", d.Name, fmtNum(d.From), fmtNum(d.To), fmtNum(d.Step), MaxLevels)
	}
	return nil
}

// Space is the knobs an optimiser searches, in a fixed order.
type Space struct {
	dims   []Dim
	levels []int // per dim; 0 is continuous
	byName map[string]int
}

// NewSpace checks the dimensions and builds a space of them.
func NewSpace(dims ...Dim) (*Space, error) {
	if len(dims) == 0 {
		return nil, errors.New("the space has no dimensions; give at least one knob to search")
	}
	s := &Space{byName: map[string]int{}}
	for i, d := range dims {
		if err := d.check(); err != nil {
			return nil, err
		}
		if _, dup := s.byName[d.Name]; dup {
			return nil, fmt.Errorf("%s: the knob is given twice", d.Name)
		}
		s.byName[d.Name] = i
		d.Values = append([]any(nil), d.Values...)
		s.dims = append(s.dims, d)
		s.levels = append(s.levels, d.levels())
	}
	return s, nil
}

// Dims returns the space's dimensions in order.
func (s *Space) Dims() []Dim { return append([]Dim(nil), s.dims...) }

// Size is the number of distinct points, +Inf when a dimension is
// continuous.
func (s *Space) Size() float64 {
	n := 1.0
	for _, l := range s.levels {
		if l == 0 {
			return math.Inf(1)
		}
		n *= float64(l)
	}
	return n
}

// Point is one setting of every knob of a space, by name.
type Point map[string]any

// value of dimension i at unit coordinate u in [0, 1].
func (s *Space) value(i int, u float64) any {
	d, n := s.dims[i], s.levels[i]
	if n == 0 {
		return d.From + clamp01(u)*(d.To-d.From)
	}
	k := s.level(i, u)
	switch d.Kind {
	case KindList:
		return d.Values[k]
	case KindInt:
		return int64(d.From) + int64(k)*int64(d.Step)
	}
	return roundStep(d.From + float64(k)*d.Step)
}

// level is the index of the bin of u in dimension i's values.
func (s *Space) level(i int, u float64) int {
	n := s.levels[i]
	return min(max(int(math.Floor(clamp01(u)*float64(n))), 0), n-1)
}

// centre is the unit coordinate of level k of dimension i.
func (s *Space) centre(i, k int) float64 { return (float64(k) + 0.5) / float64(s.levels[i]) }

// snap moves u to the centre of its level (continuous dims: clamps it).
func (s *Space) snap(u []float64) []float64 {
	out := make([]float64, len(u))
	for i, x := range u {
		if s.levels[i] == 0 {
			out[i] = clamp01(x)
		} else {
			out[i] = s.centre(i, s.level(i, x))
		}
	}
	return out
}

// decode turns unit coordinates into a point.
func (s *Space) decode(u []float64) Point {
	p := make(Point, len(s.dims))
	for i, d := range s.dims {
		p[d.Name] = s.value(i, u[i])
	}
	return p
}

// key identifies the point at u: equal keys are the same point.
func (s *Space) key(u []float64) string {
	var b strings.Builder
	for i, x := range u {
		if i > 0 {
			b.WriteByte(',')
		}
		if s.levels[i] == 0 {
			b.WriteString(strconv.FormatFloat(s.value(i, x).(float64), 'g', -1, 64))
		} else {
			b.WriteString(strconv.Itoa(s.level(i, x)))
		}
	}
	return b.String()
}

// encode turns a point into unit coordinates (level centres), refusing a
// point that is not in the space.
func (s *Space) encode(p Point) ([]float64, error) {
	for name := range p {
		if _, ok := s.byName[name]; !ok {
			return nil, fmt.Errorf("the point sets %q, which is not a knob of this space (%s)", name, strings.Join(s.names(), ", "))
		}
	}
	u := make([]float64, len(s.dims))
	for i, d := range s.dims {
		v, ok := p[d.Name]
		if !ok {
			return nil, fmt.Errorf("the point does not set %s; every knob of the space needs a value", d.Name)
		}
		if d.Kind == KindList {
			k := -1
			for j, w := range d.Values {
				if valueKey(w) == valueKey(v) {
					k = j
					break
				}
			}
			if k < 0 {
				return nil, fmt.Errorf("%s: %v is not one of the listed values", d.Name, v)
			}
			u[i] = s.centre(i, k)
			continue
		}
		x, ok := number(v)
		if !ok {
			return nil, fmt.Errorf("%s: %v (%T) is not a number", d.Name, v, v)
		}
		if x < d.From-1e-9*math.Max(1, math.Abs(d.From)) || x > d.To+1e-9*math.Max(1, math.Abs(d.To)) {
			return nil, fmt.Errorf("%s: %s is outside %s..%s", d.Name, fmtNum(x), fmtNum(d.From), fmtNum(d.To))
		}
		if s.levels[i] == 0 {
			if d.To == d.From {
				u[i] = 0.5
			} else {
				u[i] = clamp01((x - d.From) / (d.To - d.From))
			}
			continue
		}
		f := (x - d.From) / d.Step
		k := math.Round(f)
		if math.Abs(f-k) > 1e-6 || int(k) >= s.levels[i] {
			return nil, fmt.Errorf("%s: %s is not on the grid %s..%s by %s", d.Name, fmtNum(x), fmtNum(d.From), fmtNum(d.To), fmtNum(d.Step))
		}
		u[i] = s.centre(i, int(k))
	}
	return u, nil
}

func (s *Space) names() []string {
	out := make([]string, len(s.dims))
	for i, d := range s.dims {
		out[i] = d.Name
	}
	return out
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// valueKey compares list values across Go types (a JSON 5 is a float64,
// a script's 5 an int64).
func valueKey(v any) string {
	if x, ok := number(v); ok {
		return "n" + strconv.FormatFloat(x, 'g', -1, 64)
	}
	return fmt.Sprintf("%T:%v", v, v)
}

func clamp01(x float64) float64 {
	if math.IsNaN(x) {
		return 0.5
	}
	return math.Min(math.Max(x, 0), 1)
}

// roundStep removes the binary noise of from + i*step.
func roundStep(x float64) float64 {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 12, 64), 64)
	return r
}

func fmtNum(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
