package agent

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// poolUsed is what the pool accounts and what its stores really hold.
func poolUsed(p *runPool, stores ...*runStore) (accounted, held int) {
	p.mu.Lock()
	accounted = p.used
	p.mu.Unlock()
	for _, s := range stores {
		s.mu.Lock()
		for _, r := range s.runs {
			held += len(r.body)
		}
		s.mu.Unlock()
	}
	return accounted, held
}

// TestRunPoolBoundsTheProcess: the run stores of one process (one per HTTP
// session) share a byte bound; past it the process's oldest run goes,
// whichever session holds it, the newest is always kept, and the pool's
// accounting matches what the stores hold through count evictions and
// replacements.
func TestRunPoolBoundsTheProcess(t *testing.T) {
	report := func(n int) map[string]any { return map[string]any{"pad": strings.Repeat("x", n)} }
	size := func(n int) int { b, _ := json.Marshal(report(n)); return len(b) }
	p := &runPool{limit: 3 * size(1000)}
	a, b := newRunStoreIn(p), newRunStoreIn(p)
	a.put("a1", storedRun{kind: "backtest", report: report(1000)})
	b.put("b1", storedRun{kind: "backtest", report: report(1000)})
	a.put("a2", storedRun{kind: "backtest", report: report(1000)})
	if _, ok := a.get("a1"); !ok {
		t.Fatal("a1 forgotten while the pool had room")
	}
	b.put("b2", storedRun{kind: "backtest", report: report(1000)}) // over: a1, the oldest, goes
	if _, ok := a.get("a1"); ok {
		t.Error("the process's oldest run was kept past the pool's bound")
	}
	for _, k := range []struct {
		s  *runStore
		id string
	}{{b, "b1"}, {a, "a2"}, {b, "b2"}} {
		if r, ok := k.s.get(k.id); !ok || r.report["pad"] != strings.Repeat("x", 1000) {
			t.Errorf("%s lost or changed", k.id)
		}
	}
	if got, want := a.ids(), []string{"a2"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("a's ids %v, want %v", got, want)
	}
	// One run larger than the whole pool: kept alone.
	a.put("huge", storedRun{kind: "backtest", report: report(10 * 1000)})
	if _, ok := a.get("huge"); !ok {
		t.Error("the newest run was not kept")
	}
	if acc, held := poolUsed(p, a, b); acc != held || held != size(10*1000) {
		t.Errorf("pool accounts %d bytes, stores hold %d, want %d", acc, held, size(10*1000))
	}

	// Count evictions and replacements keep the accounting true, and the
	// entry list stays bounded by what is kept.
	q := &runPool{limit: maxPoolBytes}
	c := newRunStoreIn(q)
	for i := 0; i < 5*poolCompactMin; i++ {
		c.put(fmt.Sprint("r", i%(maxStoredRuns+7)), storedRun{kind: "backtest", report: report(i % 50)})
	}
	if acc, held := poolUsed(q, c); acc != held {
		t.Errorf("after count evictions and replacements the pool accounts %d bytes, the store holds %d", acc, held)
	}
	q.mu.Lock()
	n := len(q.entries)
	q.mu.Unlock()
	if n > 2*poolCompactMin {
		t.Errorf("%d pool entries for %d kept runs", n, len(c.ids()))
	}
	if len(c.ids()) != maxStoredRuns {
		t.Errorf("%d runs kept, want %d", len(c.ids()), maxStoredRuns)
	}
}
