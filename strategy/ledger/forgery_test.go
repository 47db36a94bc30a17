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

// keeper is a Witness that keeps anchors in memory, as the node's journal
// keeps them (it never drops one).
type keeper struct{ held []Anchor }

func (k *keeper) Keep(_ context.Context, a Anchor) error {
	k.held = append(k.held, a)
	return nil
}

// TestTailCutWithItsAnchors is issue 44's item 5, the second place: the
// ledger's tail cut together with its anchor lines (or both files rolled
// back) passed verify. The anchors held by the witness (the node's
// journal) name the cut.
func TestTailCutWithItsAnchors(t *testing.T) {
	path := t.TempDir() + "/research.db"
	w := &keeper{}
	l, err := Open(path, Options{Key: testKey, Witness: w})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for i := range 6 {
		if _, err := l.Append(context.Background(), []Row{row("sma_cross", float64(i-3)/100, "s")}); err != nil {
			t.Fatal(err)
		}
	}
	if len(w.held) != 6 || w.held[5].Seq != 6 || w.held[5].MAC == "" {
		t.Fatalf("the witness holds %+v", w.held)
	}
	held := Held{Source: "the node's journal", Anchors: w.held}
	if rep, err := l.VerifyHeld(context.Background(), held); err != nil || !rep.OK() || rep.Held != 6 || rep.HeldSeq != 6 {
		t.Fatalf("intact: %+v %v", rep, err)
	}
	// The cut: rows 4 to 6 and their anchor lines.
	tamper(t, path, func(db *sql.DB) { run(t, db, `DELETE FROM trials WHERE seq > 3`) })
	lines := strings.SplitAfter(readFile(t, AnchorPath(path)), "\n")
	if err := os.WriteFile(AnchorPath(path), []byte(strings.Join(lines[:3], "")), 0o600); err != nil {
		t.Fatal(err)
	}
	if rep, err := l.Verify(context.Background()); err != nil || !rep.OK() {
		t.Fatalf("the cut against the ledger's own anchors: %+v %v (invisible to them)", rep, err)
	}
	rep, err := l.VerifyHeld(context.Background(), held)
	if err != nil || rep.OK() || rep.Bad.Seq != 4 || !strings.Contains(rep.Bad.Reason, "rows 4 to 6 are missing from the end of the ledger") {
		t.Fatalf("the cut against the held anchors: %+v %v", rep, err)
	}
	// A held anchor forged without the key is named too.
	forged := append([]Anchor(nil), w.held[:3]...)
	forged[2].MAC = strings.Repeat("ab", 32)
	if rep, _ := l.VerifyHeld(context.Background(), Held{Source: "the node's journal", Anchors: forged}); rep.OK() || !strings.Contains(rep.Bad.Reason, "mark the ledger key did not make") {
		t.Fatalf("a forged held anchor: %+v", rep)
	}
	// Unreachable: noted, checked without.
	if rep, _ := l.VerifyHeld(context.Background(), Held{Source: "the node's journal", Err: context.DeadlineExceeded}); !rep.OK() || len(rep.Notes) == 0 || !strings.Contains(rep.Notes[0], "could not be read") {
		t.Fatalf("held anchors unreadable: %+v", rep)
	}
}
