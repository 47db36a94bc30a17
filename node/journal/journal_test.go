package journal

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/command"
)

var t0 = time.Date(2025, 3, 4, 5, 6, 7, 890, time.UTC)

func open(t *testing.T, path string) *Journal {
	t.Helper()
	j, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	return j
}

func entry(ticket string, at time.Time, status node.Status) *node.AuditEntry {
	c := command.Command{Verb: command.SetTradingState, State: command.Halted}
	return &node.AuditEntry{Time: at, Ticket: ticket, KeyID: node.KeyControl, Command: c, Reason: "why " + ticket,
		Outcome: node.Outcome{Ticket: ticket, Status: status, Verb: c.Verb, Time: at}}
}

func TestCommitReplayAndRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "node.db")
	j := open(t, path)
	e1 := entry("tk-1", t0, node.Accepted)
	if err := j.Commit(&Batch{Entry: e1, Events: []node.Event{
		{Seq: 1, Time: t0, Kind: node.EventTradingState, State: command.Halted},
		{Seq: 2, Time: t0, Kind: node.EventVenueOpened, Venue: "p", Cash: testkit.D("10.50")},
	}}); err != nil {
		t.Fatal(err)
	}
	if e1.Seq != 1 {
		t.Errorf("entry seq = %d", e1.Seq)
	}
	if err := j.Commit(&Batch{Marks: []Mark{{"p", "X", testkit.D("101.5")}}, Tick: 7}); err != nil {
		t.Fatal(err)
	}
	if err := j.Commit(&Batch{Marks: []Mark{{"p", "X", testkit.D("102")}}, Tick: 8}); err != nil {
		t.Fatal(err)
	}
	e2 := entry("tk-2", t0.Add(time.Hour), node.Rejected)
	if err := j.Commit(&Batch{Entry: e2}); err != nil {
		t.Fatal(err)
	}
	j.Close()

	// A reopened journal gives everything back.
	j = open(t, path)
	var got []node.Event
	if err := j.Replay(func(ev node.Event) error { got = append(got, ev); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].State != command.Halted || !got[1].Cash.Equal(testkit.D("10.5")) || !got[0].Time.Equal(t0) {
		t.Errorf("replayed %+v", got)
	}
	tick, marks, err := j.Marks()
	if err != nil || tick != 8 || len(marks) != 1 || !marks[0].Price.Equal(testkit.D("102")) {
		t.Errorf("marks = %d %+v %v", tick, marks, err)
	}
	o, ok, err := j.Ticket("tk-2")
	if err != nil || !ok || o.Status != node.Rejected {
		t.Errorf("ticket tk-2 = %+v %v %v", o, ok, err)
	}
	if _, ok, err := j.Ticket("tk-9"); ok || err != nil {
		t.Errorf("unknown ticket found: %v %v", ok, err)
	}
	page, err := j.Audit(node.AuditQuery{Since: t0.Add(time.Minute)})
	if err != nil || len(page.Entries) != 1 || page.Entries[0].Ticket != "tk-2" || page.Entries[0].Reason != "why tk-2" || page.Entries[0].Seq != 2 {
		t.Errorf("audit since = %+v %v", page, err)
	}
}

// TestCommitIsAtomic: a batch that fails part-way leaves nothing behind.
func TestCommitIsAtomic(t *testing.T) {
	j := open(t, filepath.Join(t.TempDir(), "node.db"))
	if err := j.Commit(&Batch{Events: []node.Event{{Seq: 1, Time: t0, Kind: node.EventTradingState, State: command.Active}}}); err != nil {
		t.Fatal(err)
	}
	err := j.Commit(&Batch{Entry: entry("tk-x", t0, node.Accepted), Tick: 5, Events: []node.Event{
		{Seq: 2, Time: t0, Kind: node.EventTradingState, State: command.Halted},
		{Seq: 1, Time: t0, Kind: node.EventTradingState, State: command.ReduceOnly}, // duplicate seq
	}})
	if err == nil {
		t.Fatal("a batch with a duplicate event number committed")
	}
	n := 0
	if err := j.Replay(func(node.Event) error { n++; return nil }); err != nil || n != 1 {
		t.Errorf("after a failed batch: %d events, %v", n, err)
	}
	if _, ok, _ := j.Ticket("tk-x"); ok {
		t.Error("the failed batch's command was recorded")
	}
	if tick, _, _ := j.Marks(); tick != 0 {
		t.Errorf("the failed batch's tick was recorded: %d", tick)
	}
}

func TestOpenChecksModeAndSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "node.db")
	j := open(t, path)
	var mode, sync string
	if err := j.w.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "delete" {
		t.Errorf("journal_mode = %q %v", mode, err)
	}
	if err := j.w.QueryRow("PRAGMA synchronous").Scan(&sync); err != nil || sync != "2" {
		t.Errorf("synchronous = %q %v, want 2 (FULL)", sync, err)
	}
	if _, err := j.w.Exec(`UPDATE meta SET value = '99' WHERE key = 'schema'`); err != nil {
		t.Fatal(err)
	}
	j.Close()
	if _, err := Open(path); err == nil || !strings.Contains(err.Error(), "journal schema 99") {
		t.Errorf("Open of another schema = %v", err)
	}
	if _, err := Open(filepath.Join(t.TempDir(), "a?b.db")); err == nil {
		t.Error("Open accepted a path with '?'")
	}
}

func TestOneNodePerJournal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "node.db")
	j := open(t, path)
	if _, err := Open(path); err == nil || !strings.Contains(err.Error(), "in use by another running node") {
		t.Fatalf("second Open = %v, want a refusal", err)
	}
	j.Close()
	again, err := Open(path)
	if err != nil {
		t.Fatalf("Open after Close = %v", err)
	}
	again.Close()
}

// TestArmingEntries: an arming entry is stored beside its event, read back
// with its change and no command, and not counted as a command at start.
func TestArmingEntries(t *testing.T) {
	path := filepath.Join(t.TempDir(), "node.db")
	j := open(t, path)
	until := t0.Add(8 * time.Hour)
	arm := node.AuditEntry{Time: t0, Ticket: "arming-1", KeyID: node.KeyControl,
		Arming:  &node.ArmingChange{Action: node.ArmingArm, Venue: "bn", Environment: "testnet", Until: until, Note: "armed"},
		Outcome: node.Outcome{Ticket: "arming-1", Status: node.Accepted, Detail: "armed"}}
	if err := j.Commit(&Batch{Audit: []node.AuditEntry{arm},
		Events: []node.Event{{Seq: 1, Time: t0, Kind: node.EventArmed, Venue: "bn", Until: until}}}); err != nil {
		t.Fatal(err)
	}
	if err := j.Commit(&Batch{Audit: []node.AuditEntry{{Ticket: "x"}}}); err == nil {
		t.Error("an audit entry without an arming change was stored beside the command")
	}
	j.Close()
	j = open(t, path)
	if s := j.Start(); s.New || s.Commands != 0 {
		t.Errorf("start = %+v, want an existing journal of 0 commands", s)
	}
	page, err := j.Audit(node.AuditQuery{})
	if err != nil || len(page.Entries) != 1 {
		t.Fatalf("audit = %+v %v", page, err)
	}
	e := page.Entries[0]
	if e.Arming == nil || *e.Arming != *arm.Arming || e.Command.Verb != "" || e.KeyID != node.KeyControl || e.Outcome.Status != node.Accepted {
		t.Errorf("arming entry read back as %+v", e)
	}
}

// TestSettleTickets: a command committed pending is unsettled until a
// later batch settles it; then its ticket and audit entry read the
// settled outcome, and it settles only once.
func TestSettleTickets(t *testing.T) {
	path := filepath.Join(t.TempDir(), "node.db")
	j := open(t, path)
	if err := j.Commit(&Batch{Entry: entry("tk-p", t0, node.Pending)}); err != nil {
		t.Fatal(err)
	}
	if err := j.Commit(&Batch{Entry: entry("tk-a", t0, node.Accepted)}); err != nil {
		t.Fatal(err)
	}
	un, err := j.Unsettled()
	if err != nil || len(un) != 1 || un[0].Ticket != "tk-p" || un[0].Outcome.Status != node.Pending {
		t.Fatalf("unsettled = %+v, %v", un, err)
	}
	settled := node.Outcome{Ticket: "tk-p", Status: node.Accepted, Verb: command.SetTradingState, Time: t0.Add(time.Minute), Detail: "settled"}
	if err := j.Commit(&Batch{Settle: []node.Outcome{settled}}); err != nil {
		t.Fatal(err)
	}
	if err := j.Commit(&Batch{Settle: []node.Outcome{settled}}); err == nil {
		t.Error("a ticket settled twice")
	}
	j.Close()
	j = open(t, path)
	if o, ok, err := j.Ticket("tk-p"); err != nil || !ok || o.Status != node.Accepted || o.Detail != "settled" {
		t.Errorf("settled ticket = %+v %v %v", o, ok, err)
	}
	page, err := j.Audit(node.AuditQuery{})
	if err != nil || len(page.Entries) != 2 || page.Entries[0].Outcome.Detail != "settled" || page.Entries[1].Outcome.Status != node.Accepted {
		t.Errorf("audit = %+v, %v", page, err)
	}
	if un, err := j.Unsettled(); err != nil || len(un) != 0 {
		t.Errorf("unsettled after settling = %+v, %v", un, err)
	}
}
