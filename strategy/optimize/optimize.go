package optimize

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
)

// Optimizer proposes points to evaluate and learns from their results.
// Objectives are maximised; a failed trial is told as NaN or -Inf and
// ranks below every finite one.
//
// Ask returns up to n points not yet told nor pending (asked and not yet
// told); fewer, or none, when the method has nothing new until some
// pending points are told, or when a finite space is exhausted (Left
// reports that). Tell records one evaluated point, whether or not it was
// asked of this optimiser, and refuses a point told before.
//
// The proposals are a pure function of the seed and the told trials in
// order: replaying recorded trials through Tell into a fresh optimiser of
// the same method, space and seed gives the same next points as the
// uninterrupted run, at any point where it had nothing pending.
type Optimizer interface {
	Ask(n int) []Point
	Tell(p Point, objective float64) error
	// Trials returns the told trials in order.
	Trials() []Trial
	// Left is the number of points neither told nor pending (+Inf for a
	// continuous space).
	Left() float64
}

// Trial is one evaluated point.
type Trial struct {
	Point     Point
	Objective float64
}

// The methods New accepts.
const (
	MethodRandom = "random"
	MethodTPE    = "tpe"
	MethodCMAES  = "cmaes"
)

// Methods lists the method names, for help and errors.
var Methods = []string{MethodRandom, MethodTPE, MethodCMAES}

// New returns an optimiser of the named method over space s, with its
// default settings.
func New(method string, s *Space, seed uint64) (Optimizer, error) {
	switch strings.ToLower(method) {
	case MethodRandom:
		return NewRandom(s, seed), nil
	case MethodTPE:
		return NewTPE(s, seed, TPEOptions{}), nil
	case MethodCMAES, "cma-es", "cma":
		return NewCMAES(s, seed, CMAESOptions{}), nil
	}
	return nil, fmt.Errorf("unknown method %q; use one of: %s", method, strings.Join(Methods, ", "))
}

// told is a trial in coordinates.
type told struct {
	u   []float64
	key string
	y   float64 // -Inf for a failure
}

// history is what every method keeps: the told trials and the pending
// points.
type history struct {
	space   *Space
	seed    uint64
	trials  []told
	points  []Point
	told    map[string]int // key -> index in trials
	pending map[string]bool
}

func newHistory(s *Space, seed uint64) history {
	return history{space: s, seed: seed, told: map[string]int{}, pending: map[string]bool{}}
}

// record checks and appends a told trial.
func (h *history) record(p Point, y float64) (told, error) {
	u, err := h.space.encode(p)
	if err != nil {
		return told{}, err
	}
	key := h.space.key(u)
	if _, dup := h.told[key]; dup {
		return told{}, fmt.Errorf("the point %s was told already; each point is one trial", fmtPoint(h.space, p))
	}
	if math.IsNaN(y) {
		y = math.Inf(-1)
	}
	t := told{u: u, key: key, y: y}
	h.told[key] = len(h.trials)
	h.trials = append(h.trials, t)
	h.points = append(h.points, h.space.decode(u))
	delete(h.pending, key)
	return t, nil
}

func (h *history) Trials() []Trial {
	out := make([]Trial, len(h.trials))
	for i, t := range h.trials {
		out[i] = Trial{Point: h.points[i], Objective: t.y}
	}
	return out
}

func (h *history) seen(key string) bool {
	_, ok := h.told[key]
	return ok || h.pending[key]
}

func (h *history) Left() float64 {
	return h.space.Size() - float64(len(h.told)) - float64(len(h.pending))
}

// rng is the random stream for the next proposal: a function of the seed,
// the number of told trials and of pending points, so that a replayed
// history draws what the original drew.
func (h *history) rng(stream uint64) *rand.Rand {
	n := uint64(len(h.trials))<<24 | uint64(len(h.pending))
	return rand.New(rand.NewPCG(h.seed^stream, n*0x9E3779B97F4A7C15+1))
}

// enumerateLimit is the largest space whose unseen points are listed when
// random draws keep hitting seen ones.
const enumerateLimit = 1 << 20

// randomUnseen draws a uniform point that is neither told nor pending.
func (h *history) randomUnseen(r *rand.Rand) ([]float64, bool) {
	s := h.space
	for range 64 {
		u := make([]float64, len(s.dims))
		for i := range u {
			u[i] = r.Float64()
		}
		u = s.snap(u)
		if !h.seen(s.key(u)) {
			return u, true
		}
	}
	size := s.Size()
	if size > enumerateLimit || h.Left() <= 0 {
		return nil, false
	}
	var unseen []int
	for idx := range int(size) {
		if !h.seen(s.key(s.indexCoords(idx))) {
			unseen = append(unseen, idx)
		}
	}
	if len(unseen) == 0 {
		return nil, false
	}
	return s.indexCoords(unseen[r.IntN(len(unseen))]), true
}

// indexCoords is the coordinates of grid point idx (last dim fastest).
func (s *Space) indexCoords(idx int) []float64 {
	u := make([]float64, len(s.dims))
	for i := len(s.dims) - 1; i >= 0; i-- {
		n := s.levels[i]
		u[i] = s.centre(i, idx%n)
		idx /= n
	}
	return u
}

func fmtPoint(s *Space, p Point) string {
	parts := make([]string, 0, len(s.dims))
	for _, d := range s.dims {
		parts = append(parts, fmt.Sprintf("%s=%v", d.Name, p[d.Name]))
	}
	return strings.Join(parts, " ")
}

// Random proposes uniform points of the space, never one already told or
// pending.
type Random struct {
	history
}

// NewRandom returns a random search over s.
func NewRandom(s *Space, seed uint64) *Random {
	return &Random{history: newHistory(s, seed)}
}

// Ask returns up to n new uniform points.
func (o *Random) Ask(n int) []Point {
	var out []Point
	for range n {
		u, ok := o.randomUnseen(o.rng(1))
		if !ok {
			break
		}
		o.pending[o.space.key(u)] = true
		out = append(out, o.space.decode(u))
	}
	return out
}

// Tell records a trial.
func (o *Random) Tell(p Point, y float64) error {
	_, err := o.record(p, y)
	return err
}
