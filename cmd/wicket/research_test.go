package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"

	"wicket/internal/project"
	"wicket/strategy/ledger"
	"wicket/strategy/research"
)

// TestResearchVerifyNamesTheBadRow: `wicket research verify` exits 0 on an
// intact ledger and 1 on a tampered one, naming the first bad row.
func TestResearchVerifyNamesTheBadRow(t *testing.T) {
	dir := t.TempDir()
	p, err := project.Init(dir, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ledgerKey(io.Discard, p, "test")
	if err != nil {
		t.Fatal(err)
	}
	l, err := ledger.Open(p.ResearchPath(), ledger.Options{Key: key})
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
	if code, out, _ := verify(); code != 0 || !strings.Contains(out, "intact: 4 rows, tip ") || !strings.Contains(out, "(row 4); 4 anchors, the last at row 4") {
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
	if code != 1 || !strings.Contains(stderr, "research ledger broken at row 3: row 3's content does not match its keyed hash: it was edited, or the chain was rebuilt without the ledger key (2 rows before it are intact") {
		t.Fatalf("edited: exit %d, %q", code, stderr)
	}
}

// TestResearchVerifyNamesACutTail: rows cut from the end of the ledger,
// and the whole ledger file removed, are named from the anchors; a
// project made before the ledger key existed gets one, with a note.
func TestResearchVerifyNamesACutTail(t *testing.T) {
	dir := t.TempDir()
	p, err := project.Init(dir, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	// A project from before the ledger key: secrets.env without it.
	if err := os.WriteFile(p.SecretsPath(), []byte("WICKET_NODE_OBSERVE_KEY=x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var note strings.Builder
	key, err := ledgerKey(&note, p, "test")
	if err != nil || len(key) != 64 || !strings.Contains(note.String(), "this project had no research ledger key; a new WICKET_LEDGER_KEY was added to") {
		t.Fatalf("key added: %d bytes, %v, %q", len(key), err, note.String())
	}
	if again, err := ledgerKey(io.Discard, p, "test"); err != nil || string(again) != string(key) {
		t.Fatalf("the added key is not read back: %v", err)
	}
	l, err := ledger.Open(p.ResearchPath(), ledger.Options{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if _, err := l.Append(context.Background(), []ledger.Row{{Kind: ledger.KindBacktest, Who: cliWho, Strategy: "s", Series: "X-USD@1d"}}); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	verify := func() (int, string) {
		var out, errOut strings.Builder
		code := run(context.Background(), []string{"wicket", "--project", dir, "research", "verify"}, strings.NewReader(""), &out, &errOut)
		return code, errOut.String()
	}
	db, err := sql.Open("sqlite", p.ResearchPath())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`DELETE FROM trials WHERE seq > 3`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if code, stderr := verify(); code != 1 || !strings.Contains(stderr, "research ledger broken at row 4: rows 4 to 5 are missing from the end of the ledger (the anchor of run ") {
		t.Fatalf("cut tail: exit %d, %q", code, stderr)
	}
	for _, f := range []string{p.ResearchPath(), p.ResearchPath() + "-wal", p.ResearchPath() + "-shm"} {
		if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	if code, stderr := verify(); code != 1 || !strings.Contains(stderr, "settings/state/research.db is missing, but its anchors record rows 1 to 5") {
		t.Fatalf("ledger removed: exit %d, %q", code, stderr)
	}
}

// TestResearchLedgerShowsCosts: `wicket research ledger` has a costs
// column: a row's costs in their compact form, and "unknown" beyond what
// an old row recorded.
func TestResearchLedgerShowsCosts(t *testing.T) {
	dir := t.TempDir()
	p, err := project.Init(dir, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ledgerKey(io.Discard, p, "test")
	if err != nil {
		t.Fatal(err)
	}
	l, err := ledger.Open(p.ResearchPath(), ledger.Options{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	lev := 2.0
	now := research.LedgerCosts{Capital: "10000", FeeBps: 7, SlippageBps: 3, Intrabar: "pessimistic", Funding: "auto", Leverage: &lev}
	rows := []ledger.Row{
		{Kind: ledger.KindBacktest, Who: cliWho, Strategy: "old", Series: "X-USD@1d", Costs: json.RawMessage(`{"capital":"10000","fee_bps":10,"slippage_bps":5}`)},
		{Kind: ledger.KindSweep, Who: cliWho, Strategy: "new", Series: "X-USD@1d", Costs: now.JSON()},
		{Kind: ledger.KindSweep, Who: cliWho, Strategy: "none", Series: "X-USD@1d"},
	}
	if _, err := l.Append(context.Background(), rows); err != nil {
		t.Fatal(err)
	}
	l.Close()
	var out, errOut strings.Builder
	if code := run(context.Background(), []string{"wicket", "--project", dir, "research", "ledger"}, strings.NewReader(""), &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 || !strings.Contains(lines[0], "  costs  ") {
		t.Fatalf("ledger:\n%s", out.String())
	}
	for i, want := range []string{"fee=10 slip=5 rest=unknown", "fee=7 slip=3 intrabar=pessimistic funding=auto leverage=2", "  unknown  "} {
		if !strings.Contains(lines[i+1], want) {
			t.Errorf("row %d lacks %q:\n%s", i+1, want, out.String())
		}
	}
}
