package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/node"
	"wicket/node/command"
	"wicket/node/nodetest"
)

// TestNodeKeepsAcknowledgedOrdersWithoutItsSideFiles acknowledges orders
// on a real node process, kills it with SIGKILL, deletes every file
// SQLite may keep beside node.db (-wal, -shm), and restarts it: every
// acknowledged order is still there with its ticket and audit entry, and
// a client order id already used is refused, not placed again.
func TestNodeKeepsAcknowledgedOrdersWithoutItsSideFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real node processes")
	}
	dir := filepath.Join(t.TempDir(), "proj")
	p, err := project.Init(dir, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	secrets, err := p.Secrets(func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	observe, _, _ := secrets.Lookup(project.KeyObserve)
	control, _, _ := secrets.Lookup(project.KeyControl)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	proc, addr := startNode(t, dir)
	client, err := node.NewClient(addr, observe, control)
	if err != nil {
		t.Fatal(err)
	}
	const n = 30
	order := func(i int) command.Command {
		side := command.Buy
		if i%2 == 1 {
			side = command.Sell
		}
		return command.Command{Verb: command.SubmitOrder, Venue: "paper", Symbol: "BTC-USD", Side: side, Type: command.Market,
			Quantity: decimal.New(1, -2), ClientOrderID: fmt.Sprintf("kept-%02d", i)}
	}
	var acks []node.Outcome
	for i := range n {
		out, err := nodetest.Send(ctx, client, command.NewEnvelope(order(i), "kept across a crash"), 10*time.Second)
		if err != nil || out.Status != node.Accepted {
			t.Fatalf("order %d: %+v, %v", i, out, err)
		}
		acks = append(acks, out)
	}
	if err := proc.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	proc.Wait() //nolint:errcheck // killed
	journal := p.JournalPath()
	for _, side := range []string{"-wal", "-shm"} {
		if err := os.Remove(journal + side); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
	}

	_, addr = startNode(t, dir)
	if client, err = node.NewClient(addr, observe, control); err != nil {
		t.Fatal(err)
	}
	for i, a := range acks {
		got, err := client.Ticket(ctx, a.Ticket, 0)
		if err != nil || got.Status != node.Accepted || got.OrderID != a.OrderID {
			t.Errorf("acknowledged order %d (ticket %s, %s) after the crash: %+v, %v", i, a.Ticket, a.OrderID, got, err)
		}
		page, err := client.Audit(ctx, node.AuditQuery{ClientOrderID: a.ClientOrderID})
		if err != nil || len(page.Entries) != 1 || page.Entries[0].Ticket != a.Ticket {
			t.Errorf("audit of %s after the crash: %+v, %v", a.ClientOrderID, page, err)
		}
	}
	again, err := nodetest.Send(ctx, client, command.NewEnvelope(order(0), "a retry of the first order"), 10*time.Second)
	if again.Status != node.Rejected || again.Code != "duplicate_client_order_id" {
		t.Errorf("a reused client order id after the crash: %+v, %v; want duplicate_client_order_id", again, err)
	}
}
