package research

import (
	"fmt"
	"math"
	"slices"
)

// Combinatorial purged cross-validation (CPCV): López de Prado, "Advances
// in Financial Machine Learning" (Wiley, 2018), chapter 12.
//
// The T bars are cut into N contiguous groups (group g holds the bars
// from floor(g·T/N) up to floor((g+1)·T/N)). Each of the C(N, k) splits
// tests k of the groups and trains on the rest, less two cuts around
// every contiguous run [a, b) of test bars:
//
//   - purge: the Purge bars before a (a training bar there holds a label,
//     a position or an indicator window, that reaches into the test) and
//     the Purge bars from b (their lookback reads test bars), where Purge
//     is the strategy's longest lookback or holding period in bars;
//   - embargo: a further ceil(Embargo·T) bars after the purge that
//     follows b, for what leaks through serial correlation.
//
// Given M combinations' per-bar returns over the same bars, each split
// picks the combination with the best Sharpe ratio on its training bars
// (the first on ties; a combination without a defined Sharpe ratio is
// never picked) and keeps that combination's returns on its test groups.
// The splits test every group C(N−1, k−1) times, so the test groups
// assemble into φ = C(N−1, k−1) paths, each covering the T bars once: path
// p takes group g from the p-th split (in the lexicographic order of the
// splits' test groups) that tests g. The figures:
//
//   - each path's annualised Sharpe ratio (mean/std with ddof 1, times
//     the square root of the periods per year), their mean and quantiles
//     (linear interpolation between order statistics);
//   - PBO: per split, the picked combination's relative rank ω among the
//     M Sharpe ratios on the test bars (1 the worst, ties at their mid
//     rank, undefined ones lowest, over M+1) and λ = ln(ω/(1−ω)); PBO is
//     the share of splits with λ <= 0.
//
// The bars are read once: every combination's moments per segment
// between the cuts where a split's training mask can change (the groups'
// bounds and the ends of their purges and embargoes), and a split's, or a
// path's, Sharpe ratio combines whole segments' moments.
//
// testdata/cpcv_ref.py computes the same from the same fixture with plain
// Python, independently, and its output is the golden file the test
// compares with.

// CPCVConfig are a CPCV's settings.
type CPCVConfig struct {
	Groups  int     // N
	Test    int     // k, the test groups of a split
	Purge   int     // bars purged on each side of a test run
	Embargo float64 // the fraction of all bars embargoed after a test run's purge
	// PeriodsPerYear annualises the Sharpe ratios.
	PeriodsPerYear float64
}

// CPCVSplit is one split: its test groups and its bars.
type CPCVSplit struct {
	Test  []int `json:"test_groups"`
	Train int   `json:"train_bars"` // after purge and embargo
	// Picked is the combination with the best training Sharpe ratio (-1:
	// none had one).
	Picked int      `json:"picked"`
	Logit  *float64 `json:"logit"` // λ; nil when none was picked
	train  []bool
}

// CPCVResult are a CPCV's figures.
type CPCVResult struct {
	Groups       int         `json:"groups"`
	Test         int         `json:"test_groups"`
	Purge        int         `json:"purge_bars"`
	EmbargoBars  int         `json:"embargo_bars"`
	Combinations int         `json:"combinations"`
	Bars         int         `json:"bars"`
	Splits       []CPCVSplit `json:"splits"`
	// PathSharpe is each path's annualised Sharpe ratio (nil: undefined).
	PathSharpe []*float64 `json:"path_sharpe"`
	// The distribution of the defined path Sharpe ratios.
	Mean   *float64 `json:"mean"`
	P5     *float64 `json:"p5"`
	P25    *float64 `json:"p25"`
	Median *float64 `json:"median"`
	P75    *float64 `json:"p75"`
	P95    *float64 `json:"p95"`
	// PBO is the share of splits whose pick ranked at or below the
	// median on its test bars; nil when no split picked.
	PBO *float64 `json:"pbo"`
}

// binom is C(n, k).
func binom(n, k int) int {
	if k < 0 || k > n {
		return 0
	}
	r := 1
	for i := 1; i <= k; i++ {
		r = r * (n - k + i) / i
	}
	return r
}

// MaxCPCVSplits bounds C(N, k), so a request cannot ask for a run that
// never ends.
const MaxCPCVSplits = 10000

