package research

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"wicket/strategy/optimize"
	"wicket/strategy/scriptapi"
	"wicket/strategy/worker"
)

// searchSpace maps a plan's grid onto an optimiser's space: each swept
// knob is a dimension over the indexes of its checked values.
type searchSpace struct {
	space *optimize.Space
	index []map[string]int64 // per swept knob: fmt.Sprint(value) -> index
	text  string
}

func newSearchSpace(p *plan, grid Grid) (*searchSpace, error) {
	s := &searchSpace{}
	dims := make([]optimize.Dim, len(p.swept))
	parts := make([]string, len(p.swept))
	for i, name := range p.swept {
		n := len(p.axes[i])
		idx := make(map[string]int64, n)
		words := make([]string, n)
		for k, v := range p.axes[i] {
			idx[fmt.Sprint(v)] = int64(k)
			words[k] = fmt.Sprint(v)
		}
		s.index = append(s.index, idx)
		if grid[name].IsRange() {
			dims[i] = optimize.Int(name, 0, int64(n-1), 1)
		} else {
			vals := make([]any, n)
			for k := range vals {
				vals[k] = int64(k)
			}
			dims[i] = optimize.List(name, vals...)
		}
		kind := "range"
		if !grid[name].IsRange() {
			kind = "list"
		}
		parts[i] = fmt.Sprintf("%s %s [%s]", name, kind, strings.Join(words, ","))
	}
	sp, err := optimize.NewSpace(dims...)
	if err != nil {
		return nil, errorf(KindInvalid, "grid: %v", err)
	}
	s.space, s.text = sp, strings.Join(parts, "; ")
	return s, nil
}

// combo is the knob values of point pt (the plan's fixed knobs included).
func (s *searchSpace) combo(p *plan, pt optimize.Point) map[string]any {
	c := make(map[string]any, len(p.fixed)+len(p.swept))
	for k, v := range p.fixed {
		c[k] = v
	}
	for i, name := range p.swept {
		c[name] = p.axes[i][pt[name].(int64)]
	}
	return c
}

// point is the point of a trial's recorded knob values.
func (s *searchSpace) point(p *plan, values map[string]any) (optimize.Point, error) {
	pt := optimize.Point{}
	for i, name := range p.swept {
		raw, ok := values[name]
		if !ok {
			return nil, fmt.Errorf("it does not set the knob %s", name)
		}
		k := slices.IndexFunc(p.knobs, func(k scriptapi.Knob) bool { return k.Name == name })
		v, err := p.knobs[k].Check(raw)
		if err != nil {
			return nil, err
		}
		idx, ok := s.index[i][fmt.Sprint(v)]
		if !ok {
			return nil, fmt.Errorf("%s=%v is not in the grid", name, v)
		}
		pt[name] = idx
	}
	return pt, nil
}

// objective is what the optimiser maximises for a trial: the rank
// metric, negated for max_drawdown (ranked lowest first); NaN for a
// failed or undefined one.
func objective(t *worker.Trial, rankBy string) float64 {
	if t.Error != "" {
		return math.NaN()
	}
	x := scoreOf(t.Scores, rankBy)
	if rankBy == RankMaxDrawdown {
		x = -math.Abs(x)
	}
	return x
}
