package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// filled is a ledger of 40 rows in 6 batches (a sweep of 35 combinations,
// then 5 backtests), half of the sweep's Sharpe ratios negative.
func filled(t *testing.T) (*Ledger, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "research.db")
	l := openTest(t, path)
	sweep := make([]Row, 35)
	for i := range sweep {
		sweep[i] = row("sma_cross", float64(i-17)/100, "s")
	}
	if _, err := l.Append(context.Background(), sweep); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		bt := row("sma_cross", float64(i)/100, "s")
		bt.Kind = KindBacktest
		if _, err := l.Append(context.Background(), []Row{bt}); err != nil {
			t.Fatal(err)
		}
	}
	if rep, err := l.Verify(context.Background()); err != nil || !rep.OK() || rep.Rows != 40 || rep.AnchoredSeq != 40 || rep.Anchors != 6 {
		t.Fatalf("before: %+v %v", rep, err)
	}
	return l, path
}

// tamper runs fn on the ledger's database as another program would.
func tamper(t *testing.T, path string, fn func(db *sql.DB)) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	fn(db)
}

func run(t *testing.T, db *sql.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatal(err)
	}
}

// rechain renumbers the rows that are left 1, 2, ... and rebuilds their
// chain as a forger would: with the ledger's key when key is set (an
// insider), else with plain SHA-256 (the unkeyed chain's rule, all
// anyone without the key can do).
func rechain(t *testing.T, db *sql.DB, key []byte) {
	t.Helper()
	rs, err := db.Query(`SELECT ` + columns + ` FROM trials ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	var rows []Row
	for rs.Next() {
		r, err := scanRow(rs)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r)
	}
	rs.Close()
	run(t, db, `DELETE FROM trials`)
	prev := Genesis
	for i := range rows {
		r := &rows[i]
		r.Seq, r.PrevHash = int64(i+1), prev
		if key != nil {
			r.Hash = r.keyedHash(key)
		} else {
			r.Hash = r.plainHash()
		}
		prev = r.Hash
		run(t, db, `INSERT INTO trials(`+columns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			r.Seq, r.Time, r.Kind, r.RunID, r.Who.Surface, r.Who.Session, r.Who.Caller, r.Strategy, r.Digest, r.Series, r.From, r.To,
			string(r.Params), string(r.Costs), string(r.Metrics), r.SharpePerPeriod, r.PrevHash, r.Hash, string(r.Audit))
	}
}

// TestVerifyNamesEveryTamper: each way of trimming or forging the ledger
// is named by Verify, including the ones a plain hash chain passes as
// intact (a cut tail, a chain rebuilt after an edit or after dropping the
// losing trials).
func TestVerifyNamesEveryTamper(t *testing.T) {
	cases := []struct {
		name   string
		tamper func(t *testing.T, db *sql.DB)
		bad    int64
		reason string
	}{
		{"delete the last row", func(t *testing.T, db *sql.DB) { run(t, db, `DELETE FROM trials WHERE seq = 40`) },
			40, "rows 40 to 40 are missing from the end of the ledger"},
		{"delete the last 30", func(t *testing.T, db *sql.DB) { run(t, db, `DELETE FROM trials WHERE seq > 10`) },
			11, "rows 11 to 40 are missing from the end of the ledger"},
		{"delete all", func(t *testing.T, db *sql.DB) { run(t, db, `DELETE FROM trials`) },
			1, "every row is missing: the ledger holds none, and rows 1 to 40 were recorded"},
		{"re-hash a forged row", func(t *testing.T, db *sql.DB) {
			run(t, db, `UPDATE trials SET sharpe = 0.5, metrics = '{"sharpe": 9}' WHERE seq = 5`)
			rechain(t, db, nil)
		}, 1, "row 1's content does not match its keyed hash: it was edited, or the chain was rebuilt without the ledger key"},
		{"re-hash a forged row with the key", func(t *testing.T, db *sql.DB) {
			run(t, db, `UPDATE trials SET sharpe = 0.5, metrics = '{"sharpe": 9}' WHERE seq = 5`)
			rechain(t, db, testKey)
		}, 35, "row 35 is not the row anchored when run run-1 was recorded"},
		{"drop the losing trials", func(t *testing.T, db *sql.DB) {
			run(t, db, `DELETE FROM trials WHERE sharpe < 0`)
			rechain(t, db, nil)
		}, 1, "it was edited, or the chain was rebuilt without the ledger key"},
		{"drop the losing trials with the key", func(t *testing.T, db *sql.DB) {
			run(t, db, `DELETE FROM trials WHERE sharpe < 0`)
			rechain(t, db, testKey)
		}, 24, "rows 24 to 40 are missing from the end of the ledger"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l, path := filled(t)
			tamper(t, path, func(db *sql.DB) { tc.tamper(t, db) })
			rep, err := l.Verify(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if rep.OK() || rep.Bad.Seq != tc.bad || !strings.Contains(rep.Bad.Reason, tc.reason) {
				t.Fatalf("verify after %s: %+v (bad %+v), want row %d %q", tc.name, rep, rep.Bad, tc.bad, tc.reason)
			}
		})
	}
}

// schemaV1 is the unkeyed ledger's schema, as wicket wrote it before the
// chain was keyed.
const schemaV1 = `
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE trials (
	seq INTEGER PRIMARY KEY, time TEXT NOT NULL, kind TEXT NOT NULL, run_id TEXT NOT NULL, surface TEXT NOT NULL,
	session TEXT NOT NULL, caller TEXT NOT NULL, strategy TEXT NOT NULL, digest TEXT NOT NULL, series TEXT NOT NULL,
	range_from TEXT NOT NULL, range_to TEXT NOT NULL, params TEXT NOT NULL, costs TEXT NOT NULL, metrics TEXT NOT NULL,
	sharpe REAL, prev_hash TEXT NOT NULL, hash TEXT NOT NULL);
INSERT INTO meta(key, value) VALUES ('schema', '1');
`

// TestMigrateUnkeyedLedger: a ledger written before the chain was keyed
// opens, keeps its rows, chains new ones with the key after its tip, and
// Verify says which rows predate the key; an edit of an old row is still
// found.
func TestMigrateUnkeyedLedger(t *testing.T) {
	path := filepath.Join(t.TempDir(), "research.db")
	tamper(t, path, func(db *sql.DB) {
		run(t, db, schemaV1)
		prev := Genesis
		for i := range 3 {
			r := row("old", float64(i)/100, "s")
			if err := r.normalise(); err != nil {
				t.Fatal(err)
			}
			r.Seq, r.Time, r.RunID, r.PrevHash = int64(i+1), "2025-01-01T00:00:00Z", fmt.Sprintf("old-%d", i), prev
			r.Hash = r.plainHash()
			prev = r.Hash
			run(t, db, `INSERT INTO trials(seq, time, kind, run_id, surface, session, caller, strategy, digest, series, range_from, range_to, params, costs, metrics, sharpe, prev_hash, hash)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, r.Seq, r.Time, r.Kind, r.RunID, r.Who.Surface, r.Who.Session, r.Who.Caller,
				r.Strategy, r.Digest, r.Series, r.From, r.To, string(r.Params), string(r.Costs), string(r.Metrics), r.SharpePerPeriod, r.PrevHash, r.Hash)
		}
	})
	l := openTest(t, path)
	if _, err := l.Append(context.Background(), []Row{row("new", 0.04, "s"), row("new", 0.05, "s")}); err != nil {
		t.Fatal(err)
	}
	rep, err := l.Verify(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Rows != 5 || rep.KeyedFrom != 4 || rep.AnchoredSeq != 5 || rep.Anchors != 2 ||
		len(rep.Notes) != 1 || !strings.Contains(rep.Notes[0], "rows 1 to 3 were written before the chain was keyed") {
		t.Fatalf("migrated: %+v", rep)
	}
	l.Close()
	if _, err := Open(path, Options{Key: []byte("another key, not the ledger's")}); !errors.Is(err, ErrWrongKey) {
		t.Fatalf("another key: %v, want ErrWrongKey", err)
	}
	tamper(t, path, func(db *sql.DB) { run(t, db, `UPDATE trials SET strategy = 'forged' WHERE seq = 2`) })
	l = openTest(t, path)
	rep, err = l.Verify(context.Background())
	if err != nil || rep.OK() || rep.Bad.Seq != 2 || !strings.Contains(rep.Bad.Reason, "it was edited") {
		t.Fatalf("an edited old row: %+v %v", rep, err)
	}
}

