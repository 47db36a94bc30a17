package worker

import (
	"runtime"
	"testing"
)

// TestProcsFollowTheWorkAtHand: in a pool of two workers that shares the
// cores out (Config.Procs 0), a request sent while no other is under way
// gives its worker every core, and one sent beside another half of them
// (a sweep's two chunks at once, then its winner's proof alone), except
// a backtest's, whose proof spreads over every core; a pool with Procs
// set keeps its workers at that.
func TestProcsFollowTheWorkAtHand(t *testing.T) {
	cpus := runtime.NumCPU()
	if cpus < 2 {
		t.Skip("one core: every request has it all")
	}
	p := newPool(t, Config{Size: 2})
	alone, err := Call[struct{}, int](ctxT(t), p, "procs", struct{}{})
	if err != nil || alone != cpus {
		t.Fatalf("a request alone ran with GOMAXPROCS %d (%v), want %d", alone, err, cpus)
	}
	p.slots <- struct{}{} // another request under way
	beside, err := Call[struct{}, int](ctxT(t), p, "procs", struct{}{})
	p.slots <- struct{}{} // a backtest's slot, held as doOn holds it
	proof := p.procs(KindBacktest)
	<-p.slots
	<-p.slots
	if proof != cpus {
		t.Errorf("a backtest beside another request would run with GOMAXPROCS %d, want every core (%d): its proof spreads", proof, cpus)
	}
	if err != nil || beside != cpus/2 {
		t.Fatalf("a request beside another ran with GOMAXPROCS %d (%v), want %d", beside, err, cpus/2)
	}
	fixed := newPool(t, Config{Size: 2, Procs: 1})
	if n, err := Call[struct{}, int](ctxT(t), fixed, "procs", struct{}{}); err != nil || n != 1 {
		t.Fatalf("a pool of Procs 1 ran a request with GOMAXPROCS %d (%v)", n, err)
	}
}
