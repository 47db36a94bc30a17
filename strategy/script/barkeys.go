package script

import (
	"sync"

	"wicket/strategy/ta"
)

// BarKeys remembers the memo keys of bar columns by identity (the
// column's first element and length), so the runs of many loads of a
// strategy over the same bars hash each column once instead of once per
// run. Give it (Options.BarKeys) only where the bars are never modified
// while it is in use, as in a sweep chunk, whose bars the worker's cache
// holds; a zero BarKeys is ready to use and safe for concurrent runs.
type BarKeys struct {
	mu   sync.Mutex
	keys map[barColumn]ta.Key
}

type barColumn struct {
	memo  *ta.Memo // keys are only meaningful within the memo that made them
	first *float64
	n     int
	name  string
}

// key returns vals' content key under memo, computed once per column.
func (b *BarKeys) key(memo *ta.Memo, name string, vals []float64) ta.Key {
	if b == nil || len(vals) == 0 || name == "time" { // the time column is built per run
		return memo.ValuesKey(vals)
	}
	c := barColumn{memo, &vals[0], len(vals), name}
	b.mu.Lock()
	k, ok := b.keys[c]
	b.mu.Unlock()
	if ok {
		return k
	}
	k = memo.ValuesKey(vals)
	b.mu.Lock()
	if b.keys == nil {
		b.keys = map[barColumn]ta.Key{}
	}
	b.keys[c] = k
	b.mu.Unlock()
	return k
}
