package optimize

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
)

// CMAESOptions tunes CMA-ES. Zero fields take the defaults.
type CMAESOptions struct {
	// Sigma is the initial step size in the unit cube (default 0.3).
	Sigma float64
	// Population is λ, the points per generation (default 4 + ⌊3 ln d⌋).
	Population int
}

// CMA-ES state per Hansen's tutorial ("The CMA Evolution Strategy: A
// Tutorial", 2016), run on the space mapped to [0, 1]^d: samples are
// clipped to the cube and rounded to the grid, the update uses the
// clipped samples, and a sample that rounds to an evaluated point takes
// that point's objective without a new trial. A list knob is treated as
// ordinal by its listed order. When generations keep producing only
// evaluated points the search restarts from the best trial with the
// initial step size.
type CMAES struct {
	history
	opt CMAESOptions

	d, lambda, mu                 int
	weights                       []float64
	mueff, cc, cs, c1, cmu, damps float64
	chiN                          float64

	mean, pc, ps []float64
	sigma        float64
	c, b         [][]float64 // covariance and its eigenvectors (columns)
	dd           []float64   // square roots of the eigenvalues
	gen          int         // generations sampled, for the random streams
	updates      int         // generations since the last restart, for hσ
	stale        int         // consecutive generations with nothing new

	slots []slot
}

type slot struct {
	x     []float64 // clipped sample
	key   string
	alias int // index of an earlier slot with the same key, or -1
	asked bool
	done  bool
	y     float64
}

// NewCMAES returns a CMA-ES search over s.
func NewCMAES(s *Space, seed uint64, opt CMAESOptions) *CMAES {
	o := &CMAES{history: newHistory(s, seed), opt: opt}
	d := len(s.dims)
	o.d = d
	if opt.Sigma <= 0 {
		o.opt.Sigma = 0.3
	}
	o.lambda = opt.Population
	if o.lambda < 2 {
		o.lambda = 4 + int(3*math.Log(float64(d)))
	}
	o.mu = o.lambda / 2
	o.weights = make([]float64, o.mu)
	sum, sq := 0.0, 0.0
	for i := range o.weights {
		o.weights[i] = math.Log(float64(o.mu)+0.5) - math.Log(float64(i+1))
		sum += o.weights[i]
	}
	for i := range o.weights {
		o.weights[i] /= sum
		sq += o.weights[i] * o.weights[i]
	}
	o.mueff = 1 / sq
	n := float64(d)
	o.cc = (4 + o.mueff/n) / (n + 4 + 2*o.mueff/n)
	o.cs = (o.mueff + 2) / (n + o.mueff + 5)
	o.c1 = 2 / ((n+1.3)*(n+1.3) + o.mueff)
	o.cmu = math.Min(1-o.c1, 2*(o.mueff-2+1/o.mueff)/((n+2)*(n+2)+o.mueff))
	o.damps = 1 + 2*math.Max(0, math.Sqrt((o.mueff-1)/(n+1))-1) + o.cs
	o.chiN = math.Sqrt(n) * (1 - 1/(4*n) + 1/(21*n*n))
	mean := make([]float64, d)
	for i := range mean {
		mean[i] = 0.5
	}
	o.restart(mean)
	o.advance()
	return o
}

func (o *CMAES) restart(mean []float64) {
	d := o.d
	o.mean = slices.Clone(mean)
	o.sigma = o.opt.Sigma
	o.pc = make([]float64, d)
	o.ps = make([]float64, d)
	o.c = identity(d)
	o.b = identity(d)
	o.dd = make([]float64, d)
	for i := range o.dd {
		o.dd[i] = 1
	}
	o.updates = 0
	o.stale = 0
}

// maxGenerations bounds the generations one call samples without finding
// a new point.
const maxGenerations = 200

// staleRestart is how many generations of only evaluated points trigger a
// restart.
const staleRestart = 10

// advance samples generations until the current one has a point to
// evaluate or is waiting for one.
func (o *CMAES) advance() {
	for range maxGenerations {
		if o.slots != nil && !o.complete() {
			return
		}
		if o.slots != nil {
			o.update()
		}
		o.sample()
		if o.complete() {
			o.stale++
			if o.stale >= staleRestart {
				o.restartFromBest()
			}
		} else {
			o.stale = 0
		}
	}
}

