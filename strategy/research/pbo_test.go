package research

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
)

// blocksOf builds a return series of 2 bars per block: each block's pair
// is (mean+d, mean-d).
func blocksOf(d float64, means ...float64) []float64 {
	var r []float64
	for _, m := range means {
		r = append(r, m+d, m-d)
	}
	return r
}

// TestCSCVWorkedExample is a hand-worked case: S = 4 blocks, 3
// combinations. A is good in the first half and bad in the second, B the
// reverse, C steady. Splits {0,1} and {2,3} pick A (resp. B) in sample,
// which is then the worst out of sample: ω = 1/4, λ = ln(1/3). The other
// four splits mix a good and a bad block for A and B (Sharpe 0.005 /
// sqrt(4(0.015² + 0.01²)/3) ≈ 0.24) and pick C (0.005 / sqrt(4·0.01²/3) ≈
// 0.43), which is the best out of sample too: ω = 3/4, λ = ln 3. So PBO =
// 2/6, and the median logit is ln 3.
func TestCSCVWorkedExample(t *testing.T) {
	const d = 0.01
	returns := [][]float64{
		blocksOf(d, 0.02, 0.02, -0.01, -0.01), // A
		blocksOf(d, -0.01, -0.01, 0.02, 0.02), // B
		blocksOf(d, 0.005, 0.005, 0.005, 0.005),
	}
	pbo, logits := CSCV(returns, 4)
	if math.Abs(pbo-1.0/3) > 1e-12 {
		t.Fatalf("PBO %v, want 1/3", pbo)
	}
	if len(logits) != 6 {
		t.Fatalf("%d splits, want C(4,2) = 6", len(logits))
	}
	below, above := 0, 0
	for _, l := range logits {
		switch {
		case math.Abs(l-math.Log(1.0/3)) < 1e-12:
			below++
		case math.Abs(l-math.Log(3)) < 1e-12:
			above++
		default:
			t.Fatalf("logit %v is neither ln(1/3) nor ln 3", l)
		}
	}
	if below != 2 || above != 4 {
		t.Fatalf("%d logits at ln(1/3) and %d at ln 3, want 2 and 4", below, above)
	}
	if m := median(logits); math.Abs(m-math.Log(3)) > 1e-12 {
		t.Fatalf("median logit %v, want ln 3", m)
	}
	// A series that always wins in and out of sample: no overfitting.
	steady := [][]float64{blocksOf(d, 0.03, 0.031, 0.029, 0.03), blocksOf(d, 0, 0.001, -0.001, 0), blocksOf(d, -0.01, -0.011, -0.009, -0.01)}
	if pbo, _ := CSCV(steady, 4); pbo != 0 {
		t.Fatalf("PBO of a dominant combination %v, want 0", pbo)
	}
	// Undefined: one combination, or too few returns.
	if pbo, _ := CSCV(returns[:1], 4); !math.IsNaN(pbo) {
		t.Fatalf("one combination: PBO %v, want NaN", pbo)
	}
	if pbo, _ := CSCV([][]float64{{0.1, 0.2}, {0.3, 0.1}}, 4); !math.IsNaN(pbo) {
		t.Fatalf("two returns for four blocks: PBO %v, want NaN", pbo)
	}
}

// referenceCSCV is CSCV computed the plain way: for each split, the
// in-sample and out-of-sample series are the concatenated blocks, and
// every Sharpe ratio is computed from those returns directly.
func referenceCSCV(returns [][]float64, s int) float64 {
	t := len(returns[0])
	m := t / s
	off := t - m*s
	sharpe := func(x []float64) float64 {
		var mean float64
		for _, v := range x {
			mean += v
		}
		mean /= float64(len(x))
		var ss float64
		for _, v := range x {
			ss += (v - mean) * (v - mean)
		}
		return mean / math.Sqrt(ss/float64(len(x)-1))
	}
	var splits, below int
	var choose func(start int, picked []int)
	choose = func(start int, picked []int) {
		if len(picked) == s/2 {
			in := map[int]bool{}
			for _, b := range picked {
				in[b] = true
			}
			isSR, oosSR := make([]float64, len(returns)), make([]float64, len(returns))
			for i, r := range returns {
				var is, oos []float64
				for b := range s {
					blk := r[off+b*m : off+(b+1)*m]
					if in[b] {
						is = append(is, blk...)
					} else {
						oos = append(oos, blk...)
					}
				}
				isSR[i], oosSR[i] = sharpe(is), sharpe(oos)
			}
			best := 0
			for i := range isSR {
				if isSR[i] > isSR[best] {
					best = i
				}
			}
			rank := 1.0
			for i, v := range oosSR {
				if i != best && v < oosSR[best] {
					rank++
				}
			}
			w := rank / float64(len(returns)+1)
			if math.Log(w/(1-w)) <= 0 {
				below++
			}
			splits++
			return
		}
		for b := start; b < s; b++ {
			choose(b+1, append(picked, b))
		}
	}
	choose(0, nil)
	return float64(below) / float64(splits)
}

