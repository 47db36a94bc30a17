package handlers

import (
	"context"
	"encoding/json"
	"sync"

	"wicket/strategy/ta"
	"wicket/strategy/worker"
)

// withSpill gives memo a spill (fileSpill) for the long columns it evicts,
// so a sweep computes each of its indicators once however few its budget
// holds, and the sweep's shared columns (cols), so its workers compute
// each once between them; before each request it takes the spill's room
// back, and unmaps the shared columns, when little room is left (a worker
// serves one request at a time, so between two no column of either is in
// use). Only in a worker process (worker.IsWorker), where it is made
// before worker.Main sets the limits: its mapping is address space of the
// worker's own, like the runtime's reservations, not the strategy's
// allowance. Without a spill (not a worker, no temporary file, no mmap)
// memo evicts as it would without one.
func withSpill(h worker.Handlers, memo *ta.Memo, cols *sharedColumns) worker.Handlers {
	if !worker.IsWorker() {
		return h
	}
	if cols.reserve(SpillBytes) == nil {
		memo.SetShared(cols)
	}
	s, err := newFileSpill("", SpillBytes)
	if err != nil {
		s = nil
	} else {
		memo.SetSpill(s, SpillMinBytes)
	}
	var mu sync.Mutex
	before := func() {
		mu.Lock()
		defer mu.Unlock()
		if (s == nil || !s.full()) && !cols.full(SpillBytes) {
			return
		}
		memo.DropSpilled()
		cols.reset()
		if s != nil && s.reset() != nil {
			memo.SetSpill(nil, 0) // the file failed: evict as without a spill
			s = nil
		}
	}
	for kind, f := range h {
		h[kind] = func(ctx context.Context, body json.RawMessage) (any, error) {
			before()
			return f(ctx, body)
		}
	}
	return h
}
