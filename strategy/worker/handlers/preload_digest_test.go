//go:build unix

package handlers

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"wicket/strategy"
	"wicket/strategy/history"
	"wicket/strategy/history/historytest"
	"wicket/strategy/worker"
)

// TestPreloadDigest: the shared bars file a preload writes is named by,
// and its answer carries, the digest of the bars it holds, whether the
// store kept that digest (a series written whole, read whole), or the
// file is hashed (a series appended to since, a part of one).
func TestPreloadDigest(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir) // the worker's link directory
	path := filepath.Join(dir, "history.db")
	s, err := history.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	all := historytest.Sine("X@1h", 10_000)
	if err := s.Write(t.Context(), "X@1h", all.Slice(0, 9_000), history.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	n := 0
	check := func(name string, want strategy.Bars, from, to string) {
		t.Helper()
		n++
		share := filepath.Join(dir, name)
		if err := os.Mkdir(share, 0o700); err != nil {
			t.Fatal(err)
		}
		var c barCache // fresh: read from the store
		defer func() {
			for _, e := range c.entries {
				e.m.drop()
				e.unlink(barEntry{})
			}
			for _, ws := range c.stores {
				ws.close()
			}
		}()
		seen, file, err := c.preload(worker.BarsRange{HistoryPath: path, Series: "X@1h", From: from, To: to, ShareDir: share, ShareFrom: 1})
		if err != nil || file == "" {
			t.Fatalf("%s: preload %+v %q %v", name, seen, file, err)
		}
		hashed, err := digestFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if seen.Digest != want.Digest() || hashed != want.Digest() || seen.Count != want.Len() || file != sharedName(share, want.Digest()) {
			t.Errorf("%s: preload saw %+v in %s hashing to %s; want the %d bars' digest %s", name, seen, filepath.Base(file), hashed, want.Len(), want.Digest())
		}
	}
	check("written whole", all.Slice(0, 9_000), "", "")
	at := func(i int) string { return time.Unix(all.Time[i], 0).UTC().Format(time.RFC3339) }
	check("a part", all.Slice(100, 9_000), at(100), "")
	if err := s.Append(t.Context(), "X@1h", all.Slice(9_000, 10_000), history.AppendOptions{Source: history.SourceImport}); err != nil {
		t.Fatal(err)
	}
	check("appended to", all, "", "")
	check("the part written whole", all.Slice(0, 9_000), "", at(8_999))
}
