package history

import (
	"database/sql"
	"path/filepath"
	"testing"
	"time"
)

// schemaV1 is the version-1 series table (as wicket wrote it before
// provider columns), for the upgrade test.
const schemaV1 = `
CREATE TABLE series (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, source TEXT NOT NULL,
	bars INTEGER NOT NULL DEFAULT 0, first INTEGER, last INTEGER);
CREATE TABLE blocks (series_id INTEGER NOT NULL REFERENCES series(id), start INTEGER NOT NULL, last INTEGER NOT NULL,
	n INTEGER NOT NULL, time BLOB NOT NULL, open BLOB NOT NULL, high BLOB NOT NULL, low BLOB NOT NULL,
	close BLOB NOT NULL, volume BLOB NOT NULL, PRIMARY KEY (series_id, start));
PRAGMA user_version = 1;
`

// TestUpgradeFromV1: a version-1 store reads read-only as it is (no
// provider columns) and is upgraded in place by the first writer, bars kept.
func TestUpgradeFromV1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(schemaV1); err != nil {
		t.Fatal(err)
	}
	b := synth(10, 1_700_000_000, 3600)
	if _, err := db.Exec(`INSERT INTO series(id, name, source, bars, first, last) VALUES (1, 'OLD@1h', 'import', 10, ?, ?)`, b.Time[0], b.Time[9]); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO blocks VALUES (1, ?, ?, 10, ?, ?, ?, ?, ?, ?)`, b.Time[0], b.Time[9],
		intBlob(b.Time), floatBlob(b.Open), floatBlob(b.High), floatBlob(b.Low), floatBlob(b.Close), floatBlob(b.Volume)); err != nil {
		t.Fatal(err)
	}
	db.Close()

	ro, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	infos, err := ro.List()
	ro.Close()
	if err != nil || len(infos) != 1 || infos[0].Source != "import" || infos[0].ProviderSymbol != "" || !infos[0].FetchedAt.IsZero() {
		t.Fatalf("read-only v1: %+v %v", infos, err)
	}

	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Load("OLD@1h", time.Time{}, time.Time{})
	if err != nil || got.Len() != 10 || got.Close[9] != b.Close[9] {
		t.Fatalf("after the upgrade: %d bars, %v", got.Len(), err)
	}
	nb := synth(3, 1_800_000_000-1_800_000_000%3600, 3600)
	at := time.Unix(1_900_000_000, 0).UTC()
	if err := s.Append(ctx, "NEW@1h", nb, AppendOptions{Source: "binance", ProviderSymbol: "NEWUSDT", FetchedAt: at}); err != nil {
		t.Fatal(err)
	}
	info, err := s.Info("NEW@1h")
	if err != nil || info.ProviderSymbol != "NEWUSDT" || !info.FetchedAt.Equal(at) || info.Bars != 3 {
		t.Fatalf("new series on the upgraded store: %+v %v", info, err)
	}
	var v int
	s.db.QueryRow(`PRAGMA user_version`).Scan(&v)
	if v != schemaVersion {
		t.Fatalf("user_version %d after the upgrade", v)
	}
}

// TestAppend: pages land after the last bar, fill the last block, and a
// page that overlaps, goes off the grid, or comes from another source is
// refused whole.
func TestAppend(t *testing.T) {
	s := openTemp(t)
	const step = 60
	start := int64(1_700_000_040) // on the minute
	all := synth(3*blockBars+100, start, step)
	opt := AppendOptions{Source: "binance", ProviderSymbol: "XUSDT"}
	for lo := 0; lo < all.Len(); lo += 1000 {
		hi := min(lo+1000, all.Len())
		if err := s.Append(ctx, "X@1m", all.Slice(lo, hi), opt); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Load("X@1m", time.Time{}, time.Time{})
	if err != nil || got.Len() != all.Len() {
		t.Fatalf("%d bars, %v", got.Len(), err)
	}
	for i := range all.Time {
		if got.Time[i] != all.Time[i] || got.Close[i] != all.Close[i] {
			t.Fatalf("bar %d differs", i)
		}
	}
	var blocks int
	s.db.QueryRow(`SELECT count(*) FROM blocks`).Scan(&blocks)
	if blocks != 4 {
		t.Errorf("%d blocks for %d bars appended in pages of 1000, want 4 full-as-possible blocks", blocks, all.Len())
	}
	last := all.Time[all.Len()-1]
	for name, tc := range map[string]struct {
		b   func() (int64, int64)
		src string
	}{
		"overlap":        {func() (int64, int64) { return last, step }, "binance"},
		"off the grid":   {func() (int64, int64) { return last + 90, step }, "binance"},
		"another source": {func() (int64, int64) { return last + step, step }, "alpaca"},
	} {
		at, st := tc.b()
		if err := s.Append(ctx, "X@1m", synth(2, at, st), AppendOptions{Source: tc.src}); err == nil || kindOf(err) != KindInvalid {
			t.Errorf("%s: %v", name, err)
		}
	}
	if info, _ := s.Info("X@1m"); info.Bars != all.Len() {
		t.Errorf("a refused append changed the series: %d bars", info.Bars)
	}
}
