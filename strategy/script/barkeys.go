package script

import (
	"sync"

	"wicket/strategy"
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
	// source names the contents of bars in every process (their digest):
	// a run's column that is one of bars' columns whole is keyed by
	// source and its name, not hashed, so the provenance keys of what is
	// computed from it are the same in every worker that reads those bars
	// (ta.Shared). Other columns are hashed as without a source.
	source string
	bars   strategy.Bars
}

// SourceBarKeys is a BarKeys for runs over bars, whose contents source
// names wherever they are read (a digest of every column: equal sources
// must mean equal bars).
func SourceBarKeys(source string, bars strategy.Bars) *BarKeys {
	return &BarKeys{source: source, bars: bars}
}

// whole says whether vals is bars' column name itself, not a copy or a
// part of it.
func (b *BarKeys) whole(name string, vals []float64) bool {
	col, _ := b.bars.Column(name)
	return len(col) == len(vals) && len(col) > 0 && &col[0] == &vals[0]
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
	if b.source != "" && b.whole(name, vals) {
		k = memo.Key("bars.source\x00"+b.source+"\x00"+name, nil, nil)
	} else {
		k = memo.ValuesKey(vals)
	}
	b.mu.Lock()
	if b.keys == nil {
		b.keys = map[barColumn]ta.Key{}
	}
	b.keys[c] = k
	b.mu.Unlock()
	return k
}
