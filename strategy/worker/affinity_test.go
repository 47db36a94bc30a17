package worker

import "testing"

// TestTakeAffinity: a request with an affinity key goes to the idle
// worker that last served that key, not to the one the idle list would
// give; one without a key leaves that worker to it; once that worker is
// gone, the list decides.
func TestTakeAffinity(t *testing.T) {
	p := &Pool{all: map[*proc]bool{}}
	a, b := &proc{exited: make(chan struct{})}, &proc{exited: make(chan struct{})}
	p.idle = []*proc{a, b} // b is taken next without affinity
	p.remember("bars", a)
	if w, err := p.take(t.Context(), "bars"); err != nil || w != a {
		t.Fatalf("take with the key of a gave %p (%v), want a %p", w, err, a)
	}
	p.give(a) // idle: b, a
	if w, _ := p.take(t.Context(), ""); w != b {
		t.Fatalf("take without a key gave %p, want b %p, which is no key's worker", w, b)
	}
	p.give(b)
	if w, _ := p.take(t.Context(), "bars"); w != a {
		t.Fatalf("take with the key of a gave %p, want a %p", w, a)
	}
	a.dead.Store(true)
	p.give(a) // reaped: its keys go with it
	if w, _ := p.take(t.Context(), "bars"); w != b {
		t.Fatalf("take with the key of a dead worker gave %p, want b %p", w, b)
	}
}
