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
// even, 2 to 24), and the splits' logits in increasing order. It returns
// NaN when it is undefined: fewer than two series, too few returns for s
// blocks, or no split with a defined in-sample winner.
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
	masks := splitMasks(s) // the in-sample sets: every choice of s/2 blocks
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
	sc := scratchPool.Get().(*cscvScratch)
	defer scratchPool.Put(sc)
	nIn := grown(&sc.n, len(masks))
	for j, m := range masks {
		nIn[j] = count(m)
	}
	// Pairs are cut into ranges that goroutines work through side by
	// side, at least 256 pairs each.
	parts := max(1, min(runtime.GOMAXPROCS(0), len(masks)/2/256))
	best, less, ties := sc.splitVerdicts(rows, h, masks, nIn, tableRows(s), parts)
	// A split's ω is (1 + less + ties/2) / (N+1): its logit is a function
	// of the integer 2·less + ties, so the splits are counted by that key
	// and each distinct logit computed once, in increasing order.
	n := len(rows)
	byKey := grown(&sc.byKey, 2*n+1)
	clear(byKey)
	splits := 0
	for j := range masks {
		if best[j] >= 0 { // else no combination has a defined in-sample Sharpe ratio here
			byKey[2*less[j]+ties[j]]++
			splits++
		}
	}
	if splits == 0 {
		return math.NaN(), nil
	}
	logits := make([]float64, 0, splits)
	below := 0
	for key, c := range byKey {
		if c == 0 {
			continue
		}
		w := (1 + float64(key)/2) / float64(n+1)
		lam := math.Log(w / (1 - w))
		for range c {
			logits = append(logits, lam)
		}
		if lam <= 0 {
			below += c
		}
	}
	return float64(below) / float64(len(logits)), logits
}

// tableBytes bounds the subset-sum tables splitVerdicts holds at once.
const tableBytes = 8 << 20

// tableRows is how many combinations' subset-sum tables fit in
// tableBytes with s blocks: 1,024 at 16 blocks, at least 1.
func tableRows(s int) int {
	h := s / 2
	per := (1<<h + 1<<(s-h)) * 16
	return max(1, tableBytes/per)
}

// splitVerdicts finds, for each split j (in-sample set masks[j], of
// n[j] returns), its in-sample winner best[j] (-1 when none is defined)
// and how many combinations rank below (less[j]) and level with
// (ties[j]) that winner out of sample.
//
// The splits come in pairs: masks are in increasing order, so the
// complement of masks[j], split j's out-of-sample set, is masks[k-1-j],
// the other split's in-sample set. A pair needs two columns of scores,
// every combination's over each set, and both of its verdicts come from
// those two columns: each combination's score over each set is computed
// once. A column is read from two tables of subset sums (the first h
// blocks', and the rest's), which hold every combination of a group of
// at most group rows; with one group the verdicts take one pass, with
// more the winners come from the first and the ranks from the second.
//
// The pairs are judged by parts goroutines, in sc's storage: the
// verdicts returned are sc's, valid until sc is used again.
func (sc *cscvScratch) splitVerdicts(rows [][]blockStat, h int, masks []uint32, n []int, group, parts int) (best, less, ties []int) {
	k := len(masks)
	best, less, ties = grown(&sc.best, k), grown(&sc.less, k), grown(&sc.ties, k)
	top := grown(&sc.top, k)   // split j's best in-sample score so far
	held := grown(&sc.held, k) // that combination's out-of-sample score
	for j := range best {
		best[j], top[j], less[j], ties[j] = -1, math.Inf(-1), 0, 0
	}
	one := len(rows) <= group
	// Each verdict belongs to one pair, so to one goroutine.
	pairs := k / 2
	parts = max(1, min(parts, pairs))
	cols := sc.columns(parts, min(group, len(rows)))
	each := func(t *subsetTables, judge func(p *pairColumns, j, c int)) {
		if parts == 1 {
			p := cols[0].cut(t.rows)
			for j := range pairs {
				judge(&p, j, k-1-j)
			}
			return
		}
		var wg sync.WaitGroup
		for g := range parts {
			a, b := g*pairs/parts, (g+1)*pairs/parts
			wg.Go(func() {
				p := cols[g].cut(t.rows)
				for j := a; j < b; j++ {
					judge(&p, j, k-1-j)
				}
			})
		}
		wg.Wait()
	}
	// win takes the pair's winners from its columns: split j's from its
	// in-sample column p.in, with its score in p.out out of sample, and
	// the complement c's the other way round. The first wins on ties.
	win := func(t *subsetTables, p *pairColumns, j, c int) {
		ij, vj, ic, vc := t.scores(p, masks[j], masks[c], n[j], n[c], top[j], top[c])
		if ij >= 0 {
			top[j], best[j], held[j] = vj, t.r0+ij, p.out[ij]
		}
		if ic >= 0 {
			top[c], best[c], held[c] = vc, t.r0+ic, p.in[ic]
		}
	}
	// rank counts the combinations below and level with each split's
	// winner in its out-of-sample column, the winner itself left out;
	// a split with no winner counts nothing.
	rank := func(t *subsetTables, p *pairColumns, j, c int) {
		wj, wc := held[j], held[c]
		if best[j] < 0 {
			wj = math.NaN() // below, above and level with nothing
		}
		if best[c] < 0 {
			wc = math.NaN()
		}
		ltj, eqj, ltc, eqc := p.count(wj, wc)
		if i := best[j] - t.r0; best[j] >= 0 && i >= 0 && i < t.rows && p.out[i] == wj {
			eqj--
		}
		if i := best[c] - t.r0; best[c] >= 0 && i >= 0 && i < t.rows && p.in[i] == wc {
			eqc--
		}
		less[j], ties[j] = less[j]+ltj, ties[j]+eqj
		less[c], ties[c] = less[c]+ltc, ties[c]+eqc
	}
	t := &sc.tables
	for r0 := 0; r0 < len(rows); r0 += group {
		t.fill(rows[r0:min(r0+group, len(rows))], h, r0)
		each(t, func(p *pairColumns, j, c int) {
			win(t, p, j, c)
			if one {
				rank(t, p, j, c)
			}
		})
	}
	if one {
		return best, less, ties
	}
	for r0 := 0; r0 < len(rows); r0 += group {
		t.fill(rows[r0:min(r0+group, len(rows))], h, r0)
		each(t, func(p *pairColumns, j, c int) {
			t.scores(p, masks[j], masks[c], n[j], n[c], math.Inf(1), math.Inf(1))
			rank(t, p, j, c)
		})
	}
	return best, less, ties
}

