package script

import (
	"math"

	"wicket/strategy/ta"
)

// The lookahead proof's prefix runs share the full run's catalog
// indicators. A prefix run used to compute every ta.* call over its own
// bars; a call whose inputs are, in memory, the full run's inputs of the
// same call cut to the prefix (the prefix's own bar columns, which are
// the full run's bars sliced, or a series the prefix run adopted as the
// full run's: run.adopt) now takes the full run's output cut to the
// prefix instead. That is exact because every catalog function is
// prefix-exact, its value at a bar a function of its inputs at that bar
// and before (TestCatalogPrefixExact, TestCatalogPrefixExactLong and
// TestCatalogPrefixExactWithGaps check every catalog entry): over the
// same inputs the prefix run would compute the same bits.
//
// It does not weaken the proof against a strategy's leaks: a series that
// took bars after the cut (a host function's, a Starlark helper's, an
// arithmetic series over one) differs from the full run's on the prefix,
// so the prefix run keeps its own column, and a catalog call over it is
// computed over the prefix as before, and compared. Only the catalog's
// own prefix-exactness is taken from its tests instead of rechecked on
// every run. Everything else (Starlark code, host functions, arithmetic
// on series, crosses) is computed as before.

// taCall is how a traced full run computed a catalog series: the entry,
// its parameters, its inputs' and outputs' values. Every output series of
// the call points to it.
type taCall struct {
	e       *ta.Entry
	params  []float64
	inputs  [][]float64
	outputs [][]float64
}

// recordCall returns the record of a catalog call for a prefix run to
// share, when r is a traced full run (not a prefix run, nor a portfolio
// skipping gaps); nil otherwise.
func (r *run) recordCall(e *ta.Entry, cols [][]float64, p []float64, outs [][]float64) *taCall {
	if !r.tracing || r.against != nil || r.gaps || len(r.built) >= r.trackCap {
		return nil
	}
	return &taCall{e: e, params: p, inputs: cols, outputs: outs}
}

// shared returns the full run's outputs of e over p cut to r's bars when
// r is a prefix run of the proof, the next series it traces are the full
// run's outputs of the same call (the same entry and parameters), and
// every input is, in memory, that call's input cut to r's bars; nil
// otherwise (then the call is computed).
func (r *run) shared(e *ta.Entry, cols [][]float64, p []float64) [][]float64 {
	if !r.tracing || r.against == nil || r.gaps || r.n == 0 || len(cols) == 0 {
		return nil
	}
	k := len(r.built)
	if k+len(e.Outputs) > min(len(r.against), r.trackCap) {
		return nil
	}
	c := r.against[k].call
	if c == nil || c.e != e || len(c.params) != len(p) || len(c.inputs) != len(cols) || len(c.outputs) != len(e.Outputs) {
		return nil
	}
	for j, v := range p {
		if math.Float64bits(v) != math.Float64bits(c.params[j]) {
			return nil
		}
	}
	for j, in := range cols {
		full := c.inputs[j]
		if len(in) != r.n || len(full) < r.n || &in[0] != &full[0] {
			return nil
		}
	}
	outs := make([][]float64, len(c.outputs))
	for j, o := range c.outputs {
		if r.against[k+j].call != c || len(o) < r.n {
			return nil
		}
		outs[j] = o[:r.n:r.n]
	}
	return outs
}

// prefixColumnKey is the memo key of a prefix run's bar column name when
// its values are, in memory, the first ones of the full run's column of
// that name: the full column's key and the prefix's length name the same
// contents without hashing them again (the largest cost left in a prefix
// run that shares its indicators). ok is false otherwise.
func (r *run) prefixColumnKey(name string, vals []float64) (key ta.Key, ok bool) {
	if len(r.against) == 0 || len(vals) == 0 || name == "time" {
		return key, false
	}
	full := r.against[0].run
	if full == nil || full == r || full.memo != r.memo { // keys mean something within their memo
		return key, false
	}
	full.mu.Lock()
	fs := full.cols[name]
	full.mu.Unlock()
	if fs == nil || len(fs.vals) < len(vals) || &fs.vals[0] != &vals[0] {
		return key, false
	}
	return r.memo.Key("bars.prefix\x00"+name, []ta.Key{fs.key}, []float64{float64(len(vals))}), true
}

// sharedFlags are the flags of a prefix run's signals over its n bars
// taken from from, the full run's trace, by signalNames' order: for each
// signal that is a cross (crosses) of the same entry over columns whose
// first n values are, in memory, those of the columns the full run's same
// signal was the cross of, the full run's flags cut to n; nil for the
// others (computed). All nil when from is nil.
func sharedFlags(crosses [3]*lazyCross, n int, from *Trace) (out [3][]bool) {
	if from == nil || from.Signals == nil || n == 0 {
		return out
	}
	full := [3][]bool{from.Signals.Long, from.Signals.Short, from.Signals.Exit}
	for j, c := range crosses {
		f := from.crosses[j]
		if c == nil || f == nil || c.e != f.e || c.dir != f.dir || len(full[j]) < n {
			continue
		}
		if sameStart(c.cols[0], f.cols[0], n) && sameStart(c.cols[1], f.cols[1], n) {
			out[j] = full[j][:n:n]
		}
	}
	return out
}

// sameStart reports whether pre is n values of memory that full starts
// with.
func sameStart(pre, full []float64, n int) bool {
	return n > 0 && len(pre) == n && len(full) >= n && &pre[0] == &full[0]
}
