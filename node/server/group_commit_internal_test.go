package server

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/command"
)

// groupNode starts a node on a new journal, with its in-process
// connection and a function that submits a set_trading_state command and
// returns its ticket.
func groupNode(t *testing.T) (*Server, *Local, func(command.TradingState) string) {
	t.Helper()
	clk := testkit.NewClock(testkit.Time("2025-03-04T05:06:07Z"))
	s, err := New(Config{Project: project.Defaults(), JournalPath: filepath.Join(t.TempDir(), "node.db"),
		ObserveKey: testkit.Secret(t, 32), ControlKey: testkit.Secret(t, 32), Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	l, err := s.Local(node.KeyControl)
	if err != nil {
		t.Fatal(err)
	}
	return s, l, func(state command.TradingState) string {
		t.Helper()
		id, err := l.Submit(context.Background(), command.NewEnvelope(command.Command{Verb: command.SetTradingState, State: state}, "group commit"))
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
}

// TestFoldAppliesCommandsWhileACommitIsInFlight: the fold does not wait
// for the journal. While one command's commit is in flight it applies the
// commands behind it, whose rows then go into one next transaction; no
// ticket resolves, and no snapshot answers, before what it shows is
// durable.
func TestFoldAppliesCommandsWhileACommitIsInFlight(t *testing.T) {
	s, l, submit := groupNode(t)
	ctx := context.Background()
	before := s.j.Stats()
	sizes, release := make(chan int), make(chan struct{})
	s.j.BeforeWrite(func(n int) error { sizes <- n; <-release; return nil })
	defer s.j.BeforeWrite(nil)

	ids := []string{submit(command.ReduceOnly)}
	if n := <-sizes; n != 1 {
		t.Fatalf("the first commit holds %d commands, want 1", n)
	}
	// Its commit is held in flight; n more commands arrive.
	const n = 20
	states := []command.TradingState{command.Active, command.ReduceOnly}
	for i := range n {
		ids = append(ids, submit(states[i%2]))
	}
	// A job queued behind them runs: the fold applied them all meanwhile.
	var state command.TradingState
	if err := s.do(ctx, func() { state = s.eng.state }); err != nil {
		t.Fatal(err)
	}
	if want := states[(n-1)%2]; state != want {
		t.Fatalf("with the first commit in flight the fold's state is %s, want %s: it did not apply the commands behind it", state, want)
	}
	for _, id := range ids {
		if out, err := l.Ticket(ctx, id, 0); err != nil || out.Status != node.Pending {
			t.Fatalf("ticket %s is %s (%v) before its command is durable", id, out.Status, err)
		}
	}
	snapped := make(chan *node.Snapshot, 1)
	go func() {
		snap, err := l.Snapshot(ctx, "", 0)
		if err != nil {
			t.Error(err)
		}
		snapped <- snap
	}()

	release <- struct{}{} // the first commit completes
	if out, err := l.Ticket(ctx, ids[0], maxWait); err != nil || out.Status != node.Accepted {
		t.Fatalf("the first command: %+v %v", out, err)
	}
	if got := <-sizes; got != n {
		t.Fatalf("the next commit holds %d commands, want the %d applied while the first was in flight", got, n)
	}
	for _, id := range ids[1:] {
		if out, err := l.Ticket(ctx, id, 0); err != nil || out.Status != node.Pending {
			t.Fatalf("ticket %s is %s (%v) before its command is durable", id, out.Status, err)
		}
	}
	select {
	case <-snapped:
		t.Fatal("a snapshot answered before the state it shows was durable")
	default:
	}
	release <- struct{}{}
	for _, id := range ids {
		if out, err := l.Ticket(ctx, id, maxWait); err != nil || out.Status != node.Accepted {
			t.Fatalf("ticket %s: %+v %v", id, out, err)
		}
	}
	if snap := <-snapped; snap == nil || snap.TradingState != state {
		t.Errorf("the snapshot shows %+v, want trading state %s", snap, state)
	}
	after := s.j.Stats()
	if tx, b := after.Transactions-before.Transactions, after.Batches-before.Batches; tx != 2 || b != n+1 {
		t.Errorf("%d commands went into %d transactions (%d batches), want %d in 2", n+1, tx, b, n+1)
	}
}

// TestALostCommitRejectsItsCommandsAndTheFoldRebuilds: when the
// transaction holding commands the fold applied while another commit was
// in flight fails, each of their tickets resolves rejected (nothing of
// them is in the journal), the fold rebuilds its state from the journal
// before it applies anything else, and the next command is taken.
func TestALostCommitRejectsItsCommandsAndTheFoldRebuilds(t *testing.T) {
	s, l, submit := groupNode(t)
	ctx := context.Background()
	var holding atomic.Bool
	holding.Store(true)
	sizes, verdict := make(chan int), make(chan error)
	s.j.BeforeWrite(func(n int) error {
		if !holding.Load() {
			return nil
		}
		sizes <- n
		return <-verdict
	})
	defer s.j.BeforeWrite(nil)

	first := submit(command.ReduceOnly)
	<-sizes
	const n = 5
	var lost []string
	for range n {
		lost = append(lost, submit(command.Halted))
	}
	verdict <- nil // the first commit is written
	if out, err := l.Ticket(ctx, first, maxWait); err != nil || out.Status != node.Accepted {
		t.Fatalf("the first command: %+v %v", out, err)
	}
	if got := <-sizes; got != n {
		t.Fatalf("the next commit holds %d commands, want %d", got, n)
	}
	holding.Store(false)
	verdict <- errors.New("injected: the disk is full")
	for _, id := range lost {
		out, err := l.Ticket(ctx, id, maxWait)
		if err != nil || out.Status != node.Rejected || out.Code != "journal" || !strings.Contains(out.Reason, "could not record the command") {
			t.Fatalf("ticket %s of a lost commit: %+v %v", id, out, err)
		}
		if _, found, err := s.j.Ticket(id); found || err != nil {
			t.Errorf("the journal holds ticket %s of the lost commit (%v)", id, err)
		}
	}
	snap, err := l.Snapshot(ctx, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if snap.TradingState != command.ReduceOnly {
		t.Errorf("after the lost commit the node is %s, want %s as its journal has it", snap.TradingState, command.ReduceOnly)
	}
	next := submit(command.Active)
	if out, err := l.Ticket(ctx, next, maxWait); err != nil || out.Status != node.Accepted {
		t.Fatalf("the command after the rebuild: %+v %v", out, err)
	}
	if snap, err := l.Snapshot(ctx, "", 0); err != nil || snap.TradingState != command.Active {
		t.Errorf("after the next command: %v %v", snap, err)
	}
}
