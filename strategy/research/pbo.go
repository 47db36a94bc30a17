package research

import (
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"sync"

	"wicket/strategy/worker"
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

// blockStat is one block of a combination's returns, as the workers
// send it (worker.BlockStats).
type blockStat = worker.BlockStat

// pboBlocksFor is the block count a sweep of count combinations asks its
// workers for: PBOBlocks when PBO will be reported, else 0 (none).
func pboBlocksFor(count int) int {
	if count >= PBOMinCombinations {
		return PBOBlocks
	}
	return 0
}

// blockStats is worker.BlockStats, what each worker computes per trial.
func blockStats(returns []float64, s int) []blockStat { return worker.BlockStats(returns, s) }

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

// cscv is CSCV over per-block statistics; a nil row (a failed
// combination) is left out. The splits are judged by splitVerdicts.
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
	if len(rows) < 2 {
		return math.NaN(), nil
	}
	for _, r := range rows[1:] {
		for b := range r {
			if r[b].N != rows[0][b].N {
				return math.NaN(), nil // not one bar matrix
			}
		}
	}
	h := s / 2
	full := uint32(1)<<s - 1
	var masks []uint32 // the in-sample sets: every choice of s/2 blocks
	for m := uint32(0); m <= full; m++ {
		if bits.OnesCount32(m) == h {
			masks = append(masks, m)
		}
	}
	// Every row has the same count per block, so a set of blocks has one
	// count for all of them: its size times the count when the blocks are
	// equal, as BlockStats cuts them.
	equal := true
	for _, b := range rows[0] {
		equal = equal && b.N == rows[0][0].N
	}
	count := func(m uint32) int {
		if equal {
			return bits.OnesCount32(m) * rows[0][0].N
		}
		n := 0
		for b := range s {
			if m&(1<<b) != 0 {
				n += rows[0][b].N
			}
		}
		return n
	}
	nIn, nOut := make([]int, len(masks)), make([]int, len(masks))
	for j, m := range masks {
		nIn[j], nOut[j] = count(m), count(full&^m)
	}
	// Each split's verdict depends on that split alone, so the splits are
	// cut into ranges that goroutines work through side by side.
	best := make([]int, len(masks))
	less := make([]int, len(masks))
	ties := make([]int, len(masks))
	parts := max(1, min(runtime.GOMAXPROCS(0), len(masks)/512))
	var wg sync.WaitGroup
	for g := range parts {
		a, b := g*len(masks)/parts, (g+1)*len(masks)/parts
		wg.Go(func() {
			splitVerdicts(rows, h, full, masks[a:b], nIn[a:b], nOut[a:b], best[a:b], less[a:b], ties[a:b])
		})
	}
	wg.Wait()
	var logits []float64
	below := 0
	for j := range masks {
		if best[j] < 0 {
			continue // no combination has a defined in-sample Sharpe ratio here
		}
		w := (1 + float64(less[j]) + float64(ties[j])/2) / float64(len(rows)+1)
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

// splitVerdicts finds, for each split (in-sample set masks[j], nIn[j] and
// nOut[j] returns in and out of sample), its in-sample winner best[j] (-1
// when none is defined) and how many combinations rank below (less[j])
// and level with (ties[j]) that winner out of sample.
//
// It runs in two passes over the combinations, each over the splits: the
// first finds the winners, the second ranks them. A combination's sums
// over any set of blocks come from two tables of subset sums (of the
// first h blocks and of the rest), so a split costs a few additions per
// combination.
func splitVerdicts(rows [][]blockStat, h int, full uint32, masks []uint32, nIn, nOut, best, less, ties []int) {
	s := len(rows[0])
	lo, hi := make(subsetSums, 1<<h), make(subsetSums, 1<<(s-h))
	// Each split's halves as indexes into the two tables, in sample and
	// out of sample, with their counts.
	type half struct {
		lo, hi uint32
		n      int
	}
	in, out := make([]half, len(masks)), make([]half, len(masks))
	for j, m := range masks {
		c := full &^ m
		in[j] = half{m & (1<<h - 1), m >> h, nIn[j]}
		out[j] = half{c & (1<<h - 1), c >> h, nOut[j]}
	}
	score := func(x half) float64 {
		a, b := lo[x.lo], hi[x.hi]
		return srScore(x.n, a.sum+b.sum, a.sq+b.sq)
	}
	// Pass 1: each split's in-sample winner (the first on ties).
	bestScore := make([]float64, len(masks))
	for j := range masks {
		best[j], bestScore[j] = -1, math.Inf(-1)
	}
	for i, r := range rows {
		lo.fill(r[:h])
		hi.fill(r[h:])
		for j, x := range in {
			if v := score(x); v > bestScore[j] {
				best[j], bestScore[j] = i, v
			}
		}
	}
	// The winners' out-of-sample Sharpe ratios, each winner's tables
	// filled once for all the splits it won.
	won := make([][]int, len(rows))
	for j, i := range best {
		if i >= 0 {
			won[i] = append(won[i], j)
		}
	}
	winTest := make([]float64, len(masks))
	for i, js := range won {
		if len(js) == 0 {
			continue
		}
		lo.fill(rows[i][:h])
		hi.fill(rows[i][h:])
		for _, j := range js {
			winTest[j] = score(out[j])
		}
	}
	// Pass 2: how many combinations rank below (and level with) each
	// split's winner out of sample.
	for i, r := range rows {
		lo.fill(r[:h])
		hi.fill(r[h:])
		for j, x := range out {
			if best[j] < 0 || best[j] == i {
				continue
			}
			v, w := score(x), winTest[j]
			lt, eq := 0, 0 // written so the compiler need not branch
			if v < w {
				lt = 1
			}
			if v == w {
				eq = 1
			}
			less[j] += lt
			ties[j] += eq
		}
	}
}

// subsetSums holds, for every subset of k blocks (a k-bit mask), their
// sum and sum of squares.
type subsetSums []struct{ sum, sq float64 }

// fill computes the table for blocks: each subset is a smaller one plus
// its lowest block.
func (t subsetSums) fill(blocks []blockStat) {
	for a := 1; a < len(t); a++ {
		low := a & -a
		b := blocks[bits.TrailingZeros(uint(low))]
		t[a].sum = t[a^low].sum + b.Sum
		t[a].sq = t[a^low].sq + b.SumSq
	}
}

// srScore orders Sharpe ratios over the same number of returns with
// one division and no square root: with n returns of sum s and sum of
// squares q, SR = s / sqrt(d) * sqrt((n-1)/n) where d = n q - s², so
// among series of one length SR orders as s|s| / d. An undefined ratio
// (no variance: d at the rounding noise of n q) is -Inf, below every
// defined one.
func srScore(n int, sum, sq float64) float64 {
	nq := float64(n) * sq
	d := nq - sum*sum
	if n < 2 || !(d > 1e-10*nq) {
		return math.Inf(-1)
	}
	return sum * math.Abs(sum) / d
}

// overfitting builds a sweep's report from its trials' blocks (s is what
// the workers were asked for; 0 when the sweep was too small).
func overfitting(trials []*worker.Trial, s int) *Overfitting {
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
