package optimize

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
)

// TPEOptions tunes the tree-structured Parzen estimator. Zero fields take
// the defaults.
type TPEOptions struct {
	// Startup is the number of random trials before the model is used
	// (default 10).
	Startup int
	// Gamma is the share of the trials, best first, that forms the good
	// group l(x) (default 0.15), at most MaxGood of them (default 25).
	Gamma   float64
	MaxGood int
	// Candidates is the number of draws from l(x) per proposal, of which
	// the one with the largest l(x)/g(x) is proposed (default 24).
	Candidates int
}

func (o TPEOptions) withDefaults() TPEOptions {
	if o.Startup <= 0 {
		o.Startup = 10
	}
	if o.Gamma <= 0 || o.Gamma >= 1 {
		o.Gamma = 0.15
	}
	if o.MaxGood <= 0 {
		o.MaxGood = 25
	}
	if o.Candidates <= 0 {
		o.Candidates = 24
	}
	return o
}

// TPE is Bergstra et al.'s tree-structured Parzen estimator (2011): the
// trials are split at the Gamma quantile of the objective into a good and
// a bad group, each knob gets a Parzen density per group, l(x) and g(x),
// and the proposal is the candidate drawn from l with the largest l/g.
// Knobs are modelled independently; a list knob by smoothed counts.
// Pending points join the bad group, so a batch spreads out.
type TPE struct {
	history
	opt TPEOptions
}

// NewTPE returns a TPE search over s.
func NewTPE(s *Space, seed uint64, opt TPEOptions) *TPE {
	return &TPE{history: newHistory(s, seed), opt: opt.withDefaults()}
}

// Tell records a trial.
func (o *TPE) Tell(p Point, y float64) error {
	_, err := o.record(p, y)
	return err
}

// Ask returns up to n new points.
func (o *TPE) Ask(n int) []Point {
	var out []Point
	var pendingU [][]float64
	for range n {
		r := o.rng(2)
		var u []float64
		ok := false
		if len(o.trials) >= o.opt.Startup {
			u, ok = o.propose(r, pendingU)
		}
		if !ok {
			u, ok = o.randomUnseen(r)
		}
		if !ok {
			break
		}
		o.pending[o.space.key(u)] = true
		pendingU = append(pendingU, u)
		out = append(out, o.space.decode(u))
	}
	return out
}

// propose draws candidates from l and returns the unseen one with the
// largest l/g.
func (o *TPE) propose(r *rand.Rand, pendingU [][]float64) ([]float64, bool) {
	order := make([]int, len(o.trials))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(o.trials[b].y, o.trials[a].y) })
	nGood := min(int(math.Ceil(o.opt.Gamma*float64(len(order)))), o.opt.MaxGood)
	nGood = max(nGood, 1)
	var good, bad [][]float64
	for j, i := range order {
		if j < nGood {
			good = append(good, o.trials[i].u)
		} else {
			bad = append(bad, o.trials[i].u)
		}
	}
	bad = append(bad, pendingU...)
	s := o.space
	ls := make([]parzen, len(s.dims))
	gs := make([]parzen, len(s.dims))
	for i := range s.dims {
		ls[i] = newParzen(s, i, good)
		gs[i] = newParzen(s, i, bad)
	}
	var best []float64
	bestScore := math.Inf(-1)
	for range 4 {
		for range o.opt.Candidates {
			u := make([]float64, len(s.dims))
			for i := range u {
				u[i] = ls[i].sample(r)
			}
			u = s.snap(u)
			if o.seen(s.key(u)) {
				continue
			}
			score := 0.0
			for i, x := range u {
				score += ls[i].logpdf(x) - gs[i].logpdf(x)
			}
			if score > bestScore {
				best, bestScore = u, score
			}
		}
		if best != nil {
			return best, true
		}
	}
	return nil, false
}

// parzen is one knob's density estimate over unit coordinates: a mixture
// of truncated normals plus a wide prior for a range knob, smoothed level
// frequencies for a list knob.
type parzen struct {
	list         bool
	probs        []float64 // list: per level
	mu, sigma, z []float64 // range: per component (z: mass inside [0, 1])
	levels       int
}

func newParzen(s *Space, dim int, obs [][]float64) parzen {
	if s.dims[dim].Kind == KindList {
		n := s.levels[dim]
		p := parzen{list: true, probs: make([]float64, n), levels: n}
		for _, u := range obs {
			p.probs[s.level(dim, u[dim])]++
		}
		total := float64(len(obs)) + 1
		for k := range p.probs {
			p.probs[k] = (p.probs[k] + 1/float64(n)) / total
		}
		return p
	}
	// Components at the observations plus a prior N(0.5, 1); each
	// bandwidth is the larger gap to its neighbours (the bounds count as
	// neighbours), clipped to [minSigma, 1].
	mus := []float64{0.5}
	for _, u := range obs {
		mus = append(mus, u[dim])
	}
	sorted := slices.Clone(mus[1:])
	slices.Sort(sorted)
	minSigma := 1 / math.Min(100, float64(len(obs))+1)
	if l := s.levels[dim]; l > 0 {
		minSigma = math.Max(minSigma, 1/float64(l))
	}
	p := parzen{mu: mus, sigma: make([]float64, len(mus)), z: make([]float64, len(mus)), levels: s.levels[dim]}
	p.sigma[0] = 1
	for i := 1; i < len(mus); i++ {
		x := mus[i]
		j, _ := slices.BinarySearch(sorted, x)
		lo, hi := 0.0, 1.0
		if j > 0 {
			lo = sorted[j-1]
		}
		// the next value strictly above x
		k := j
		for k < len(sorted) && sorted[k] <= x {
			k++
		}
		if k < len(sorted) {
			hi = sorted[k]
		}
		p.sigma[i] = math.Min(math.Max(math.Max(x-lo, hi-x), minSigma), 1)
	}
	for i := range mus {
		p.z[i] = normCDF((1-mus[i])/p.sigma[i]) - normCDF(-mus[i]/p.sigma[i])
	}
	return p
}

func (p parzen) sample(r *rand.Rand) float64 {
	if p.list {
		x := r.Float64()
		for k, q := range p.probs {
			x -= q
			if x < 0 {
				return (float64(k) + 0.5) / float64(len(p.probs))
			}
		}
		return (float64(len(p.probs)) - 0.5) / float64(len(p.probs))
	}
	c := r.IntN(len(p.mu))
	for range 32 {
		x := p.mu[c] + p.sigma[c]*r.NormFloat64()
		if x >= 0 && x <= 1 {
			return x
		}
	}
	return clamp01(p.mu[c])
}

func (p parzen) logpdf(x float64) float64 {
	if p.list {
		k := min(max(int(x*float64(len(p.probs))), 0), len(p.probs)-1)
		return math.Log(p.probs[k])
	}
	sum := 0.0
	for i, m := range p.mu {
		d := (x - m) / p.sigma[i]
		sum += math.Exp(-0.5*d*d) / (p.sigma[i] * p.z[i])
	}
	return math.Log(sum/float64(len(p.mu))) - 0.5*math.Log(2*math.Pi)
}

func normCDF(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
