package optimize

import (
	"math"
	"slices"
	"testing"
)

func TestParetoHandExample(t *testing.T) {
	scores := []Score{
		{Sharpe: 1.5, MaxDrawdown: 0.30},        // 0: front (best Sharpe)
		{Sharpe: 1.2, MaxDrawdown: 0.10},        // 1: front
		{Sharpe: 1.0, MaxDrawdown: 0.20},        // 2: dominated by 1 and 5 → rank 2
		{Sharpe: 0.8, MaxDrawdown: 0.05},        // 3: front (least drawdown)
		{Sharpe: 0.7, MaxDrawdown: 0.25},        // 4: dominated by 2 → rank 3
		{Sharpe: 1.2, MaxDrawdown: 0.15},        // 5: dominated by 1 (tie on Sharpe)
		{Sharpe: math.NaN(), MaxDrawdown: 0.01}, // 6: NaN Sharpe ranks worst but its drawdown is the least
		{Sharpe: 1.0, MaxDrawdown: -0.20},       // 7: a negative drawdown compares by magnitude: equals 2 → rank 2
	}
	want := []int{0, 0, 2, 0, 3, 1, 0, 2}
	if got := ParetoRanks(scores); !slices.Equal(got, want) {
		t.Fatalf("ranks %v, want %v", got, want)
	}
	if got := ParetoFront(scores); !slices.Equal(got, []int{0, 1, 3, 6}) {
		t.Fatalf("front %v, want [0 1 3 6]", got)
	}
	if (Score{1, 0.1}).Dominates(Score{1, 0.1}) {
		t.Fatal("a score dominates its equal")
	}
}
