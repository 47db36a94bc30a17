package research

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
)

// The probability of backtest overfitting (PBO) by combinatorially
// symmetric cross-validation (CSCV): Bailey, Borwein, López de Prado and
// Zhu, "The Probability of Backtest Overfitting", Journal of Computational
// Finance 20(4), 2017.
//
// The sweep's N combinations each have a per-bar return series over the
// same T bars. CSCV cuts the bars into S equal blocks (the oldest T mod S
// bars are left out) and, for every one of the C(S, S/2) ways to choose
// half the blocks as the in-sample set J (the rest, J̄, out of sample):
// picks n*, the combination with the best Sharpe ratio on J; takes n*'s
// relative rank ω on J̄ (its rank among the N out-of-sample Sharpe ratios,
// 1 the worst, ties at their mid rank, divided by N+1); and its logit
// λ = ln(ω / (1-ω)). PBO is the share of splits with λ <= 0: how often
// the in-sample best is no better than the median out of sample.
const (
	// PBOBlocks is S, the number of blocks.
	PBOBlocks = 16
	// PBOMinCombinations is the smallest sweep PBO is reported for.
	PBOMinCombinations = 16
)

// Overfitting is a sweep's probability of backtest overfitting.
type Overfitting struct {
	// PBO is the share of the splits whose in-sample winner ranked at or
	// below the median out of sample; null when not computed.
	PBO          *float64 `json:"pbo"`
	Blocks       int      `json:"blocks"`       // S
	Splits       int      `json:"splits"`       // C(S, S/2) in-sample/out-of-sample splits
	Combinations int      `json:"combinations"` // N, the successful combinations compared
	BarsPerBlock int      `json:"bars_per_block"`
	// MedianLogit is the median λ over the splits: below 0, the in-sample
	// winner tends to be below the median out of sample.
	MedianLogit *float64 `json:"median_logit"`
	Note        string   `json:"note"`
}

// blockStat is one block of a combination's per-bar returns: the count,
// sum and sum of squares, all a Sharpe ratio over a union of blocks needs.
type blockStat struct {
	N     int     `json:"n"`
	Sum   float64 `json:"s"`
	SumSq float64 `json:"q"`
}

// pboBlocksFor is the block count a sweep of count combinations asks its
// workers for: PBOBlocks when PBO will be reported, else 0 (none).
func pboBlocksFor(count int) int {
	if count >= PBOMinCombinations {
		return PBOBlocks
	}
	return 0
}

// blockStats cuts returns into s equal blocks, leaving out the oldest
// len(returns) mod s; nil when there are fewer than 2 returns per block.
func blockStats(returns []float64, s int) []blockStat {
	if s < 2 || len(returns) < 2*s {
		return nil
	}
	m := len(returns) / s
	off := len(returns) - m*s
	out := make([]blockStat, s)
	for b := range out {
		st := blockStat{N: m}
		for _, r := range returns[off+b*m : off+(b+1)*m] {
			st.Sum += r
			st.SumSq += r * r
		}
		out[b] = st
	}
	return out
}

// CSCV computes the probability of backtest overfitting of the return
// series (one per combination, all of the same length) with s blocks (s
// even, 2 to 24). It returns NaN when it is undefined: fewer than two
// series, too few returns for s blocks, or no split with a defined
// in-sample winner.
func CSCV(returns [][]float64, s int) (pbo float64, logits []float64) {
	blocks := make([][]blockStat, len(returns))
	for i, r := range returns {
		blocks[i] = blockStats(r, s)
	}
	return cscv(blocks, s)
}

// sharpeOf is mean/std (ddof 1) from a count, sum and sum of squares; NaN
// without variance.
func sharpeOf(n int, sum, sumSq float64) float64 {
	if n < 2 {
		return math.NaN()
	}
	fn := float64(n)
	mean := sum / fn
	v := (sumSq - fn*mean*mean) / (fn - 1)
	if !(v > 1e-300) {
		return math.NaN()
	}
	return mean / math.Sqrt(v)
}