func (o *CMAES) restartFromBest() {
	best := -1
	for i, t := range o.trials {
		if best < 0 || t.y > o.trials[best].y {
			best = i
		}
	}
	mean := make([]float64, o.d)
	for i := range mean {
		mean[i] = 0.5
	}
	if best >= 0 {
		mean = o.trials[best].u
	}
	o.restart(mean)
}

func (o *CMAES) complete() bool {
	for i := range o.slots {
		if !o.resolved(i) {
			return false
		}
	}
	return true
}

func (o *CMAES) resolved(i int) bool {
	s := o.slots[i]
	if s.alias >= 0 {
		return o.slots[s.alias].done
	}
	return s.done
}

func (o *CMAES) value(i int) float64 {
	if a := o.slots[i].alias; a >= 0 {
		return o.slots[a].y
	}
	return o.slots[i].y
}

// sample draws generation o.gen's λ points.
func (o *CMAES) sample() {
	r := rand.New(rand.NewPCG(o.seed^3, uint64(o.gen)*0x9E3779B97F4A7C15+7))
	o.gen++
	o.slots = make([]slot, o.lambda)
	byKey := map[string]int{}
	z := make([]float64, o.d)
	for k := range o.slots {
		for i := range z {
			z[i] = o.dd[i] * r.NormFloat64()
		}
		x := make([]float64, o.d)
		for i := range x {
			v := o.mean[i]
			for j := range z {
				v += o.sigma * o.b[i][j] * z[j]
			}
			x[i] = clamp01(v)
		}
		key := o.space.key(x)
		sl := slot{x: x, key: key, alias: -1}
		if j, ok := byKey[key]; ok {
			sl.alias = j
		} else if t, ok := o.told[key]; ok {
			sl.done, sl.y = true, o.trials[t].y
			byKey[key] = k
		} else {
			byKey[key] = k
		}
		o.slots[k] = sl
	}
}

// update moves the mean, the paths, the covariance and the step size.
func (o *CMAES) update() {
	d := o.d
	idx := make([]int, len(o.slots))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(o.value(b), o.value(a)) })
	old := o.mean
	mean := make([]float64, d)
	for w, k := range idx[:o.mu] {
		for i := range mean {
			mean[i] += o.weights[w] * o.slots[k].x[i]
		}
	}
	step := make([]float64, d) // (mean - old) / sigma
	for i := range step {
		step[i] = (mean[i] - old[i]) / o.sigma
	}
	// C^-1/2 step = B D^-1 B^T step
	bt := make([]float64, d)
	for j := range bt {
		for i := range step {
			bt[j] += o.b[i][j] * step[i]
		}
		bt[j] /= o.dd[j]
	}
	norm := 0.0
	for i := range o.ps {
		v := 0.0
		for j := range bt {
			v += o.b[i][j] * bt[j]
		}
		o.ps[i] = (1-o.cs)*o.ps[i] + math.Sqrt(o.cs*(2-o.cs)*o.mueff)*v
		norm += o.ps[i] * o.ps[i]
	}
	norm = math.Sqrt(norm)
	o.updates++
	hsig := 0.0
	if norm/math.Sqrt(1-math.Pow(1-o.cs, 2*float64(o.updates)))/o.chiN < 1.4+2/float64(d+1) {
		hsig = 1
	}
	for i := range o.pc {
		o.pc[i] = (1-o.cc)*o.pc[i] + hsig*math.Sqrt(o.cc*(2-o.cc)*o.mueff)*step[i]
	}
	ar := make([][]float64, o.mu)
	for w, k := range idx[:o.mu] {
		ar[w] = make([]float64, d)
		for i := range ar[w] {
			ar[w][i] = (o.slots[k].x[i] - old[i]) / o.sigma
		}
	}
	for i := range d {
		for j := range d {
			rankMu := 0.0
			for w := range ar {
				rankMu += o.weights[w] * ar[w][i] * ar[w][j]
			}
			o.c[i][j] = (1-o.c1-o.cmu)*o.c[i][j] +
				o.c1*(o.pc[i]*o.pc[j]+(1-hsig)*o.cc*(2-o.cc)*o.c[i][j]) +
				o.cmu*rankMu
		}
	}
	o.sigma *= math.Exp((o.cs / o.damps) * (norm/o.chiN - 1))
	o.sigma = math.Min(o.sigma, 1)
	o.mean = mean
	vals, vecs := jacobiEigen(o.c)
	for i, v := range vals {
		o.dd[i] = math.Sqrt(math.Max(v, 1e-20))
	}
	o.b = vecs
	if o.sigma*slices.Max(o.dd) < 1e-12 {
		o.restartFromBest()
	}
}

