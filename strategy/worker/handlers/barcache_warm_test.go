package handlers

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"wicket/strategy"
	"wicket/strategy/history"
	"wicket/strategy/worker"
)

// TestPreloadWarm: a worker's second preload of a range the store has not
// changed since reads nothing: it serves the same mapping, and links the
// shared file the new sweep's directory needs from the worker's own link
// to the first sweep's file (the bars' encoding, byte for byte). Once another connection commits to the store, the next
// preload reads the bars again and sees the change.
func TestPreloadWarm(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("shared bars are mapped on unix only")
	}
	demo := demoStore(t) // made once for the package, under the real TMPDIR
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir) // the worker's link directory
	store := filepath.Join(dir, "history.db")
	src, err := history.OpenReadOnly(demo)
	if err != nil {
		t.Fatal(err)
	}
	bars, err := src.Load("SPY@1d", time.Time{}, time.Time{})
	src.Close()
	if err != nil {
		t.Fatal(err)
	}
	s, err := history.Open(store)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Write(t.Context(), "SPY@1d", bars, history.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	shareDir := func(name string) string {
		d := filepath.Join(dir, name)
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		return d
	}
	var c barCache
	r := worker.BarsRange{HistoryPath: store, Series: "SPY@1d", ShareDir: shareDir("one")}
	seen, path, err := c.preload(r)
	if err != nil || path == "" {
		t.Fatalf("first preload: %+v %q %v", seen, path, err)
	}
	m, link := c.entries[0].m, c.entries[0].link
	first, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(r.ShareDir); err != nil { // the sweep is over
		t.Fatal(err)
	}

	r.ShareDir = shareDir("two")
	seen2, path2, err := c.preload(r)
	if err != nil || seen2 != seen || path2 == "" || filepath.Dir(path2) != r.ShareDir {
		t.Fatalf("second preload: %+v %q %v; want %+v in %s", seen2, path2, err, seen, r.ShareDir)
	}
	if c.entries[0].m != m {
		t.Error("the second preload of an unchanged store mapped the bars again")
	}
	if again, err := os.Stat(path2); err != nil || !os.SameFile(first, again) {
		t.Errorf("the second sweep's shared file is not a link to the first's (%v)", err)
	}
	if d, err := digestFile(path2); err != nil || d != seen.Digest {
		t.Errorf("the shared file written from the mapping hashes to %q (%v), want %q", d, err, seen.Digest)
	}

	// Another connection changes the series: the bars are read again.
	more := (&bars).Slice(0, bars.Len()-1)
	if err := s.Delete(t.Context(), "SPY@1d"); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(t.Context(), "SPY@1d", more, history.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	r.ShareDir = shareDir("three")
	seen3, path3, err := c.preload(r)
	if err != nil || path3 == "" {
		t.Fatalf("preload after a write: %+v %q %v", seen3, path3, err)
	}
	if seen3.Digest != more.Digest() || seen3.Count != more.Len() {
		t.Errorf("preload after a write saw %+v, want the %d bars written (%s)", seen3, more.Len(), more.Digest())
	}
	if c.entries[0].m == m {
		t.Error("preload after a write served the old mapping")
	}
	if _, err := os.Stat(link); !os.IsNotExist(err) {
		t.Errorf("the link of the bars the cache dropped is still there (%v)", err)
	}
}

// TestPreloadStoreMadeAgain: a store removed and made again at the same
// path (which the kept connection does not see) is opened again, so a
// preload reads the new file's bars, not the cached ones.
func TestPreloadStoreMadeAgain(t *testing.T) {
	src, err := history.OpenReadOnly(demoStore(t))
	if err != nil {
		t.Fatal(err)
	}
	bars, err := src.Load("SPY@1d", time.Time{}, time.Time{})
	src.Close()
	if err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(t.TempDir(), "history.db")
	write := func(b strategy.Bars) {
		t.Helper()
		s, err := history.Open(store)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if err := s.Write(t.Context(), "SPY@1d", b, history.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	write(bars)
	var c barCache
	r := worker.BarsRange{HistoryPath: store, Series: "SPY@1d"}
	if seen, _, err := c.preload(r); err != nil || seen.Digest != bars.Digest() {
		t.Fatalf("first preload: %+v %v", seen, err)
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(store + suffix)
	}
	fewer := (&bars).Slice(1, bars.Len())
	write(fewer)
	if seen, _, err := c.preload(r); err != nil || seen.Digest != fewer.Digest() {
		t.Fatalf("preload of the store made again: %+v %v; want its %d bars", seen, err, fewer.Len())
	}
}
