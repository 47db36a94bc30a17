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

// note sets the detail of a ticket not yet resolved: a command waiting
// for its turn at a real venue says so.
func (t *tickets) note(id, detail string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	tk := t.byID[id]
	if tk == nil {
		return
	}
	select {
	case <-tk.done:
	default:
		tk.out.Detail = detail
	}
}

// settle replaces the outcome of a ticket resolved pending with the one
// reconciliation settled it to. A waiter holding the old ticket keeps the
// outcome it had; later reads get the settled one.
func (t *tickets) settle(id string, out node.Outcome) {
	t.mu.Lock()
	defer t.mu.Unlock()
	tk := t.byID[id]
	if tk == nil || tk.out.Status != node.Pending {
		return
	}
	select {
	case <-tk.done:
	default:
		return // not resolved yet: resolve gives its outcome
	}
	done := make(chan struct{})
	close(done)
	out.Ticket = id
	t.byID[id] = &ticket{out: out, done: done}
}

// wait returns a ticket's outcome, waiting up to d (or until ctx ends)
// while it is pending; ok is false for a ticket not in memory. A ticket
// resolved during the wait is answered from the ticket itself, so it cannot
// be lost to eviction in between.
func (t *tickets) wait(ctx context.Context, id string, d time.Duration) (out node.Outcome, ok bool) {
	tk, out, ok := t.get(id)
	if !ok {
		return node.Outcome{}, false
	}
	return tk.block(ctx, out, d), true
}

// get returns a ticket in memory and its outcome now.
func (t *tickets) get(id string) (*ticket, node.Outcome, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	tk := t.byID[id]
	if tk == nil {
		return nil, node.Outcome{}, false
	}
	return tk, tk.out, true
}

// block waits up to d (or until ctx ends) for a ticket whose outcome was
// out when it was got, if that was pending.
func (tk *ticket) block(ctx context.Context, out node.Outcome, d time.Duration) node.Outcome {
	if out.Status != node.Pending || d <= 0 {
		return out
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-tk.done:
		return tk.out // final: written before done was closed, never after
	case <-timer.C:
	case <-ctx.Done():
	}
	return out
}
