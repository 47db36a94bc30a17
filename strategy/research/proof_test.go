package research

import (
	"regexp"
	"strings"
	"testing"
)

// seedless is a lookahead_check with its proof seed left out.
func seedless(check string) string {
	return regexp.MustCompile(`seed [0-9a-f]{16}`).ReplaceAllString(check, "seed S")
}

// TestSweepProvesItsWinner: on two workers a sweep may start the proof of
// the best combination so far when a worker runs out of chunks, and keep
// it when that one stays the winner; either way the verdict is the
// winner's own, the one a single worker (which never starts a proof
// early) reports: each verdict names the cuts drawn for its combination.
// Which chunk answers first decides which way a sweep goes, so the test
// sweeps four series and logs which way each went.
func TestSweepProvesItsWinner(t *testing.T) {
	verdicts := map[string]string{}
	for _, size := range []int{1, 2} {
		var tm SweepTiming
		l := NewLocal(Config{ProofSeed: fixedSeed, Project: demoProject(t), Pool: newPool(t, size), Timing: func(x SweepTiming) { tm = x }})
		for _, series := range []string{"BTC-USD@1h", "ETH-USD@1h", "SOL-USD@1h", "SPY@1h"} {
			res, err := l.Sweep(ctxT(t), SweepRequest{StrategyRef: templateRef(t, "sma_cross"), Series: series, Grid: twoWorkerGrid}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(res.LookaheadCheck, "passed (") || tm.Chunks != 2 || tm.Workers != size {
				t.Fatalf("%d workers, %s: lookahead_check %q over %d chunks on %d workers", size, series, res.LookaheadCheck, tm.Chunks, tm.Workers)
			}
			if size == 1 {
				if tm.ProofEarly {
					t.Errorf("%s: one worker started the proof early", series)
				}
				verdicts[series] = res.LookaheadCheck
				continue
			}
			t.Logf("%s: winner %v, proof started early and kept: %v", series, res.Top[0].Params, tm.ProofEarly)
			// Each proof draws its own seed: the verdicts agree but in it.
			if seedless(res.LookaheadCheck) != seedless(verdicts[series]) {
				t.Errorf("%s: two workers report %q, one worker %q for the same winner", series, res.LookaheadCheck, verdicts[series])
			}
		}
	}
}
