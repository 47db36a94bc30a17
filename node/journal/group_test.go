package journal

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/command"
)

// submitBatch is what the node commits for an accepted submit_order with
// client order id wk-<i> whose order_accepted event is number seq.
func submitBatch(i int, seq int64) *Batch {
	cid := fmt.Sprintf("wk-%04d", i)
	c := command.Command{Verb: command.SubmitOrder, Venue: "paper", Symbol: "BTC-USD", Side: command.Buy, Type: command.Market,
		Quantity: testkit.D("0.01"), ClientOrderID: cid}
	at := t0.Add(time.Duration(i) * time.Second)
	e := &node.AuditEntry{Time: at, Ticket: fmt.Sprintf("tk-%04d", i), KeyID: node.KeyControl, Command: c, ClientOrderID: cid,
		Outcome: node.Outcome{Status: node.Accepted, Verb: c.Verb, ClientOrderID: cid, Time: at}}
	return &Batch{Entry: e, Events: []node.Event{{Seq: seq, Time: at, Kind: node.EventAccepted, Venue: "paper",
		OrderID: fmt.Sprintf("ord-%08d", i), ClientOrderID: cid, Symbol: "BTC-USD", Side: command.Buy, Quantity: c.Quantity}}}
}

// admitter plays the node's fold: it admits appends one at a time,
// numbering their events in the order it admits them, while their callers
// wait for them concurrently.
type admitter struct {
	j     *Journal
	mu    sync.Mutex
	next  int
	order []string // client order ids in admission order
}

// admit appends the next submit and returns its client order id and the
// channel its outcome arrives on.
func (a *admitter) admit(t testing.TB) (string, chan error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	i := a.next
	a.next++
	b := submitBatch(i, int64(i+1))
	done := make(chan error, 1)
	if err := a.j.Append(b, func(err error) { done <- err }); err != nil {
		t.Error(err)
	}
	a.order = append(a.order, b.Entry.ClientOrderID)
	return b.Entry.ClientOrderID, done
}

// holdGroups makes j's committer stop before writing each group until
// the test lets it go, telling the test the group's size.
func holdGroups(j *Journal) (sizes <-chan int, release chan<- struct{}) {
	s, r := make(chan int), make(chan struct{})
	j.BeforeWrite(func(n int) error { s <- n; <-r; return nil })
	return s, r
}

// onDisk copies node.db alone (no journal file beside it, as a disk that
// kept only that file would) and returns the client order ids of the
// accepted orders it holds, in event order, and its audit rows' tickets.
func onDisk(t *testing.T, path string) (events, tickets []string) {
	t.Helper()
	copied := filepath.Join(t.TempDir(), "node.db")
	copyFile(t, path, copied)
	j, err := openWith(copied, durability{journalMode: "DELETE"})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	var last int64
	if err := j.Replay(func(ev node.Event) error {
		if ev.Seq != last+1 {
			t.Errorf("event %d follows event %d: the journal has a gap", ev.Seq, last)
		}
		last = ev.Seq
		events = append(events, ev.ClientOrderID)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for q := (node.AuditQuery{Limit: MaxAuditLimit}); ; {
		page, err := j.Audit(q)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Entries {
			tickets = append(tickets, strings.Replace(e.Ticket, "tk-", "wk-", 1))
		}
		if !page.More {
			return events, tickets
		}
		q.After = page.Next
	}
}

// TestGroupCommitWritesConcurrentAppendsTogether: appends that arrive
// while a commit is in flight are written together in the next
// transaction, in the order they were admitted; a caller hears its append
// is done only once its rows are in node.db itself, and not before.
func TestGroupCommitWritesConcurrentAppendsTogether(t *testing.T) {
	path := filepath.Join(t.TempDir(), "node.db")
	j := open(t, path)
	sizes, release := holdGroups(j)
	a := &admitter{j: j}

	// The first append starts a commit; the committer holds it.
	first, firstDone := a.admit(t)
	if n := <-sizes; n != 1 {
		t.Fatalf("the first group holds %d batches, want 1", n)
	}
	// While it is in flight, n more callers append concurrently.
	const n = 63
	var wg sync.WaitGroup
	dones := make([]chan error, n)
	for k := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, dones[k] = a.admit(t)
		}()
	}
	wg.Wait()
	release <- struct{}{} // the first commit completes
	if err := <-firstDone; err != nil {
		t.Fatal(err)
	}
	// The committer now holds the second group, before writing it.
	if got := <-sizes; got != n {
		t.Fatalf("the second group holds %d batches, want all %d that arrived during the first commit", got, n)
	}
	events, tickets := onDisk(t, path)
	if len(events) != 1 || events[0] != first || len(tickets) != 1 || tickets[0] != first {
		t.Fatalf("with the second group not written, node.db holds orders %v and audit rows %v, want only %s", events, tickets, first)
	}
	for k, d := range dones {
		select {
		case err := <-d:
			t.Fatalf("caller %d was told its append was done (%v) before its group was written", k, err)
		default:
		}
	}
	release <- struct{}{}
	for k, d := range dones {
		if err := <-d; err != nil {
			t.Fatalf("caller %d: %v", k, err)
		}
	}
	events, tickets = onDisk(t, path)
	if strings.Join(events, ",") != strings.Join(a.order, ",") || strings.Join(tickets, ",") != strings.Join(a.order, ",") {
		t.Errorf("node.db holds events %v and audit rows %v, want both in admission order %v", events, tickets, a.order)
	}
	if s := j.Stats(); s.Batches != n+1 || s.Transactions != 2 {
		t.Errorf("stats = %+v, want %d batches in 2 transactions", s, n+1)
	}
	j.BeforeWrite(nil)
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	// The anchor records the whole of it, and the journal opens against it.
	again := open(t, path)
	if again.anchor.at != (level{commands: n + 1, events: n + 1}) || again.Commands() != n+1 {
		t.Errorf("anchor at %+v, journal at %d commands; want %d and %d", again.anchor.at, again.Commands(), n+1, n+1)
	}
}