// subsetTables holds, for a group of rows (combinations r0 on), the sum
// and sum of squares of every subset of the first h blocks (lo) and of
// the rest (hi): entry a*rows+i is row i's over the subset whose bit
// mask is a. Sums and sums of squares are apart, so that a column's rows
// are consecutive in each (columnScores reads them four at a time where
// it can).
type subsetTables struct {
	lo, hi   sums
	rows, r0 int
	h        uint
}

type sums struct{ sum, sq []float64 }

// fill builds the tables for rows, reusing t's storage.
func (t *subsetTables) fill(rows [][]blockStat, h, r0 int) {
	s := len(rows[0])
	t.rows, t.r0, t.h = len(rows), r0, uint(h)
	t.lo.grow(len(rows) << h)
	t.hi.grow(len(rows) << (s - h))
	for i, r := range rows {
		t.lo.fillSubsets(r[:h], len(rows), i)
		t.hi.fillSubsets(r[h:], len(rows), i)
	}
}

func (t *sums) grow(n int) { t.sum, t.sq = grown(&t.sum, n), grown(&t.sq, n) }

// fillSubsets writes row i's subset sums of blocks into t (stride
// rows): each subset is a smaller one plus its lowest block.
func (t *sums) fillSubsets(blocks []blockStat, rows, i int) {
	t.sum[i], t.sq[i] = 0, 0
	for a := 1; a < 1<<len(blocks); a++ {
		low := a & -a
		b := blocks[bits.TrailingZeros(uint(low))]
		prev := (a^low)*rows + i
		t.sum[a*rows+i], t.sq[a*rows+i] = t.sum[prev]+b.Sum, t.sq[prev]+b.SumSq
	}
}

// pairColumns are a pair's two columns of scores, one per row: over the
// in-sample set of split j (in) and over its complement (out).
type pairColumns struct{ in, out []float64 }

// cut is p for the first rows rows.
func (p pairColumns) cut(rows int) pairColumns { return pairColumns{p.in[:rows], p.out[:rows]} }

// scores fills p for the blocks in mask m (nm returns) and in its
// complement c (nc), and finds the first row of each column above its
// floor (fm, fc): its index, or -1 when none is, and its score.
func (t *subsetTables) scores(p *pairColumns, m, c uint32, nm, nc int, fm, fc float64) (im int, vm float64, ic int, vc float64) {
	im, vm = t.column(p.in[:t.rows], m, nm, fm)
	ic, vc = t.column(p.out[:t.rows], c, nc, fc)
	return im, vm, ic, vc
}

// column fills dst with every row's score over the blocks in mask m (n
// returns), and finds the first row above floor.
func (t *subsetTables) column(dst []float64, m uint32, n int, floor float64) (int, float64) {
	low := uint32(1)<<t.h - 1
	lo, hi := int(m&low)*t.rows, int(m>>t.h)*t.rows
	return columnScores(dst, t.lo.sum[lo:][:t.rows], t.hi.sum[hi:][:t.rows], t.lo.sq[lo:][:t.rows], t.hi.sq[hi:][:t.rows], n, floor)
}

