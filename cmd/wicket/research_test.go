package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"strings"
	"testing"

	"wicket/internal/project"
	"wicket/strategy/ledger"
)

// TestResearchVerifyNamesTheBadRow: `wicket research verify` exits 0 on an
// intact ledger and 1 on a tampered one, naming the first bad row.
func TestResearchVerifyNamesTheBadRow(t *testing.T) {
	dir := t.TempDir()
	p, err := project.Init(dir, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	l, err := ledger.Open(p.ResearchPath(), ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for range 4 {
		if _, err := l.Append(context.Background(), []ledger.Row{{Kind: ledger.KindBacktest, Who: cliWho, Strategy: "s", Series: "X-USD@1d"}}); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	verify := func() (int, string, string) {
		var out, errOut strings.Builder
		code := run(context.Background(), []string{"wicket", "--project", dir, "research", "verify"}, strings.NewReader(""), &out, &errOut)
		return code, out.String(), errOut.String()
	}
	if code, out, _ := verify(); code != 0 || !strings.Contains(out, "intact: 4 rows") {
		t.Fatalf("intact: exit %d, %q", code, out)
	}
	db, err := sql.Open("sqlite", p.ResearchPath())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE trials SET series = 'Y-USD@1d' WHERE seq = 3`); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := verify()
	if code != 1 || !strings.Contains(stderr, "research ledger broken at row 3: row 3's content does not match its hash: it was edited (2 rows before it are intact") {
		t.Fatalf("edited: exit %d, %q", code, stderr)
	}
}
