package handlers

import (
	"context"
	"encoding/json"
	"slices"
	"sync"

	"wicket/strategy/ta"
	"wicket/strategy/worker"
)

// withSpill gives memo a spill (fileSpill) for the long columns it evicts,
// so a sweep computes each of its indicators once however few its budget
// holds, and the sweep's shared columns (cols), so its workers compute
// each once between them (scoped). Only in a worker process
// (worker.IsWorker), where it is made before worker.Main sets the limits:
// its mapping is address space of the worker's own, like the runtime's
// reservations, not the strategy's allowance. Without a spill (not a
// worker, no temporary file, no mmap) memo evicts as it would without
// one.
func withSpill(h worker.Handlers, memo *ta.Memo, cols *sharedColumns, cache *barCache) worker.Handlers {
	if !worker.IsWorker() {
		return h
	}
	if cols.reserve(SpillBytes) == nil {
		memo.SetShared(cols)
	}
	s, err := newFileSpill("", SpillBytes)
	if err != nil {
		s = nil
	}
	return scoped(h, memo, cols, s, cache)
}

// keepsColumns are the request kinds whose evicted columns are worth
// their room in the spill: a sweep's, whose combinations ask for the
// same columns again and again, here and in the session's next sweep
// of the same bars.
var keepsColumns = []string{worker.KindSweep, worker.KindPortfolioSweep}

// scoped sets memo's spill (s; nil for none) and cols up for each request
// of h. Before each it takes the spill's room back, and unmaps the shared
// columns, when little room is left (a worker serves one request at a
// time, so between two no column of either is in use). A request of
// another kind than keepsColumns (the winner's lookahead proof, a
// backtest) spills nothing and publishes nothing (coolSpill,
// cols.readOnlyNow): its proof computes every indicator again over some
// 36 prefixes of the bars, columns no later request asks for, which
// would fill the spill and the shared room and so make the next request
// drop the columns a warm session's next sweep would have found (a
// million-bar proof wrote 200 MB there). It still reads what is kept:
// the winner's columns. A sweep chunk spills only columns as long as its
// bars (sweepSpill): the prefix columns a backtest's proof left in the
// memo's budget are dropped when the chunk pushes them out. (The winner's
// proof alone runs with a memo of its own: backtest.go.)
//
// A backtest (the winner's proof among them) lets the pages of the
// shared columns go from the worker's memory before it runs and again
// when it ends (coolShared): the sweep's columns the memo kept resident
// are not what its prefix runs read, and the ones its full run read,
// held by the proof's own memo, would otherwise stay resident into the
// next sweep, which faults in what it reads again either way.
func scoped(h worker.Handlers, memo *ta.Memo, cols *sharedColumns, s *fileSpill, cache *barCache) worker.Handlers {
	var mu sync.Mutex
	before := func(kind string) {
		mu.Lock()
		defer mu.Unlock()
		if (s != nil && s.full()) || cols.full(SpillBytes) {
			memo.DropSpilled()
			cols.reset()
			if s != nil && s.reset() != nil {
				s = nil // the file failed: evict as without a spill
			}
		}
		switch {
		case s == nil:
			memo.SetSpill(nil, 0)
		case kind == worker.KindSweep:
			memo.SetSpill(sweepSpill{s, cache}, SpillMinBytes)
		case slices.Contains(keepsColumns, kind):
			memo.SetSpill(s, SpillMinBytes)
		default:
			memo.SetSpill(coolSpill{s}, SpillMinBytes)
		}
		if kind != worker.KindSweep { // a chunk sets its sweep's directory
			cols.readOnlyNow()
		}
	}
	for kind, f := range h {
		h[kind] = func(ctx context.Context, body json.RawMessage) (any, error) {
			before(kind)
			if kind == worker.KindBacktest {
				coolShared(cols)
				defer coolShared(cols)
			}
			return f(ctx, body)
		}
	}
	return h
}

// sweepSpill is the spill of a sweep chunk: it keeps the columns as long
// as the chunk's bars (the cache's latest) and has no room for others.
type sweepSpill struct {
	s     *fileSpill
	cache *barCache
}

func (w sweepSpill) Put(cols [][]float64) ([][]float64, bool) {
	n := w.cache.latestLen()
	for _, c := range cols {
		if len(c) != n {
			return nil, false
		}
	}
	return w.s.Put(cols)
}

func (w sweepSpill) Cool(views [][]float64) { w.s.Cool(views) }

// coolSpill is the spill of a request whose columns are not kept: it has
// no room for them (the memo drops what it evicts), and lets the pages of
// the kept ones go when they are evicted, as the spill does.
type coolSpill struct{ s *fileSpill }

func (coolSpill) Put([][]float64) ([][]float64, bool) { return nil, false }
func (c coolSpill) Cool(views [][]float64)            { c.s.Cool(views) }
