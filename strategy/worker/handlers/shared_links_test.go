//go:build unix

package handlers

import (
	"os"
	"path/filepath"
	"testing"

	"wicket/strategy/ta"
)

// TestSharedColumnsHandedOn: a warm session's next sweep is cut into
// chunks anew, so a worker may need a column only the other computed in
// the sweep before, whose directory is gone. The other links every column
// it holds into the new sweep's directory when its first chunk sets it,
// and the first worker then maps it instead of computing it; the links a
// worker keeps go with its reset.
func TestSharedColumnsHandedOn(t *testing.T) {
	close, lengths := sharedCase()
	a, b := ta.NewMemo(worker0Budget), ta.NewMemo(worker0Budget)
	ca, cb := newSharedColumns(SpillMinBytes), newSharedColumns(SpillMinBytes)
	la, lb := t.TempDir(), t.TempDir()
	ca.links, cb.links = func() string { return la }, func() string { return lb }
	a.SetShared(ca)
	b.SetShared(cb)

	first := t.TempDir()
	ca.setDir(first)
	cb.setDir(first)
	smaAll(t, a, close, lengths[:3])
	smaAll(t, b, close, lengths[3:])
	os.RemoveAll(first) // the sweep ended

	next := t.TempDir()
	cb.setDir(next)
	ca.setDir(next)
	smaAll(t, a, close, lengths[3:])
	if s := a.Stats(); s.Computed["sma"] != 3 || s.Taken != 3 {
		t.Errorf("in the next sweep the first worker computed %d SMAs in all and took %d, want 3 (its own, the sweep before) and 3 (the other's)", s.Computed["sma"], s.Taken)
	}

	b.DropSpilled()
	cb.reset()
	if kept, _ := filepath.Glob(filepath.Join(lb, "*.col")); len(kept) != 0 {
		t.Errorf("%d links kept after the reset", len(kept))
	}
}