// check validates c for t bars.
func (c CPCVConfig) check(t int) error {
	switch {
	case c.Groups < 2:
		return fmt.Errorf("cpcv needs at least 2 groups, not %d", c.Groups)
	case c.Test < 1 || c.Test >= c.Groups:
		return fmt.Errorf("cpcv test groups %d must be from 1 to groups-1 (%d)", c.Test, c.Groups-1)
	case binom(c.Groups, c.Test) > MaxCPCVSplits:
		return fmt.Errorf("cpcv %d,%d makes %d splits, more than %d; use fewer groups", c.Groups, c.Test, binom(c.Groups, c.Test), MaxCPCVSplits)
	case t < 2*c.Groups:
		return fmt.Errorf("cpcv of %d groups needs at least %d bars, there are %d", c.Groups, 2*c.Groups, t)
	case c.Purge < 0:
		return fmt.Errorf("cpcv purge %d must not be negative", c.Purge)
	case !(c.Embargo >= 0 && c.Embargo < 0.5):
		return fmt.Errorf("cpcv embargo %v must be a fraction of the bars from 0 to below 0.5 (0.01 is 1 %%)", c.Embargo)
	}
	return nil
}

// cpcvSplits lays out the splits of t bars: test groups in lexicographic
// order and the training bars each keeps.
func cpcvSplits(t int, c CPCVConfig) (bounds []int, splits []CPCVSplit, embargo int) {
	n, k := c.Groups, c.Test
	bounds = make([]int, n+1)
	for g := 0; g <= n; g++ {
		bounds[g] = g * t / n
	}
	embargo = int(math.Ceil(c.Embargo * float64(t)))
	comb := make([]int, k)
	for i := range comb {
		comb[i] = i
	}
	for {
		s := CPCVSplit{Test: slices.Clone(comb), train: make([]bool, t), Picked: -1}
		inTest := make([]bool, n)
		for _, g := range comb {
			inTest[g] = true
		}
		for i := range s.train {
			s.train[i] = true
		}
		for g := 0; g < n; g++ {
			if !inTest[g] {
				continue
			}
			for i := bounds[g]; i < bounds[g+1]; i++ {
				s.train[i] = false
			}
			if g == 0 || !inTest[g-1] { // a run of test groups starts here
				for i := max(0, bounds[g]-c.Purge); i < bounds[g]; i++ {
					s.train[i] = false
				}
			}
			if g == n-1 || !inTest[g+1] { // and ends here
				for i := bounds[g+1]; i < min(t, bounds[g+1]+c.Purge+embargo); i++ {
					s.train[i] = false
				}
			}
		}
		for _, on := range s.train {
			if on {
				s.Train++
			}
		}
		splits = append(splits, s)
		// The next combination in lexicographic order.
		i := k - 1
		for i >= 0 && comb[i] == n-k+i {
			i--
		}
		if i < 0 {
			break
		}
		comb[i]++
		for j := i + 1; j < k; j++ {
			comb[j] = comb[j-1] + 1
		}
	}
	return bounds, splits, embargo
}

// moments are a run of returns' count, mean and sum of squared
// deviations; add combines two runs' (Chan, Golub and LeVeque), so the
// Sharpe ratio of a union of runs needs no second pass over its bars.
type moments struct{ n, mean, m2 float64 }

func (a moments) add(b moments) moments {
	if a.n == 0 {
		return b
	}
	if b.n == 0 {
		return a
	}
	n := a.n + b.n
	d := b.mean - a.mean
	return moments{n: n, mean: a.mean + d*b.n/n, m2: a.m2 + b.m2 + d*d*a.n*b.n/n}
}

// momentsOf are r's moments, in two passes.
func momentsOf(r []float64) moments {
	if len(r) == 0 {
		return moments{}
	}
	var sum float64
	for _, x := range r {
		sum += x
	}
	mean := sum / float64(len(r))
	var m2 float64
	for _, x := range r {
		d := x - mean
		m2 += d * d
	}
	return moments{n: float64(len(r)), mean: mean, m2: m2}
}

// sharpe is the per-period Sharpe ratio (ddof 1); NaN when undefined.
func (a moments) sharpe() float64 {
	if a.n < 2 {
		return math.NaN()
	}
	sd := math.Sqrt(a.m2 / (a.n - 1))
	if !(sd > 0) {
		return math.NaN()
	}
	return a.mean / sd
}

// cpcvCuts are the bars where a split's training mask may change: the
// groups' bounds and the ends of every purge and embargo around them.
func cpcvCuts(t int, bounds []int, purge, embargo int) []int {
	cuts := []int{0, t}
	for _, b := range bounds {
		cuts = append(cuts, b, max(0, b-purge), min(t, b+purge+embargo), min(t, b+purge))
	}
	slices.Sort(cuts)
	return slices.Compact(cuts)
}

