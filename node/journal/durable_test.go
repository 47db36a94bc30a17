package journal

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/command"
)

// submit commits what the node commits for an accepted submit_order with
// client order id wk-<i>: its audit row and its order_accepted event.
func submit(t testing.TB, j *Journal, i int, seq int64) {
	t.Helper()
	cid := fmt.Sprintf("wk-%04d", i)
	c := command.Command{Verb: command.SubmitOrder, Venue: "paper", Symbol: "BTC-USD", Side: command.Buy, Type: command.Market,
		Quantity: testkit.D("0.01"), ClientOrderID: cid}
	at := t0.Add(time.Duration(i) * time.Second)
	e := &node.AuditEntry{Time: at, Ticket: fmt.Sprintf("tk-%04d", i), KeyID: node.KeyControl, Command: c, ClientOrderID: cid,
		Outcome: node.Outcome{Status: node.Accepted, Verb: c.Verb, ClientOrderID: cid, Time: at}}
	if err := j.Commit(&Batch{Entry: e, Events: []node.Event{{Seq: seq, Time: at, Kind: node.EventAccepted, Venue: "paper",
		OrderID: fmt.Sprintf("ord-%08d", i), ClientOrderID: cid, Symbol: "BTC-USD", Side: command.Buy, Quantity: c.Quantity}}}); err != nil {
		t.Fatal(err)
	}
}

// copyFile copies the file at from to to, as a backup or a disk that kept
// only that file would.
func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// clientOrderIDs replays j and returns the client order ids of its
// accepted orders, and how many audit rows name one.
func clientOrderIDs(t *testing.T, j *Journal) (map[string]bool, int) {
	t.Helper()
	ids := map[string]bool{}
	if err := j.Replay(func(ev node.Event) error {
		if ev.Kind == node.EventAccepted {
			ids[ev.ClientOrderID] = true
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	page, err := j.Audit(node.AuditQuery{Limit: MaxAuditLimit})
	if err != nil {
		t.Fatal(err)
	}
	return ids, len(page.Entries)
}

// TestAcknowledgedCommitsNeedOnlyTheDatabaseFile: every commit Commit has
// returned from is in node.db itself, so a copy of that one file, taken
// while the journal is open and without the files SQLite keeps beside it,
// holds every acknowledged order.
func TestAcknowledgedCommitsNeedOnlyTheDatabaseFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "node.db")
	j := open(t, path)
	const n = 30
	for i := range n {
		submit(t, j, i, int64(i+1))
	}
	lost := filepath.Join(t.TempDir(), "node.db")
	copyFile(t, path, lost) // node.db alone: any -wal, -shm or -journal file is lost
	got := open(t, lost)
	ids, audited := clientOrderIDs(t, got)
	if len(ids) != n || audited != n {
		t.Fatalf("node.db alone holds %d of %d acknowledged orders and %d audit rows", len(ids), n, audited)
	}
	if s := got.Start(); s.New || s.Commands != n {
		t.Errorf("start of the copy = %+v", s)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), "-wal") || strings.HasSuffix(e.Name(), "-journal") {
			t.Errorf("between commits the journal keeps %s beside node.db", e.Name())
		}
	}
}

// TestOpenFoldsAWALJournalIn: a journal an earlier wicket left in WAL
// mode, with commits still in its node.db-wal, opens with all of them and
// is in rollback mode from then on.
func TestOpenFoldsAWALJournalIn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "node.db")
	old, err := openWith(path, durability{journalMode: "WAL"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		submit(t, old, i, int64(i+1))
	}
	// Copy the files while the WAL still holds the commits (a clean close
	// would checkpoint it), as a node killed then would leave them.
	upgraded := filepath.Join(t.TempDir(), "node.db")
	copyFile(t, path, upgraded)
	copyFile(t, path+"-wal", upgraded+"-wal")
	old.Close()

	j := open(t, upgraded)
	if ids, audited := clientOrderIDs(t, j); len(ids) != 5 || audited != 5 {
		t.Errorf("the upgraded journal holds %d orders and %d audit rows, want 5", len(ids), audited)
	}
	if _, err := os.Stat(upgraded + "-wal"); !os.IsNotExist(err) {
		t.Errorf("the -wal file is still there after the upgrade: %v", err)
	}
	submit(t, j, 5, 6)
	j.Close()
	copyFile(t, upgraded, upgraded+".copy")
	if ids, _ := clientOrderIDs(t, open(t, upgraded+".copy")); len(ids) != 6 {
		t.Errorf("after the upgrade node.db alone holds %d of 6 orders", len(ids))
	}
}

// TestOpenRefusesAJournalBehindItsAnchor: an older copy of node.db put in
// place of the journal, or the journal deleted, is refused at Open with
// what happened and what to do; moving the anchor aside runs on the
// journal as it is.
func TestOpenRefusesAJournalBehindItsAnchor(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "node.db")
	j := open(t, path)
	for i := range 3 {
		submit(t, j, i, int64(i+1))
	}
	older := filepath.Join(dir, "older.db")
	copyFile(t, path, older)
	for i := 3; i < 6; i++ {
		submit(t, j, i, int64(i+1))
	}
	j.Close()

	copyFile(t, older, path)
	_, err := Open(path)
	if err == nil {
		t.Fatal("a journal behind its anchor opened")
	}
	for _, want := range []string{path, "behind its anchor", "commands up to 6 and events up to 6", "holds commands up to 3 and events up to 3",
		"acknowledged orders are missing", "Restore the newest copy", "move " + path + ".anchor aside"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not say %q", err, want)
		}
	}

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	_, err = Open(path)
	if err == nil || !strings.Contains(err.Error(), "new or empty") || !strings.Contains(err.Error(), "Put it back") {
		t.Fatalf("Open of a deleted journal beside its anchor = %v, want a refusal", err)
	}
	if _, serr := os.Stat(path); serr == nil {
		if fi, _ := os.Stat(path); fi.Size() != 0 {
			t.Errorf("the refused start wrote %d bytes into the new file", fi.Size())
		}
	}

	copyFile(t, older, path)
	if err := os.Rename(path+".anchor", path+".anchor.moved"); err != nil {
		t.Fatal(err)
	}
	j = open(t, path)
	if s := j.Start(); s.Commands != 3 {
		t.Errorf("with the anchor moved aside the journal starts with %+v", s)
	}
	submit(t, j, 3, 4)
	j.Close()
	again := open(t, path) // the new anchor is at 4, the journal too
	if s := again.Start(); s.Commands != 4 {
		t.Errorf("reopened: %+v", s)
	}
}

// TestOpenRefusesAnUnreadableAnchor: an anchor whose line does not check
// out is refused, saying what to do, rather than guessed at.
func TestOpenRefusesAnUnreadableAnchor(t *testing.T) {
	path := filepath.Join(t.TempDir(), "node.db")
	j := open(t, path)
	submit(t, j, 0, 1)
	j.Close()
	data, err := os.ReadFile(path + ".anchor")
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(data), "commands 000000000001", "commands 000000000009", 1)
	if edited == string(data) {
		t.Fatalf("anchor %q is not in the expected form", data)
	}
	if err := os.WriteFile(path+".anchor", []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = Open(path)
	if err == nil || !strings.Contains(err.Error(), "unreadable (its mark does not verify with the journal's anchor key") || !strings.Contains(err.Error(), "move the anchor aside") {
		t.Errorf("Open with an edited anchor = %v", err)
	}
}