func TestOpenWithoutKey(t *testing.T) {
	_, err := Open(filepath.Join(t.TempDir(), "research.db"), Options{})
	if !errors.Is(err, ErrNoKey) {
		t.Fatalf("err %v, want ErrNoKey", err)
	}
}

// TestVerifyAgainstAnAnchorCopy: someone who cuts the ledger's tail and
// its anchor file in step passes a check of the ledger's own anchors, but
// not of a copy of the anchor file kept elsewhere.
func TestVerifyAgainstAnAnchorCopy(t *testing.T) {
	l, path := filled(t)
	backup := filepath.Join(t.TempDir(), "research.anchors.backup")
	b, err := os.ReadFile(AnchorPath(path))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(backup, b, 0o600); err != nil {
		t.Fatal(err)
	}
	tamper(t, path, func(db *sql.DB) { run(t, db, `DELETE FROM trials WHERE seq > 35`) })
	lines := strings.SplitAfter(string(b), "\n")
	if err := os.WriteFile(AnchorPath(path), []byte(lines[0]), 0o600); err != nil { // the sweep's anchor alone
		t.Fatal(err)
	}
	if rep, err := l.Verify(context.Background()); err != nil || !rep.OK() || rep.Rows != 35 {
		t.Fatalf("cut in step, own anchors: %+v %v (a cut in step is invisible to them)", rep, err)
	}
	rep, err := l.Verify(context.Background(), backup)
	if err != nil || rep.OK() || rep.Bad.Seq != 36 || !strings.Contains(rep.Bad.Reason, "rows 36 to 40 are missing from the end of the ledger") {
		t.Fatalf("against the copy: %+v %v", rep, err)
	}
	if _, err := l.Verify(context.Background(), filepath.Join(t.TempDir(), "nothing")); err == nil {
		t.Fatal("a copy that is not there must be an error, not no anchors")
	}
}
