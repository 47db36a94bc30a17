package optimize

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// plantedSpace is a sweep-sized grid: 46 × 37 × 3 = 5106 points.
func plantedSpace(t testing.TB) *Space {
	t.Helper()
	s, err := NewSpace(Int("fast", 5, 50, 1), Int("slow", 20, 200, 5), List("mode", "a", "b", "c"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// planted has its single maximum at fast=17 slow=115 mode=b, with ripples
// that make it multi-modal.
func planted(p Point) float64 {
	f := float64(p["fast"].(int64))
	s := float64(p["slow"].(int64))
	y := -math.Pow((f-17)/10, 2) - math.Pow((s-115)/40, 2) + 0.05*math.Cos(f/2)*math.Cos(s/15)
	switch p["mode"] {
	case "b":
		y += 0.3
	case "c":
		y += 0.1
	}
	return y
}

func isPlanted(p Point) bool {
	return p["fast"] == int64(17) && p["slow"] == int64(115) && p["mode"] == "b"
}

// trialsToFind runs o in batches of batch until it proposes the planted
// optimum and returns how many trials that took (the whole space if never).
func trialsToFind(t *testing.T, o Optimizer, batch, limit int) int {
	t.Helper()
	n := 0
	for n < limit {
		ps := o.Ask(batch)
		if len(ps) == 0 {
			t.Fatalf("no points after %d trials", n)
		}
		for _, p := range ps {
			n++
			if isPlanted(p) {
				return n
			}
			if err := o.Tell(p, planted(p)); err != nil {
				t.Fatal(err)
			}
		}
	}
	return limit
}

func median(xs []int) int {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func TestPlantedOptimumCheck(t *testing.T) {
	// The planted point is the maximum over the whole grid.
	s := plantedSpace(t)
	best, bestY := Point(nil), math.Inf(-1)
	for i := range int(s.Size()) {
		p := s.decode(s.indexCoords(i))
		if y := planted(p); y > bestY {
			best, bestY = p, y
		}
	}
	if !isPlanted(best) {
		t.Fatalf("grid maximum is %v, not the planted point", best)
	}
}

func TestTPEFindsPlantedOptimum(t *testing.T) {
	s := plantedSpace(t)
	size := int(s.Size())
	var tpe, rnd []int
	for seed := range uint64(10) {
		tpe = append(tpe, trialsToFind(t, NewTPE(s, seed, TPEOptions{}), 1, size))
		rnd = append(rnd, trialsToFind(t, NewRandom(s, seed), 1, size))
	}
	t.Logf("grid %d; trials to the planted optimum: TPE %v (median %d), random %v (median %d)", size, tpe, median(tpe), rnd, median(rnd))
	if m := median(tpe); m > size/5 {
		t.Fatalf("TPE needed a median %d trials, above 20%% of the grid's %d", m, size)
	}
}

func TestTPEFindsPlantedOptimumInBatches(t *testing.T) {
	s := plantedSpace(t)
	size := int(s.Size())
	var tpe []int
	for seed := range uint64(10) {
		tpe = append(tpe, trialsToFind(t, NewTPE(s, seed, TPEOptions{}), 8, size))
	}
	t.Logf("batches of 8: TPE %v (median %d)", tpe, median(tpe))
	if m := median(tpe); m > size/5 {
		t.Fatalf("TPE in batches of 8 needed a median %d trials, above 20%% of the grid's %d", m, size)
	}
}

// smoothSpace is four knobs of 41 levels each.
func smoothSpace(t testing.TB) *Space {
	t.Helper()
	s, err := NewSpace(Float("a", 0, 1, 0.025), Float("b", 0, 1, 0.025), Float("c", 0, 1, 0.025), Float("d", 0, 1, 0.025))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// smooth is a rotated, ill-conditioned quadratic peaking off-centre.
func smooth(p Point) float64 {
	a, b, c, d := p["a"].(float64)-0.7, p["b"].(float64)-0.3, p["c"].(float64)-0.8, p["d"].(float64)-0.25
	u, v := a+b, a-b
	return -(u*u + 10*v*v + 3*c*c + d*d + 2*c*d)
}

func bestAfter(t *testing.T, o Optimizer, budget, batch int) float64 {
	t.Helper()
	best := math.Inf(-1)
	for n := 0; n < budget; {
		ps := o.Ask(min(batch, budget-n))
		if len(ps) == 0 {
			t.Fatalf("no points after %d trials", n)
		}
		for _, p := range ps {
			y := smooth(p)
			best = math.Max(best, y)
			if err := o.Tell(p, y); err != nil {
				t.Fatal(err)
			}
			n++
		}
	}
	return best
}

func TestCMAESBeatsRandomOnSmooth(t *testing.T) {
	s := smoothSpace(t)
	var cma, rnd []float64
	for seed := range uint64(10) {
		cma = append(cma, bestAfter(t, NewCMAES(s, seed, CMAESOptions{}), 150, 4))
		rnd = append(rnd, bestAfter(t, NewRandom(s, seed), 150, 4))
	}
	slices.Sort(cma)
	slices.Sort(rnd)
	t.Logf("best after 150 trials: CMA-ES median %.5f, random median %.5f", cma[5], rnd[5])
	if cma[5] <= rnd[5] {
		t.Fatalf("CMA-ES median best %.5f does not beat random's %.5f", cma[5], rnd[5])
	}
	// and it converges: the median is within a grid step or so of the top (0).
	if cma[5] < -0.01 {
		t.Fatalf("CMA-ES median best %.5f is far from the optimum 0", cma[5])
	}
}

func methods(t testing.TB, s *Space, seed uint64) map[string]Optimizer {
	t.Helper()
	out := map[string]Optimizer{}
	for _, m := range Methods {
		o, err := New(m, s, seed)
		if err != nil {
			t.Fatal(err)
		}
		out[m] = o
	}
	return out
}

// run asks for batches of up to batch points and tells their results
// until o holds total trials.
func run(t *testing.T, o Optimizer, total, batch int, f func(Point) float64) {
	t.Helper()
	for len(o.Trials()) < total {
		ps := o.Ask(min(batch, total-len(o.Trials())))
		if len(ps) == 0 {
			t.Fatalf("no points after %d trials", len(o.Trials()))
		}
		for _, p := range ps {
			if err := o.Tell(p, f(p)); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func replay(t *testing.T, method string, s *Space, seed uint64, trials []Trial) Optimizer {
	t.Helper()
	o, err := New(method, s, seed)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range trials {
		if err := o.Tell(tr.Point, tr.Objective); err != nil {
			t.Fatal(err)
		}
	}
	return o
}

func TestResumeByReplayGivesTheSameNextPoints(t *testing.T) {
	s := plantedSpace(t)
	for _, m := range Methods {
		t.Run(m, func(t *testing.T) {
			whole := methods(t, s, 7)[m]
			run(t, whole, 60, 5, planted)

			first := methods(t, s, 7)[m]
			run(t, first, 30, 5, planted)
			resumed := replay(t, m, s, 7, first.Trials())
			run(t, resumed, 60, 5, planted)

			a, b := whole.Trials(), resumed.Trials()
			if len(a) != 60 || len(b) != 60 {
				t.Fatalf("trials: uninterrupted %d, resumed %d, want 60", len(a), len(b))
			}
			for i := range a {
				if fmtPoint(s, a[i].Point) != fmtPoint(s, b[i].Point) {
					t.Fatalf("trial %d: uninterrupted %s, resumed %s", i, fmtPoint(s, a[i].Point), fmtPoint(s, b[i].Point))
				}
			}
		})
	}
}

func TestResumeAfterAKillMidBatchRepeatsAndLosesNothing(t *testing.T) {
	s := plantedSpace(t)
	for _, m := range Methods {
		t.Run(m, func(t *testing.T) {
			o := methods(t, s, 3)[m]
			run(t, o, 16, 4, planted)
			// A batch goes out; two results reach the ledger, then the
			// process dies with two in flight.
			batch := o.Ask(4)
			if len(batch) != 4 {
				t.Fatalf("asked 4, got %d", len(batch))
			}
			for _, p := range batch[:2] {
				if err := o.Tell(p, planted(p)); err != nil {
					t.Fatal(err)
				}
			}
			ledger := o.Trials()
			resumed := replay(t, m, s, 3, ledger)
			run(t, resumed, len(ledger)+20, 4, planted)
			got := resumed.Trials()
			if len(got) != len(ledger)+20 {
				t.Fatalf("resumed run has %d trials, want %d", len(got), len(ledger)+20)
			}
			seen := map[string]bool{}
			for i, tr := range got {
				k := fmtPoint(s, tr.Point)
				if seen[k] {
					t.Fatalf("trial %d repeats %s", i, k)
				}
				seen[k] = true
				if i < len(ledger) && k != fmtPoint(s, ledger[i].Point) {
					t.Fatalf("trial %d of the ledger changed on resume", i)
				}
			}
			if m == MethodCMAES {
				// The in-flight points belong to the unfinished
				// generation; CMA-ES evaluates them after the resume.
				for _, p := range batch[2:] {
					if !seen[fmtPoint(s, p)] {
						t.Fatalf("in-flight point %s was not evaluated after the resume", fmtPoint(s, p))
					}
				}
			}
		})
	}
}

func TestSeedDeterminesTheRun(t *testing.T) {
	s := plantedSpace(t)
	for _, m := range Methods {
		a, b, c := methods(t, s, 11)[m], methods(t, s, 11)[m], methods(t, s, 12)[m]
		run(t, a, 24, 3, planted)
		run(t, b, 24, 3, planted)
		run(t, c, 24, 3, planted)
		if !slices.EqualFunc(a.Trials(), b.Trials(), func(x, y Trial) bool { return fmtPoint(s, x.Point) == fmtPoint(s, y.Point) }) {
			t.Fatalf("%s: the same seed gave different runs", m)
		}
		if slices.EqualFunc(a.Trials(), c.Trials(), func(x, y Trial) bool { return fmtPoint(s, x.Point) == fmtPoint(s, y.Point) }) {
			t.Fatalf("%s: seeds 11 and 12 gave the same run", m)
		}
	}
}

func TestSmallSpaceIsExhaustedWithoutRepeats(t *testing.T) {
	s, err := NewSpace(Int("n", 1, 3, 1), List("on", true, false))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range Methods {
		o := methods(t, s, 5)[m]
		seen := map[string]bool{}
		for range 10 {
			for _, p := range o.Ask(4) {
				k := fmtPoint(s, p)
				if seen[k] {
					t.Fatalf("%s: %s proposed twice", m, k)
				}
				seen[k] = true
				if err := o.Tell(p, float64(p["n"].(int64))); err != nil {
					t.Fatal(err)
				}
			}
		}
		if len(seen) != 6 || o.Left() != 0 {
			t.Fatalf("%s: %d of 6 points proposed, %v left", m, len(seen), o.Left())
		}
		if ps := o.Ask(1); len(ps) != 0 {
			t.Fatalf("%s: an exhausted space still proposed %v", m, ps)
		}
	}
}

func TestContinuousDimension(t *testing.T) {
	s, err := NewSpace(Float("x", -2, 2, 0), Float("y", -2, 2, 0))
	if err != nil {
		t.Fatal(err)
	}
	f := func(p Point) float64 {
		x, y := p["x"].(float64)-0.5, p["y"].(float64)+1
		return -(x*x + y*y)
	}
	for _, m := range []string{MethodTPE, MethodCMAES} {
		o := methods(t, s, 1)[m]
		run(t, o, 200, 4, f)
		best := math.Inf(-1)
		for _, tr := range o.Trials() {
			if x := tr.Point["x"].(float64); x < -2 || x > 2 {
				t.Fatalf("%s proposed x=%v outside -2..2", m, x)
			}
			best = math.Max(best, tr.Objective)
		}
		if best < -0.05 {
			t.Fatalf("%s: best %.4f after 200 trials on a bowl", m, best)
		}
	}
}

func TestFailedTrialsRankLast(t *testing.T) {
	s := smoothSpace(t)
	for _, m := range []string{MethodTPE, MethodCMAES} {
		o := methods(t, s, 2)[m]
		best := math.Inf(-1)
		for range 40 {
			for _, p := range o.Ask(4) {
				y := smooth(p)
				if p["a"].(float64) < 0.5 {
					y = math.NaN() // the left half fails
				}
				best = math.Max(best, y)
				if err := o.Tell(p, y); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, tr := range o.Trials() {
			if math.IsNaN(tr.Objective) {
				t.Fatalf("%s: a failure is recorded as NaN, want -Inf", m)
			}
		}
		if best < -0.05 {
			t.Fatalf("%s: best %.4f with failures in half the space", m, best)
		}
	}
}

func TestTellRefusesBadPoints(t *testing.T) {
	s := plantedSpace(t)
	o := NewTPE(s, 1, TPEOptions{})
	ok := Point{"fast": int64(5), "slow": int64(20), "mode": "a"}
	for _, c := range []struct {
		p    Point
		want string
	}{
		{Point{"fast": int64(5), "slow": int64(20)}, "does not set mode"},
		{Point{"fast": int64(5), "slow": int64(20), "mode": "z"}, "not one of the listed values"},
		{Point{"fast": int64(5), "slow": int64(22), "mode": "a"}, "not on the grid"},
		{Point{"fast": int64(51), "slow": int64(20), "mode": "a"}, "outside 5..50"},
		{Point{"fast": "x", "slow": int64(20), "mode": "a"}, "not a number"},
		{Point{"fast": int64(5), "slow": int64(20), "mode": "a", "extra": 1}, "not a knob of this space"},
	} {
		if err := o.Tell(c.p, 1); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Tell(%v) = %v, want an error saying %q", c.p, err, c.want)
		}
	}
	if err := o.Tell(ok, 1); err != nil {
		t.Fatal(err)
	}
	// JSON numbers (float64) name the same point as int64s.
	if err := o.Tell(Point{"fast": 5.0, "slow": 20.0, "mode": "a"}, 2); err == nil || !strings.Contains(err.Error(), "told already") {
		t.Fatalf("a repeated point: %v, want a refusal", err)
	}
	if n := len(o.Trials()); n != 1 {
		t.Fatalf("%d trials after refusals, want 1", n)
	}
}

func TestNewSpaceRefusesBadDimensions(t *testing.T) {
	for _, c := range []struct {
		dims []Dim
		want string
	}{
		{nil, "no dimensions"},
		{[]Dim{Int("", 1, 2, 1)}, "needs a name"},
		{[]Dim{Int("a", 5, 1, 1)}, "from 5 is above to 1"},
		{[]Dim{Int("a", 1, 5, 0)}, "must be positive"},
		{[]Dim{Float("a", 0, 1, -0.1)}, "must be positive"},
		{[]Dim{Float("a", 0, math.Inf(1), 0)}, "finite"},
		{[]Dim{Int("a", 0, 10_000_000, 1)}, "coarsen the step"},
		{[]Dim{List("a")}, "list is empty"},
		{[]Dim{List("a", 1, 1.0)}, "listed twice"},
		{[]Dim{List("a", []int{1})}, "numbers, booleans or strings"},
		{[]Dim{Int("a", 1, 2, 1), Int("a", 1, 2, 1)}, "given twice"},
	} {
		if _, err := NewSpace(c.dims...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewSpace(%v) = %v, want an error saying %q", c.dims, err, c.want)
		}
	}
	if _, err := New("annealing", plantedSpace(t), 1); err == nil || !strings.Contains(err.Error(), "random, tpe, cmaes") {
		t.Fatalf("unknown method: %v", err)
	}
}

func TestSpaceValues(t *testing.T) {
	s, err := NewSpace(Float("f", 0.1, 0.5, 0.1), Int("i", 10, 30, 10))
	if err != nil {
		t.Fatal(err)
	}
	if s.Size() != 15 {
		t.Fatalf("size %v, want 15", s.Size())
	}
	var got []string
	for i := range 15 {
		got = append(got, fmtPoint(s, s.decode(s.indexCoords(i))))
	}
	if got[3] != "f=0.2 i=10" || got[14] != "f=0.5 i=30" {
		t.Fatalf("grid points %v", got)
	}
}

func TestJacobiEigen(t *testing.T) {
	a := [][]float64{{4, 1, 0.5}, {1, 3, 0.2}, {0.5, 0.2, 1}}
	vals, vecs := jacobiEigen(a)
	for k, lambda := range vals {
		for i := range a {
			av := 0.0
			for j := range a {
				av += a[i][j] * vecs[j][k]
			}
			if math.Abs(av-lambda*vecs[i][k]) > 1e-9 {
				t.Fatalf("eigenpair %d: (A v)_%d = %v, λ v_%d = %v", k, i, av, i, lambda*vecs[i][k])
			}
		}
	}
	sum := vals[0] + vals[1] + vals[2]
	if math.Abs(sum-8) > 1e-9 {
		t.Fatalf("eigenvalues %v do not sum to the trace 8", vals)
	}
}
