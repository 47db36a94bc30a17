package ledger

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// enteredWitness is a Witness that says when it was asked to keep an
// anchor, and keeps it.
type enteredWitness struct {
	keeper
	entered chan struct{}
}

func (w *enteredWitness) Keep(ctx context.Context, a Anchor) error {
	close(w.entered)
	return w.keeper.Keep(ctx, a)
}

// TestWitnessKeepsBesideTheAnchorFile: an append hands its anchor to the
// witness while the anchor file is written and synced (the two do not
// wait for each other), returns only once both are done, and an anchor
// file that cannot be written still leaves the anchor with the witness
// and the rows reported unanchored.
func TestWitnessKeepsBesideTheAnchorFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "research.db")
	w := &enteredWitness{entered: make(chan struct{})}
	l, err := Open(path, Options{Key: testKey, Witness: w})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	fail := false
	l.anchorFile = func(a Anchor) error {
		select {
		case <-w.entered: // the witness runs while the file is written
		case <-time.After(30 * time.Second):
			return errors.New("the witness was not asked while the anchor file was written")
		}
		if fail {
			return errors.New("disk full")
		}
		return l.anchor(a)
	}
	if _, err := l.Append(context.Background(), []Row{row("sma_cross", 0.01, "s")}); err != nil {
		t.Fatal(err)
	}
	if len(w.held) != 1 || w.held[0].Seq != 1 || w.held[0].MAC == "" {
		t.Fatalf("once the append returned, the witness held %+v", w.held)
	}
	anchors, _, err := ReadAnchors(path)
	if err != nil || len(anchors) != 1 || anchors[0].Seq != 1 {
		t.Fatalf("the anchor file: %+v %v", anchors, err)
	}
	w.entered, fail = make(chan struct{}), true
	id, err := l.Append(context.Background(), []Row{row("sma_cross", 0.02, "s")})
	if !errors.Is(err, ErrUnanchored) || id == "" {
		t.Fatalf("an anchor file that cannot be written: run id %q, %v", id, err)
	}
	if len(w.held) != 2 || w.held[1].Seq != 2 {
		t.Fatalf("the witness holds %+v: it must keep the anchor the file could not", w.held)
	}
}
