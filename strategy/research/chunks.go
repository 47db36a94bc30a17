package research

import (
	"time"

	"wicket/strategy/worker"
)

// chunks splits combinations [0, count) into requests over base for
// workers workers, in the sizes chunkSizes gives for the plan's bars and
// the cost of a combination's bar (p.cost: measured on a cluster). On a
// cluster, as in process, a chunk's round trip, its compiling and its
// answer cost the same whatever its size, so a sweep is not cut finer
// than a worker's worth.
//
// The chunks take the combinations in p.order (evalOrder's, set by
// plan); a chunk's trial j at offset off (the combinations of the chunks
// before it) is combination p.index(off + j).
func (p *plan) chunks(base worker.SweepChunk, workers int) []worker.SweepChunk {
	var out []worker.SweepChunk
	worth := worthChunkAt(p.barCount(), p.cost)
	lo := 0
	for _, size := range chunkSizes(p.count, workers, worth) {
		req := base
		req.Combos = make([]map[string]any, 0, size)
		for i := lo; i < lo+size; i++ {
			req.Combos = append(req.Combos, p.combo(p.index(i)))
		}
		out = append(out, req)
		lo += size
	}
	return out
}

// chunkSizes cuts count combinations into chunks for workers workers. It
// takes them in shrinking sizes (guided scheduling): each takes a share of
// what is left, so the workers start on large chunks, which amortise a
// request's overhead, and finish on small ones, which leave no worker idle
// long; none smaller than an eighth of a worker's share, since past that a
// chunk's round trip costs more than the balance it buys. But a chunk of
// fewer than worth combinations (worthChunk: under minWorkerShare of work)
// costs more in its round trip, its compiling and the worker's wait for
// the next than it buys in balance or progress, so where guided scheduling
// would cut such chunks the combinations are cut into equal chunks of at
// least worth each instead, as many as make whole rounds of the workers:
// a small sweep on one worker is one chunk.
func chunkSizes(count, workers, worth int) []int {
	if count <= 0 {
		return nil
	}
	workers = max(1, workers)
	least := max(1, count/(8*workers))
	if worth > least {
		n := max(1, count/worth)
		if n >= workers {
			n -= n % workers
		}
		sizes := make([]int, n)
		for i := range sizes {
			sizes[i] = count / n
			if i < count%n {
				sizes[i]++
			}
		}
		return sizes
	}
	var sizes []int
	for lo := 0; lo < count; {
		size := min(count-lo, max(least, min(maxChunk, (count-lo+2*workers-1)/(2*workers))))
		sizes = append(sizes, size)
		lo += size
	}
	return sizes
}

// worthChunk is the fewest combinations over bars bars worth a chunk of
// their own: minWorkerShare of work, as sweepWork estimates it (a worker
// is given no less; a chunk needs no more). 0, no floor, when the bars are
// not known.
func worthChunk(bars int) int { return worthChunkAt(bars, 0) }

// worthChunkAt is worthChunk for combinations that cost cost a bar, as
// measured (a cluster's coster). A cost below barTrialCost (0: none
// measured) counts as barTrialCost, sweepWork's: a dear strategy's
// chunks are smaller, to balance the workers better, but a cheap one's
// no larger than in process, where workersFor would still spread them.
func worthChunkAt(bars int, cost time.Duration) int {
	if bars <= 0 {
		return 0
	}
	per := max(sweepWork(1, bars), time.Duration(bars)*cost)
	return int((minWorkerShare + per - 1) / per)
}

// coster is a Dispatcher that measures what a combination of a strategy
// costs a bar on its workers (a cluster, from its chunks' answers); 0
// when it has not.
type coster interface {
	TrialCost(source string) time.Duration
}

// index is the combination evaluated at position pos of the chunks.
func (p *plan) index(pos int) int {
	if p.order == nil {
		return pos
	}
	return p.order[pos]
}

// evalOrder is the order a sweep evaluates its count combinations in (a
// position's combination index), or nil for their own order, in which the
// last swept knob varies fastest, for workers whose indicator caches hold
// cols columns of the series. On long series a cache holds fewer columns
// than a grid's last knob has values: in their own order the combinations
// would ask for the last knob's indicators in a cycle longer than the
// cache, and every request would miss (a million-bar SMA costs about 3 ms,
// a third of a combination). So when the last knob has more values than
// there is room for, its values are taken in blocks that fit: every
// combination of the first block, the other knobs in their order, then
// every one of the next block. Room is left for a column per other knob
// and one more: the cache evicts the least recently used column, and
// when another knob's value changes, its old column was used after the
// block's first. A strategy whose indicators follow its knobs then
// computes each of a block's indicators once per block, not once per
// combination.
func evalOrder(count int, axes [][]any, cols int) []int {
	if len(axes) == 0 {
		return nil
	}
	n := len(axes[len(axes)-1])
	block := max(1, cols-len(axes))
	if n <= block {
		return nil
	}
	order := make([]int, 0, count)
	for lo := 0; lo < n; lo += block {
		hi := min(n, lo+block)
		for outer := 0; outer < count/n; outer++ {
			for v := lo; v < hi; v++ {
				order = append(order, outer*n+v)
			}
		}
	}
	return order
}