// CPCV runs combinatorial purged cross-validation over returns[m][i], the
// return of combination m at bar i (every combination over the same
// bars).
func CPCV(returns [][]float64, c CPCVConfig) (*CPCVResult, error) {
	m := len(returns)
	if m == 0 {
		return nil, fmt.Errorf("cpcv needs the returns of at least one combination")
	}
	t := len(returns[0])
	for _, r := range returns {
		if len(r) != t {
			return nil, fmt.Errorf("cpcv: the combinations' returns cover different bars")
		}
	}
	if err := c.check(t); err != nil {
		return nil, err
	}
	bounds, splits, embargo := cpcvSplits(t, c)
	res := &CPCVResult{Groups: c.Groups, Test: c.Test, Purge: c.Purge, EmbargoBars: embargo, Combinations: m, Bars: t, Splits: splits}
	// Every combination's moments per segment between cuts: a split's
	// training and test bars are unions of whole segments.
	cuts := cpcvCuts(t, bounds, c.Purge, embargo)
	nseg := len(cuts) - 1
	seg := make([][]moments, m)
	for j, r := range returns {
		seg[j] = make([]moments, nseg)
		for q := range nseg {
			seg[j][q] = momentsOf(r[cuts[q]:cuts[q+1]])
		}
	}
	groupOf := make([]int, nseg) // the group a segment lies in
	for q := range nseg {
		g, _ := slices.BinarySearch(bounds, cuts[q]+1)
		groupOf[q] = g - 1
	}
	union := func(j int, keep func(q int) bool) moments {
		var a moments
		for q := range nseg {
			if keep(q) {
				a = a.add(seg[j][q])
			}
		}
		return a
	}
	oos := make([]float64, m)
	below, picked := 0, 0
	for si := range splits {
		s := &splits[si]
		inTest := make([]bool, c.Groups)
		for _, g := range s.Test {
			inTest[g] = true
		}
		train := func(q int) bool { return s.train[cuts[q]] }
		test := func(q int) bool { return inTest[groupOf[q]] }
		best := math.Inf(-1)
		for j := range returns {
			if sr := union(j, train).sharpe(); sr > best {
				best, s.Picked = sr, j
			}
		}
		if s.Picked < 0 {
			continue
		}
		for j := range returns {
			oos[j] = union(j, test).sharpe()
		}
		// The pick's rank among the test Sharpe ratios: 1 the worst, ties
		// at their mid rank, undefined ones the lowest.
		v := oos[s.Picked]
		var less, equal float64
		for _, x := range oos {
			switch {
			case math.IsNaN(v) && math.IsNaN(x), x == v:
				equal++
			case math.IsNaN(x) || x < v:
				less++
			}
		}
		rank := less + (equal+1)/2
		w := rank / float64(m+1)
		lambda := math.Log(w / (1 - w))
		s.Logit = &lambda
		picked++
		if lambda <= 0 {
			below++
		}
	}
	if picked > 0 {
		pbo := float64(below) / float64(picked)
		res.PBO = &pbo
	}
	// The paths: group g of path p comes from the p-th split testing g.
	phi := binom(c.Groups-1, c.Test-1)
	testing := make([][]int, c.Groups)
	for si, s := range splits {
		for _, g := range s.Test {
			testing[g] = append(testing[g], si)
		}
	}
	ann := math.Sqrt(c.PeriodsPerYear)
	var defined []float64
	for p := 0; p < phi; p++ {
		var a moments
		ok := true
		for q := range nseg {
			sp := splits[testing[groupOf[q]][p]]
			if sp.Picked < 0 {
				ok = false
				break
			}
			a = a.add(seg[sp.Picked][q])
		}
		sr := a.sharpe() * ann
		if !ok || math.IsNaN(sr) {
			res.PathSharpe = append(res.PathSharpe, nil)
			continue
		}
		res.PathSharpe = append(res.PathSharpe, &sr)
		defined = append(defined, sr)
	}
	if len(defined) > 0 {
		slices.Sort(defined)
		var sum float64
		for _, x := range defined {
			sum += x
		}
		mean := sum / float64(len(defined))
		q := func(p float64) *float64 {
			h := p * float64(len(defined)-1)
			lo := int(math.Floor(h))
			v := defined[lo]
			if lo+1 < len(defined) {
				v += (h - float64(lo)) * (defined[lo+1] - defined[lo])
			}
			return &v
		}
		res.Mean, res.P5, res.P25, res.Median, res.P75, res.P95 = &mean, q(0.05), q(0.25), q(0.5), q(0.75), q(0.95)
	}
	return res, nil
}
