package cluster

import (
	"crypto/sha256"
	"sync"
	"time"

	"wicket/strategy/worker"
)

// trialCosts are what a combination of each strategy cost a bar on the
// cluster's workers, measured from its chunks' answers (the
// combinations' own time, worker.SweepChunkResult.Work), by the SHA-256
// of the strategy's source. A sweep cuts its chunks by it (TrialCost).
type trialCosts struct {
	mu sync.Mutex
	m  map[[sha256.Size]byte]time.Duration
}

// maxTrialCosts bounds the strategies a Dispatcher keeps a cost of.
const maxTrialCosts = 1024

// minCostedTrial is the least time a chunk's trials must have taken on
// average for the chunk to measure a bar's cost. A trial also costs a
// part that does not grow with its bars (its setup, metrics and blocks,
// a fresh worker's first columns), 35–170 µs on the demo's series; over
// few bars that part is most of it: the daily sweep (3,653 bars) measured
// 22–60 ns a bar where the hourly one (17,544) measures 12–15 ns, and cut
// the hourly sweep after it into two to five chunks where one does. From
// a millisecond a trial, it is a fifth at most.
const minCostedTrial = time.Millisecond

// note takes the cost a chunk's answer measured: the mean of it and the
// cost measured before, so one chunk on a busy machine moves it halfway.
// A chunk whose trials ran under minCostedTrial each measures nothing.
func (c *trialCosts) note(source string, res worker.SweepChunkResult) {
	n := len(res.Trials) * res.Bars.Count
	if n <= 0 || res.Work <= 0 || res.Work*float64(time.Second) < float64(len(res.Trials))*float64(minCostedTrial) {
		return
	}
	cost := time.Duration(res.Work * float64(time.Second) / float64(n))
	key := sha256.Sum256([]byte(source))
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxTrialCosts {
		c.m = map[[sha256.Size]byte]time.Duration{}
	}
	if old, ok := c.m[key]; ok {
		cost = (old + cost) / 2
	}
	c.m[key] = max(cost, 1)
}

// TrialCost is what a combination of the strategy of source cost a bar
// on this cluster's workers, as its earlier chunks measured it; 0 when
// none ran here.
func (d *Dispatcher) TrialCost(source string) time.Duration {
	key := sha256.Sum256([]byte(source))
	d.costs.mu.Lock()
	defer d.costs.mu.Unlock()
	return d.costs.m[key]
}