// TestCSCVMatchesReference: the block-sum CSCV equals the plain one on
// random series (no ties), leftover bars at the start included; the
// last trials have S = 16, whose 12,870 splits are judged by several
// goroutines when there is more than one core.
func TestCSCVMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 7 {
		n, s, bars := 5+trial*4, 8, 203+trial
		if trial >= 5 {
			n, s, bars = 7, 16, 401+trial
		}
		returns := make([][]float64, n)
		for i := range returns {
			drift := rng.NormFloat64() * 0.001
			returns[i] = make([]float64, bars)
			for j := range returns[i] {
				returns[i][j] = drift + rng.NormFloat64()*0.01
			}
		}
		got, logits := CSCV(returns, s)
		want := referenceCSCV(returns, s)
		splits := map[int]int{8: 70, 16: 12870}[s]
		if len(logits) != splits || math.Abs(got-want) > 1e-12 {
			t.Fatalf("trial %d: PBO %v over %d splits, reference %v over %d", trial, got, len(logits), want, splits)
		}
	}
}

// TestSplitVerdictsDirect: the verdicts from the column pairs and
// subset tables equal those of each split judged directly, summing its
// blocks row by row, with ties (equal rows), undefined rows (no
// variance), every way of grouping the rows, one to three goroutines,
// and one scratch reused throughout (each case starts from the storage
// the last one left). The block sums are small integers, so the sums are
// exact in any order and a tie is a tie both ways.
func TestSplitVerdictsDirect(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	sc := new(cscvScratch) // one for every case: each starts from the storage the last one left
	for _, s := range []int{16, 4, 8} {
		rows := make([][]blockStat, 23)
		for i := range rows {
			switch {
			case i%7 == 3: // a copy of an earlier row
				rows[i] = rows[i-2]
				continue
			case i%5 == 4: // no variance anywhere: undefined in every split
				rows[i] = make([]blockStat, s)
				for b := range rows[i] {
					rows[i][b] = blockStat{N: 3}
				}
				continue
			}
			rows[i] = make([]blockStat, s)
			for b := range rows[i] {
				sum := float64(rng.IntN(7) - 3)
				rows[i][b] = blockStat{N: 3, Sum: sum, SumSq: sum*sum + float64(rng.IntN(3))}
			}
		}
		h := s / 2
		var masks []uint32
		for m := uint32(0); m < 1<<s; m++ {
			if bits.OnesCount32(m) == h {
				masks = append(masks, m)
			}
		}
		n := make([]int, len(masks))
		for j := range n {
			n[j] = 3 * h
		}
		score := func(r []blockStat, m uint32) float64 {
			var sum, sq float64
			for b := range s {
				if m&(1<<b) != 0 {
					sum += r[b].Sum
					sq += r[b].SumSq
				}
			}
			return srScore(3*h, sum, sq)
		}
		wantBest, wantLess, wantTies := make([]int, len(masks)), make([]int, len(masks)), make([]int, len(masks))
		for j, m := range masks {
			best, top := -1, math.Inf(-1)
			for i, r := range rows {
				if v := score(r, m); v > top {
					best, top = i, v
				}
			}
			wantBest[j] = best
			if best < 0 {
				continue
			}
			c := uint32(1)<<s - 1 ^ m
			w := score(rows[best], c)
			for i, r := range rows {
				if v := score(r, c); i != best && v < w {
					wantLess[j]++
				} else if i != best && v == w {
					wantTies[j]++
				}
			}
		}
		tied := 0
		for _, x := range wantTies {
			tied += x
		}
		if tied == 0 {
			t.Fatalf("s=%d: no ties to test", s)
		}
		for _, group := range []int{1, 3, 7, len(rows), 1000} {
			for _, parts := range []int{1, 2, 3} {
				best, less, ties := sc.splitVerdicts(rows, h, masks, n, group, parts)
				if !slices.Equal(best, wantBest) || !slices.Equal(less, wantLess) || !slices.Equal(ties, wantTies) {
					t.Fatalf("s=%d, groups of %d rows, %d goroutines: verdicts differ from the direct ones", s, group, parts)
				}
			}
		}
	}
}
