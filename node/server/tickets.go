package server

import (
	"context"
	"sync"
	"time"

	"wicket/node"
)

// resolvedKept bounds how many resolved tickets stay in memory; older ones
// are read back from the journal.
const resolvedKept = 4096

// tickets tracks commands from acceptance to outcome.
type tickets struct {
	mu       sync.Mutex
	byID     map[string]*ticket
	resolved []string // resolved ids, oldest first
}

type ticket struct {
	out  node.Outcome
	done chan struct{} // closed when out is final
}

func newTickets() *tickets { return &tickets{byID: map[string]*ticket{}} }

// open registers a pending ticket.
func (t *tickets) open(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.byID[id] = &ticket{out: node.Outcome{Ticket: id, Status: node.Pending}, done: make(chan struct{})}
}

// drop forgets a ticket that was never queued.
func (t *tickets) drop(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.byID, id)
}

// resolve records a ticket's final outcome and wakes its waiters.
func (t *tickets) resolve(id string, out node.Outcome) {
	t.mu.Lock()
	defer t.mu.Unlock()
	tk := t.byID[id]
	if tk == nil {
		return
	}
	out.Ticket = id
	tk.out = out
	close(tk.done)
	t.resolved = append(t.resolved, id)
	if len(t.resolved) > resolvedKept {
		delete(t.byID, t.resolved[0])
		t.resolved = t.resolved[1:]
	}
}

// wait returns a ticket's outcome, waiting up to d (or until ctx ends)
// while it is pending; ok is false for a ticket not in memory. A ticket
// resolved during the wait is answered from the ticket itself, so it cannot
// be lost to eviction in between.
func (t *tickets) wait(ctx context.Context, id string, d time.Duration) (out node.Outcome, ok bool) {
	t.mu.Lock()
	tk := t.byID[id]
	if tk == nil {
		t.mu.Unlock()
		return node.Outcome{}, false
	}
	out = tk.out
	t.mu.Unlock()
	if out.Status != node.Pending || d <= 0 {
		return out, true
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-tk.done:
		return tk.out, true // final: written before done was closed, never after
	case <-timer.C:
	case <-ctx.Done():
	}
	return out, true
}
