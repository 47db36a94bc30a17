package history

import (
	"testing"
	"time"
)

// TestWatchSeesOtherCommits: a Watch's version stays while nothing is
// committed and moves when another connection (here another Store, as
// another process would be) commits to the file; reading does not move
// it.
func TestWatchSeesOtherCommits(t *testing.T) {
	w := openTemp(t)
	if err := w.Write(ctx, "X@1h", synth(10, 1_700_000_000, 3600), WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	r, err := OpenReadOnly(w.path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	watch, err := r.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close()
	v1, err := watch.Version(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Load("X@1h", time.Time{}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if v, err := watch.Version(ctx); err != nil || v != v1 {
		t.Fatalf("version after a read: %d (%v), want %d", v, err, v1)
	}
	if err := w.Write(ctx, "Y@1h", synth(10, 1_700_000_000, 3600), WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if v, err := watch.Version(ctx); err != nil || v == v1 {
		t.Fatalf("version after another connection's commit: %d (%v), want it moved from %d", v, err, v1)
	}
}
