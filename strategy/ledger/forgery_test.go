package ledger

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// plainAnchors rewrites the anchor file at path as a forger without the
// key would: one line per row of the rebuilt chain, with no mark, or with
// mark as the mark.
func plainAnchors(t *testing.T, path string, mark string) {
	t.Helper()
	l, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var seq int64
	var hash string
	if err := l.QueryRow(`SELECT seq, hash FROM trials ORDER BY seq DESC LIMIT 1`).Scan(&seq, &hash); err != nil {
		t.Fatal(err)
	}
	line, _ := json.Marshal(Anchor{Seq: seq, Hash: hash, RunID: "run-1", Rows: int(seq), Time: "2026-01-02T03:04:05Z", MAC: mark})
	if err := os.WriteFile(AnchorPath(path), append(line, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestForgeryWithoutTheKey is issue 44's item 5: research verify read
// meta.keyed_from from the database it checked, so a forger without the
// key set it past the last row, dropped the losing trials, rebuilt the
// chain with plain SHA-256 and rewrote the anchor file to match, and the
// ledger verified intact. The boundary and the anchor lines are keyed now.
func TestForgeryWithoutTheKey(t *testing.T) {
	dropLosers := func(t *testing.T, db *sql.DB) {
		run(t, db, `DELETE FROM trials WHERE sharpe < 0`)
		rechain(t, db, nil)
	}
	cases := []struct {
		name   string
		meta   func(t *testing.T, db *sql.DB)
		mark   string
		reason string
	}{
		{"keyed_from past the tip", func(t *testing.T, db *sql.DB) {
			run(t, db, `UPDATE meta SET value = '1000' WHERE key = 'keyed_from'`)
		}, "", "are not the ones the ledger key recorded: its meta table was edited"},
		{"keyed_from past the tip, its mark removed", func(t *testing.T, db *sql.DB) {
			run(t, db, `UPDATE meta SET value = '1000' WHERE key = 'keyed_from'`)
			run(t, db, `DELETE FROM meta WHERE key IN ('boundary_mac', 'anchors_keyed_from')`)
		}, "", "that boundary is not keyed"},
		{"anchors passed as unmarked", func(t *testing.T, db *sql.DB) {
			run(t, db, `UPDATE meta SET value = '1000' WHERE key = 'anchors_keyed_from'`)
		}, "", "are not the ones the ledger key recorded"},
		{"the boundary's mark removed, keyed from row 1", func(t *testing.T, db *sql.DB) {
			run(t, db, `DELETE FROM meta WHERE key IN ('boundary_mac', 'anchors_keyed_from')`)
		}, "", "row 1's content does not match its keyed hash"},
		{"a made-up mark on the anchor", func(t *testing.T, db *sql.DB) {
			run(t, db, `UPDATE meta SET value = '1000' WHERE key = 'keyed_from'`)
		}, strings.Repeat("ab", 32), "are not the ones the ledger key recorded"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l, path := filled(t)
			l.Close()
			tamper(t, path, func(db *sql.DB) {
				tc.meta(t, db)
				dropLosers(t, db)
			})
			plainAnchors(t, path, tc.mark)
			l = openTest(t, path)
			defer l.Close()
			rep, err := l.Verify(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if rep.OK() || !strings.Contains(rep.Bad.Reason, tc.reason) {
				t.Fatalf("forged ledger verifies %+v (bad %+v), want %q", rep, rep.Bad, tc.reason)
			}
		})
	}

	// The anchor file alone rewritten, the rows left alone.
	for mark, reason := range map[string]string{"": "lacks the ledger key's mark", strings.Repeat("ab", 32): "carries a mark the ledger key did not make"} {
		l, path := filled(t)
		plainAnchors(t, path, mark)
		rep, err := l.Verify(context.Background())
		if err != nil || rep.OK() || !strings.Contains(rep.Bad.Reason, reason) {
			t.Fatalf("a rewritten anchor file (mark %q): %+v %v, want %q", mark, rep, err, reason)
		}
		l.Close()
	}
}

// TestBoundaryOfOlderLedgers: a ledger keyed from row 1 before its
// boundary was keyed gets the mark at its next open and verifies; a
// migrated one is named until an operator vouches for it once.
func TestBoundaryOfOlderLedgers(t *testing.T) {
	l, path := filled(t)
	l.Close()
	tamper(t, path, func(db *sql.DB) { run(t, db, `DELETE FROM meta WHERE key IN ('boundary_mac', 'anchors_keyed_from')`) })
	stripMarks(t, AnchorPath(path)) // an older wicket's anchor lines carry no mark
	l = openTest(t, path)
	if rep, err := l.Verify(context.Background()); err != nil || !rep.OK() {
		t.Fatalf("an older ledger keyed from row 1: %+v %v", rep, err)
	}
	l.Close()

	l, path = filled(t)
	l.Close()
	tamper(t, path, func(db *sql.DB) {
		run(t, db, `DELETE FROM meta WHERE key IN ('boundary_mac', 'anchors_keyed_from')`)
		run(t, db, `UPDATE meta SET value = '3' WHERE key = 'keyed_from'`)
	})
	l = openTest(t, path)
	defer l.Close()
	if rep, _ := l.Verify(context.Background()); rep.OK() || !strings.Contains(rep.Bad.Reason, "--trust-migration") {
		t.Fatalf("an unkeyed migration boundary: %+v", rep)
	}
	if err := l.TrustMigration(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Rows 1 and 2 are keyed (filled keyed them), so they fail as plain
	// rows now: the operator vouched for a boundary that was not the
	// migration's, and Verify says so.
	if rep, _ := l.Verify(context.Background()); rep.OK() || rep.Bad.Seq != 1 {
		t.Fatalf("after vouching: %+v", rep)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// stripMarks removes the marks from the anchor file's lines, as an older
// wicket wrote them.
func stripMarks(t *testing.T, file string) {
	t.Helper()
	var out []byte
	for _, line := range strings.Split(strings.TrimSpace(readFile(t, file)), "\n") {
		var a Anchor
		if err := json.Unmarshal([]byte(line), &a); err != nil {
			t.Fatal(err)
		}
		a.MAC = ""
		b, _ := json.Marshal(a)
		out = append(append(out, b...), '\n')
	}
	if err := os.WriteFile(file, out, 0o600); err != nil {
		t.Fatal(err)
	}
}
