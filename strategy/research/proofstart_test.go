package research

import (
	"runtime"
	"sync/atomic"
	"testing"
)

// TestStartProofRunsBeforeReturning: startProof returns only once its
// goroutine runs the check, so that the proof's request leaves before the
// caller's own work (the PBO, the ledger) takes every processor. On one
// processor a goroutine that was merely started would not run until the
// caller waited on something.
func TestStartProofRunsBeforeReturning(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var entered atomic.Bool
	release := make(chan struct{})
	pr := startProof(7, func() (string, error) {
		entered.Store(true)
		<-release // the request's round trip
		return "passed", nil
	})
	if !entered.Load() {
		t.Fatal("startProof returned before its goroutine ran the check")
	}
	close(release)
	if v := <-pr.done; v.check != "passed" || v.err != nil || pr.index != 7 {
		t.Fatalf("verdict %+v of proof %d", v, pr.index)
	}
}
