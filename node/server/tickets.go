package server

import (
	"sync"

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

// get returns a ticket's current outcome and a channel closed when it is
// final (nil when it already is), or ok false for a ticket not in memory.
func (t *tickets) get(id string) (out node.Outcome, done <-chan struct{}, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	tk := t.byID[id]
	if tk == nil {
		return node.Outcome{}, nil, false
	}
	if tk.out.Status == node.Pending {
		return tk.out, tk.done, true
	}
	return tk.out, nil, true
}
