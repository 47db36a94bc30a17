package cluster

import (
	"testing"
	"time"

	"wicket/strategy/worker"
)

// TestShortTrialsMeasureNoCost: a chunk measures what a combination
// costs a bar only when its trials ran long enough that the part of a
// trial that does not grow with its bars is a small share; the mean of
// such measurements is kept, and a short chunk after them changes
// nothing.
func TestShortTrialsMeasureNoCost(t *testing.T) {
	chunk := func(trials, bars int, work time.Duration) worker.SweepChunkResult {
		return worker.SweepChunkResult{Trials: make([]worker.Trial, trials), Bars: worker.BarsSeen{Count: bars}, Work: work.Seconds()}
	}
	d := &Dispatcher{}
	c, cost := &d.costs, func() time.Duration { return d.TrialCost("s") }
	// 100 trials of 3,653 bars at 60 ns a bar: 0.22 ms a trial.
	c.note("s", chunk(100, 3653, 100*3653*60*time.Nanosecond))
	if got := cost(); got != 0 {
		t.Fatalf("trials of 0.22 ms measured %v a bar", got)
	}
	// 100 trials of 17,544 bars at 100 ns a bar: 1.75 ms a trial.
	c.note("s", chunk(100, 17544, 100*17544*100*time.Nanosecond))
	if got := cost(); got != 100*time.Nanosecond {
		t.Fatalf("trials of 1.75 ms measured %v a bar, want 100ns", got)
	}
	c.note("s", chunk(100, 17544, 100*17544*60*time.Nanosecond))
	if got := cost(); got != 80*time.Nanosecond {
		t.Fatalf("a second measurement: %v a bar, want the mean, 80ns", got)
	}
	c.note("s", chunk(100, 500, 100*500*200*time.Nanosecond))
	if got := cost(); got != 80*time.Nanosecond {
		t.Fatalf("a short chunk moved the cost to %v", got)
	}
}