// cscv is CSCV over per-block statistics; a nil row (a failed
// combination) is left out.
func cscv(blocks [][]blockStat, s int) (float64, []float64) {
	if s < 2 || s%2 != 0 || s > 24 {
		return math.NaN(), nil
	}
	var rows [][]blockStat
	for _, b := range blocks {
		if len(b) == s {
			rows = append(rows, b)
		}
	}
	n := len(rows)
	if n < 2 {
		return math.NaN(), nil
	}
	// Totals per combination; a split's out-of-sample sums are the totals
	// less its in-sample sums.
	type tot struct {
		n          int
		sum, sumSq float64
	}
	totals := make([]tot, n)
	for i, r := range rows {
		for _, b := range r {
			totals[i].n += b.N
			totals[i].sum += b.Sum
			totals[i].sumSq += b.SumSq
		}
	}
	test := make([]float64, n)
	idx := make([]int, 0, s/2)
	var logits []float64
	below := 0
	for mask := uint32(0); mask < 1<<s; mask++ {
		if bits.OnesCount32(mask) != s/2 {
			continue
		}
		idx = idx[:0]
		for b := range s {
			if mask&(1<<b) != 0 {
				idx = append(idx, b)
			}
		}
		best, bestSR := -1, math.Inf(-1)
		for i, r := range rows {
			var cnt int
			var sum, sq float64
			for _, b := range idx {
				cnt += r[b].N
				sum += r[b].Sum
				sq += r[b].SumSq
			}
			if sr := sharpeOf(cnt, sum, sq); sr > bestSR {
				best, bestSR = i, sr
			}
			t := totals[i]
			test[i] = sharpeOf(t.n-cnt, t.sum-sum, t.sumSq-sq)
		}
		if best < 0 {
			continue // no combination has a defined in-sample Sharpe ratio here
		}
		w := relRank(test, best)
		lam := math.Log(w / (1 - w))
		logits = append(logits, lam)
		if lam <= 0 {
			below++
		}
	}
	if len(logits) == 0 {
		return math.NaN(), nil
	}
	return float64(below) / float64(len(logits)), logits
}

// relRank is ω: the mid rank of test[k] among test (1 the worst; an
// undefined value ranks below every defined one) over len(test)+1.
func relRank(test []float64, k int) float64 {
	key := func(x float64) float64 {
		if math.IsNaN(x) {
			return math.Inf(-1)
		}
		return x
	}
	v := key(test[k])
	less, ties := 0, 0
	for i, x := range test {
		switch x := key(x); {
		case i == k:
		case x < v:
			less++
		case x == v:
			ties++
		}
	}
	rank := 1 + float64(less) + float64(ties)/2
	return rank / float64(len(test)+1)
}

// overfitting builds a sweep's report from its trials' blocks (s is what
// the workers were asked for; 0 when the sweep was too small).
func overfitting(trials []*trial, s int) *Overfitting {
	o := &Overfitting{Blocks: PBOBlocks}
	if s == 0 {
		o.Note = fmt.Sprintf("not computed: the probability of backtest overfitting needs a sweep of at least %d combinations", PBOMinCombinations)
		return o
	}
	o.Blocks = s
	blocks := make([][]blockStat, 0, len(trials))
	for _, t := range trials {
		if t != nil && t.Error == "" && len(t.Blocks) == s {
			blocks = append(blocks, t.Blocks)
			o.Combinations++
			o.BarsPerBlock = t.Blocks[0].N
		}
	}
	pbo, logits := cscv(blocks, s)
	o.Splits = len(logits)
	if math.IsNaN(pbo) {
		o.Note = fmt.Sprintf("undefined: it needs at least 2 successful combinations with %d returns or more (2 per block) and a defined Sharpe ratio in sample", 2*s)
		return o
	}
	o.PBO = sig(pbo)
	o.MedianLogit = sig(median(logits))
	o.Note = fmt.Sprintf("probability of backtest overfitting (CSCV, Bailey, Borwein, López de Prado and Zhu, 2017): in %s of %d splits of the bars into %d blocks, "+
		"the combination with the best in-sample Sharpe ratio ranked at or below the median out of sample; near 0 the sweep's winner generalises, at 0.5 or above it is likely overfit",
		fmtPercent(pbo), len(logits), s)
	return o
}

func median(x []float64) float64 {
	c := append([]float64(nil), x...)
	slices.Sort(c)
	n := len(c)
	if n%2 == 1 {
		return c[n/2]
	}
	return (c[n/2-1] + c[n/2]) / 2
}

func fmtPercent(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }
