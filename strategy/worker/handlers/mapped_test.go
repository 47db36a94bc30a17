package handlers

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"wicket/strategy/backtest"
	"wicket/strategy/history"
	"wicket/strategy/ta"
	"wicket/strategy/templates"
	"wicket/strategy/worker"
)

// TestSharedBars: the params request's preload writes the bars of its
// range (whole, or a part) from the store to a shared file and serves
// them from its mapping (not below the request's ShareFrom: then it only
// reads them); another worker's cache maps that file (the same bars,
// digest for digest) and keeps serving the range, a winner's backtest
// included, once the file and the store are gone. A mapping the cache
// evicts stays mapped until the request reading it lets go.
func TestSharedBars(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "history.db")
	src, err := history.OpenReadOnly(demoStore(t))
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
	if err := s.Write(t.Context(), "SPY@1d", bars, history.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	want := bars.Digest()
	share := filepath.Join(dir, "share")
	if err := os.Mkdir(share, 0o700); err != nil {
		t.Fatal(err)
	}

	var first barCache
	seen, path, err := first.preload(worker.BarsRange{HistoryPath: store, Series: "SPY@1d", ShareDir: share})
	if err != nil || seen.Digest != want || path == "" {
		t.Fatalf("preload: %+v %q %v", seen, path, err)
	}
	if first.entries[0].m == nil && runtime.GOOS != "windows" {
		t.Error("the worker that wrote the shared bars does not serve them from its mapping")
	}
	var small barCache
	if seen, path, err := small.preload(worker.BarsRange{HistoryPath: store, Series: "SPY@1d", ShareDir: share, ShareFrom: bars.Len() + 1}); err != nil || seen.Digest != want || path != "" {
		t.Fatalf("preload of fewer bars than shareFrom: %+v %q %v; want them read, not shared", seen, path, err)
	}
	var ranged barCache
	part := bars.Slice(10, bars.Len()-9)
	day := func(t int64) string { return time.Unix(t, 0).UTC().Format(time.RFC3339) }
	if seen, p, err := ranged.preload(worker.BarsRange{HistoryPath: store, Series: "SPY@1d", From: day(part.Time[0]), To: day(part.Time[part.Len()-1]), ShareDir: share}); err != nil || seen.Digest != part.Digest() || seen.Count != part.Len() || p == "" || p == path {
		t.Fatalf("preload of a range: %+v %q %v; want %d bars shared with digest %s", seen, p, err, part.Len(), part.Digest())
	}
	var other barCache
	key := storeKey(store, "SPY@1d", time.Time{}, time.Time{})
	e, err := other.loadShared(key, path, "SPY@1d", want)
	if err != nil {
		t.Fatal(err)
	}
	if got := e.bars.Digest(); got != want || e.bars.Len() != bars.Len() {
		t.Fatalf("mapped bars: %d bars, digest %s, want %d %s", e.bars.Len(), got, bars.Len(), want)
	}
	if runtime.GOOS != "windows" && e.m == nil {
		t.Fatal("the shared bars were copied, not mapped")
	}
	if err := os.RemoveAll(share); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(store, store+".gone"); err != nil {
		t.Fatal(err)
	}
	again, err := other.loadShared(key, path, "SPY@1d", want)
	if err != nil || again.m != e.m {
		t.Errorf("the cached mapping was not served again: %v", err)
	}
	again.release()
	code, err := templates.Source("sma_cross")
	if err != nil {
		t.Fatal(err)
	}
	req := backtest.Request{Source: code, Name: "sma_cross.star", Series: "SPY@1d", HistoryPath: store, Digest: want}
	if _, err := backtestWith(t.Context(), req, ta.NewMemo(0), &other); err != nil {
		t.Errorf("a backtest of the shared range: %v", err)
	}
	// Evicted while e still reads it: mapped until e is released.
	for i := range barCacheEntries {
		other.put(barEntry{key: "filler" + string(rune('a'+i)), digest: "x"})
	}
	if e.m == nil {
		return
	}
	if e.m.data == nil {
		t.Fatal("an evicted mapping was unmapped while a request read it")
	}
	if got := e.bars.Close[e.bars.Len()-1]; got != bars.Close[bars.Len()-1] {
		t.Errorf("last close %v, want %v", got, bars.Close[bars.Len()-1])
	}
	e.release()
	if e.m.data != nil {
		t.Error("an evicted mapping nobody reads stayed mapped")
	}
}