// columnScores writes srScore(n, loS[i]+hiS[i], loQ[i]+hiQ[i]) to dst[i]
// for every row i and returns the first row whose score is above floor
// and not below any other (-1 and floor when none is above it): the
// rows' own order decides between equal scores. Where the processor has
// AVX2 (columnWide), four rows at a time: the same operations in the same
// order, so the same scores to the bit.
func columnScores(dst, loS, hiS, loQ, hiQ []float64, n int, floor float64) (int, float64) {
	loS, hiS, loQ, hiQ = loS[:len(dst)], hiS[:len(dst)], loQ[:len(dst)], hiQ[:len(dst)]
	best, i0 := -1, 0
	if n >= 2 && len(dst) >= 4 && wideKernels {
		i0 = len(dst) &^ 3
		if i, v := columnWide(dst[:i0], loS, hiS, loQ, hiQ, float64(n)); i >= 0 && v > floor {
			best, floor = i, v
		}
	}
	for i := i0; i < len(dst); i++ {
		v := srScore(n, loS[i]+hiS[i], loQ[i]+hiQ[i])
		dst[i] = v
		if v > floor {
			best, floor = i, v
		}
	}
	return best, floor
}

// count counts the rows whose out-of-sample score is below wj and equal
// to it, and whose in-sample score is below wc and equal to it.
func (p *pairColumns) count(wj, wc float64) (ltj, eqj, ltc, eqc int) {
	out := p.out[:len(p.in)]
	i0 := 0
	if len(out) >= 4 && wideKernels {
		i0 = len(out) &^ 3
		ltj, eqj, ltc, eqc = countWide(p.in[:i0], out[:i0], wj, wc)
	}
	for i := i0; i < len(out); i++ {
		v, u := p.in[i], out[i]
		if u < wj { // written so the compiler need not branch
			ltj++
		}
		if u == wj {
			eqj++
		}
		if v < wc {
			ltc++
		}
		if v == wc {
			eqc++
		}
	}
	return ltj, eqj, ltc, eqc
}

// srScore orders Sharpe ratios over the same number of returns with
// one division and no square root: with n returns of sum s and sum of
// squares q, SR = s / sqrt(d) * sqrt((n-1)/n) where d = n q - s², so
// among series of one length SR orders as s|s| / d. An undefined ratio
// (no variance: d at the rounding noise of n q) is -Inf, below every
// defined one.
//
// Each product is rounded on its own (the conversions forbid the compiler
// to fuse one into the next operation), as columnWide's are.
func srScore(n int, sum, sq float64) float64 {
	nq := float64(float64(n) * sq)
	d := nq - float64(sum*sum)
	if n < 2 || !(d > srFloor*nq) {
		return math.Inf(-1)
	}
	return float64(sum*math.Abs(sum)) / d
}

// srFloor is the share of n q below which srScore takes d for rounding
// noise.
const srFloor = 1e-10

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

// median is the median of x, which is in increasing order.
func median(x []float64) float64 {
	n := len(x)
	if n%2 == 1 {
		return x[n/2]
	}
	return (x[n/2-1] + x[n/2]) / 2
}

func fmtPercent(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }

// splitPlans are the in-sample sets of each block count up to PBOBlocks
// asked for so far (splitMasks), built once: at 16 blocks, the 12,870 of
// 65,536 masks (51 KB). Larger counts, which only a ledger's own audits
// can ask for, are built each time rather than kept (24 blocks: 11 MB).
var splitPlans sync.Map // int -> []uint32

// splitMasks is every bit mask of s/2 of s blocks, in increasing order
// (so that masks[k-1-j] is the complement of masks[j]). The slice may be
// shared: callers only read it.
func splitMasks(s int) []uint32 {
	if m, ok := splitPlans.Load(s); ok {
		return m.([]uint32)
	}
	h := s / 2
	full := uint32(1)<<s - 1
	var masks []uint32
	for m := uint32(0); m <= full; m++ {
		if bits.OnesCount32(m) == h {
			masks = append(masks, m)
		}
	}
	if s > PBOBlocks {
		return masks
	}
	m, _ := splitPlans.LoadOrStore(s, masks)
	return m.([]uint32)
}

// cscvScratch is the storage of one CSCV computation, kept between
// computations (scratchPool): a sweep's PBO at 16 blocks needs about 2
// MB of it, which a warm session would otherwise allocate, clear and
// collect on every sweep.
type cscvScratch struct {
	tables                     subsetTables
	cols                       []pairColumns
	n, best, less, ties, byKey []int
	top, held                  []float64
}

var scratchPool = sync.Pool{New: func() any { return new(cscvScratch) }}

// columns are parts pairs of columns of rows scores each.
func (sc *cscvScratch) columns(parts, rows int) []pairColumns {
	sc.cols = slices.Grow(sc.cols[:0], parts)[:parts]
	for i := range sc.cols {
		c := &sc.cols[i]
		c.in, c.out = grown(&c.in, rows), grown(&c.out, rows)
	}
	return sc.cols
}

// grown is *buf with length n, reallocated only when it is too short;
// its contents are not cleared.
func grown[T any](buf *[]T, n int) []T {
	*buf = slices.Grow((*buf)[:0], n)[:n]
	return *buf
}
