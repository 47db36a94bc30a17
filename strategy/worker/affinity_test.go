package worker

import "testing"

// TestTakeAffinity: a request with an affinity key goes to the idle
// worker that last served that key, not to the one the idle list would
// give; without a key, or once that worker is gone, the list decides.
func TestTakeAffinity(t *testing.T) {
	p := &Pool{all: map[*proc]bool{}}
	a, b := &proc{exited: make(chan struct{})}, &proc{exited: make(chan struct{})}
	p.idle = []*proc{a, b} // b is taken next without affinity
	p.remember("bars", a)
	if w, err := p.take(t.Context(), "bars"); err != nil || w != a {
		t.Fatalf("take with the key of a gave %p (%v), want a %p", w, err, a)
	}
	p.give(a)
	if w, _ := p.take(t.Context(), ""); w != a {
		t.Fatalf("take without a key gave %p, want the last idle a %p", w, a)
	}
	a.dead.Store(true)
	p.give(a) // reaped: its keys go with it
	if w, _ := p.take(t.Context(), "bars"); w != b {
		t.Fatalf("take with the key of a dead worker gave %p, want b %p", w, b)
	}
}