// TestGroupCommitFailureLosesTheGroupAndWhatFollows: a group whose
// transaction fails is not written at all, every batch queued behind it
// fails too (it was built on the lost one), and the journal refuses
// appends until Recover, after which it commits again.
func TestGroupCommitFailureLosesTheGroupAndWhatFollows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "node.db")
	j := open(t, path)
	if err := j.Commit(submitBatch(0, 1)); err != nil {
		t.Fatal(err)
	}
	sizes, release := holdGroups(j)
	outcome := func(b *Batch) chan error {
		done := make(chan error, 1)
		if err := j.Append(b, func(err error) { done <- err }); err != nil {
			t.Fatal(err)
		}
		return done
	}
	good := outcome(submitBatch(1, 2))
	<-sizes
	bad := outcome(submitBatch(2, 2)) // event 2 again: the transaction fails
	after := outcome(submitBatch(3, 3))
	release <- struct{}{}
	if err := <-good; err != nil {
		t.Fatal(err)
	}
	<-sizes // bad and after, together
	release <- struct{}{}
	if err := <-bad; err == nil {
		t.Fatal("a batch repeating an event number was written")
	}
	if err := <-after; err == nil {
		t.Fatal("a batch in the failed group was written")
	}
	n := j.Appended()
	if err := j.Wait(context.Background(), n); err == nil {
		t.Error("Wait on a lost batch returned nil")
	}
	if err := j.Append(submitBatch(4, 3), nil); err == nil || !strings.Contains(err.Error(), "not rebuilt") {
		t.Errorf("an append after a lost commit, before Recover = %v", err)
	}
	if events, _ := onDisk(t, path); len(events) != 2 {
		t.Errorf("node.db holds %v, want the two orders before the failed group", events)
	}
	j.BeforeWrite(nil)
	j.Recover()
	if err := j.Commit(submitBatch(3, 3)); err != nil {
		t.Fatalf("after Recover: %v", err)
	}
	if err := j.Wait(context.Background(), j.Appended()); err != nil {
		t.Errorf("Wait after Recover: %v", err)
	}
	if events, _ := onDisk(t, path); strings.Join(events, ",") != "wk-0000,wk-0001,wk-0003" {
		t.Errorf("node.db holds %v", events)
	}
}

// groupChildEnv names the journal a child process of
// TestGroupCommitSurvivesSIGKILL appends to.
const groupChildEnv = "WICKET_JOURNAL_GROUP_CHILD"

// TestGroupCommitChild is the child process: writers append concurrently
// until killed, each printing its client order id once its append is done.
func TestGroupCommitChild(t *testing.T) {
	path := os.Getenv(groupChildEnv)
	if path == "" {
		t.Skip("the child of TestGroupCommitSurvivesSIGKILL")
	}
	j, err := Open(path)
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	a := &admitter{j: j}
	var out sync.Mutex
	for range 16 {
		go func() {
			for {
				cid, done := a.admit(t)
				if err := <-done; err != nil {
					fmt.Println("append:", err)
					os.Exit(2)
				}
				out.Lock()
				fmt.Println(cid)
				out.Unlock()
			}
		}()
	}
	select {}
}

// TestGroupCommitSurvivesSIGKILL: a node killed while sixteen writers
// append concurrently keeps every append it said was done, in one order
// with no gap, and its journal opens against its anchor.
func TestGroupCommitSurvivesSIGKILL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "node.db")
	for round := range 3 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestGroupCommitChild$")
		cmd.Env = append(os.Environ(), groupChildEnv+"="+path)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := map[string]bool{}
		lines := bufio.NewScanner(stdout)
		for lines.Scan() {
			line := lines.Text()
			if !strings.HasPrefix(line, "wk-") {
				t.Fatalf("child: %s", line)
			}
			done[line] = true
			if len(done) == 100 {
				if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
			}
		}
		var exit *exec.ExitError
		if err := cmd.Wait(); !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("round %d: the child ended with %v, not killed", round, err)
		}
		j, err := Open(path) // refused if the journal were behind its anchor
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		j.Close()
		events, tickets := onDisk(t, path) // no gap in the events
		held := map[string]bool{}
		for _, cid := range events {
			held[cid] = true
		}
		for cid := range done {
			if !held[cid] {
				t.Errorf("round %d: %s was done but is not in the journal", round, cid)
			}
		}
		if strings.Join(events, ",") != strings.Join(tickets, ",") {
			t.Errorf("round %d: events and audit rows are in different orders", round)
		}
		t.Logf("round %d: %d appends done before the kill, %d in the journal", round, len(done), len(events))
		// The next round's child starts its numbers again: a fresh journal.
		for _, suffix := range []string{"", anchorSuffix, anchorKeySuffix, "-journal"} {
			os.Remove(path + suffix)
		}
	}
}
