package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"

	"wicket/internal/project"
	"wicket/strategy/ledger"
)

// TestResearchVerifyAgainstTheNode is issue 44's item 5, the second
// place, end to end: research recorded while the project's node runs
// leaves each anchor in the node's journal too, and cutting the ledger's
// tail together with its anchor lines, which its own anchors cannot
// show, is named by `wicket research verify` from the node's.
func TestResearchVerifyAgainstTheNode(t *testing.T) {
	dir := t.TempDir()
	p, err := project.Init(dir, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	_, addr := startNode(t, dir)
	toml, err := os.ReadFile(p.ConfigPath())
	if err != nil {
		t.Fatal(err)
	}
	moved := regexp.MustCompile(`(?m)^address = ".*"$`).ReplaceAll(toml, []byte(`address = "`+addr+`"`))
	if string(moved) == string(toml) {
		t.Fatalf("wicket.toml has no [node] address line:\n%s", toml)
	}
	if err := os.WriteFile(p.ConfigPath(), moved, 0o644); err != nil {
		t.Fatal(err)
	}
	l, closeLedger := openLedgerFile(io.Discard, p, "test")
	if l == nil {
		t.Fatal("the ledger did not open")
	}
	for range 5 {
		if _, err := l.Append(context.Background(), []ledger.Row{{Kind: ledger.KindBacktest, Who: cliWho, Strategy: "s", Series: "X-USD@1d"}}); err != nil {
			t.Fatal(err)
		}
	}
	closeLedger()
	verify := func() (int, string, string) {
		var out, errOut strings.Builder
		code := run(context.Background(), []string{"wicket", "--project", dir, "research", "verify"}, strings.NewReader(""), &out, &errOut)
		return code, out.String(), errOut.String()
	}
	if code, out, errOut := verify(); code != 0 || !strings.Contains(out, "5 of the anchors are held by the node, the last at row 5") {
		t.Fatalf("intact: exit %d: %s %s", code, out, errOut)
	}
	db, err := sql.Open("sqlite", p.ResearchPath())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`DELETE FROM trials WHERE seq > 3`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	lines, err := os.ReadFile(ledger.AnchorPath(p.ResearchPath()))
	if err != nil {
		t.Fatal(err)
	}
	kept := strings.SplitAfter(string(lines), "\n")[:3]
	if err := os.WriteFile(ledger.AnchorPath(p.ResearchPath()), []byte(strings.Join(kept, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := verify(); code != 1 || !strings.Contains(errOut, "research ledger broken at row 4: rows 4 to 5 are missing from the end of the ledger") {
		t.Fatalf("a tail cut with its anchor lines: exit %d: %s", code, errOut)
	}
}