// Ask returns up to n new points of the current generation; fewer when
// the generation's other points wait on pending ones, or random unseen
// points when CMA-ES cannot find a new one.
func (o *CMAES) Ask(n int) []Point {
	var out []Point
	for len(out) < n {
		o.advance()
		k := -1
		for i, s := range o.slots {
			if s.alias < 0 && !s.done && !s.asked {
				k = i
				break
			}
		}
		if k >= 0 {
			o.slots[k].asked = true
			o.pending[o.slots[k].key] = true
			out = append(out, o.space.decode(o.slots[k].x))
			continue
		}
		if !o.complete() {
			break // the generation waits on pending points
		}
		u, ok := o.randomUnseen(o.rng(3))
		if !ok {
			break
		}
		o.pending[o.space.key(u)] = true
		out = append(out, o.space.decode(u))
	}
	return out
}

// Tell records a trial and resolves the generation's sample it matches.
func (o *CMAES) Tell(p Point, y float64) error {
	t, err := o.record(p, y)
	if err != nil {
		return err
	}
	for i := range o.slots {
		s := &o.slots[i]
		if s.alias < 0 && !s.done && s.key == t.key {
			s.done, s.y = true, t.y
			break
		}
	}
	o.advance()
	return nil
}

func identity(d int) [][]float64 {
	m := make([][]float64, d)
	for i := range m {
		m[i] = make([]float64, d)
		m[i][i] = 1
	}
	return m
}

// jacobiEigen returns the eigenvalues and eigenvectors (as columns) of
// the symmetric matrix a, by cyclic Jacobi rotations.
func jacobiEigen(a [][]float64) ([]float64, [][]float64) {
	n := len(a)
	m := make([][]float64, n)
	for i := range m {
		m[i] = slices.Clone(a[i])
	}
	// symmetrise against rounding
	for i := range n {
		for j := i + 1; j < n; j++ {
			v := (m[i][j] + m[j][i]) / 2
			m[i][j], m[j][i] = v, v
		}
	}
	v := identity(n)
	for range 100 {
		off := 0.0
		for i := range n {
			for j := i + 1; j < n; j++ {
				off += m[i][j] * m[i][j]
			}
		}
		if off < 1e-30 {
			break
		}
		for p := range n {
			for q := p + 1; q < n; q++ {
				if math.Abs(m[p][q]) < 1e-300 {
					continue
				}
				theta := (m[q][q] - m[p][p]) / (2 * m[p][q])
				t := math.Copysign(1, theta) / (math.Abs(theta) + math.Sqrt(theta*theta+1))
				c := 1 / math.Sqrt(t*t+1)
				s := t * c
				for k := range n {
					mkp, mkq := m[k][p], m[k][q]
					m[k][p] = c*mkp - s*mkq
					m[k][q] = s*mkp + c*mkq
				}
				for k := range n {
					mpk, mqk := m[p][k], m[q][k]
					m[p][k] = c*mpk - s*mqk
					m[q][k] = s*mpk + c*mqk
				}
				for k := range n {
					vkp, vkq := v[k][p], v[k][q]
					v[k][p] = c*vkp - s*vkq
					v[k][q] = s*vkp + c*vkq
				}
			}
		}
	}
	vals := make([]float64, n)
	for i := range vals {
		vals[i] = m[i][i]
	}
	return vals, v
}
