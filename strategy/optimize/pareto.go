package optimize

import (
	"cmp"
	"math"
	"slices"
)

// Score is a trial's two objectives for multi-objective ranking: Sharpe,
// higher is better, and the maximum drawdown, compared by its magnitude
// (a smaller drawdown is better whichever sign it is reported with). A
// NaN ranks worst on that objective.
type Score struct {
	Sharpe      float64
	MaxDrawdown float64
}

func (s Score) norm() (sharpe, dd float64) {
	sharpe, dd = s.Sharpe, math.Abs(s.MaxDrawdown)
	if math.IsNaN(sharpe) {
		sharpe = math.Inf(-1)
	}
	if math.IsNaN(dd) {
		dd = math.Inf(1)
	}
	return sharpe, dd
}

// Dominates reports whether a is at least as good as b on both objectives
// and better on one.
func (a Score) Dominates(b Score) bool {
	as, ad := a.norm()
	bs, bd := b.norm()
	return as >= bs && ad <= bd && (as > bs || ad < bd)
}

// ParetoRanks sorts scores into non-dominated fronts: rank 0 is the
// Pareto front, rank 1 the front once rank 0 is removed, and so on.
func ParetoRanks(scores []Score) []int {
	n := len(scores)
	ranks := make([]int, n)
	count := make([]int, n)   // how many dominate i
	beats := make([][]int, n) // whom i dominates
	var front []int
	for i := range n {
		for j := range n {
			if i != j && scores[i].Dominates(scores[j]) {
				beats[i] = append(beats[i], j)
			} else if i != j && scores[j].Dominates(scores[i]) {
				count[i]++
			}
		}
		if count[i] == 0 {
			front = append(front, i)
		}
	}
	for r := 0; len(front) > 0; r++ {
		var next []int
		for _, i := range front {
			ranks[i] = r
			for _, j := range beats[i] {
				count[j]--
				if count[j] == 0 {
					next = append(next, j)
				}
			}
		}
		front = next
	}
	return ranks
}

// ParetoFront returns the indices of the non-dominated scores, highest
// Sharpe first (ties: smaller drawdown, then index).
func ParetoFront(scores []Score) []int {
	ranks := ParetoRanks(scores)
	var out []int
	for i, r := range ranks {
		if r == 0 {
			out = append(out, i)
		}
	}
	slices.SortStableFunc(out, func(a, b int) int {
		as, ad := scores[a].norm()
		bs, bd := scores[b].norm()
		if c := cmp.Compare(bs, as); c != 0 {
			return c
		}
		return cmp.Compare(ad, bd)
	})
	return out
}
