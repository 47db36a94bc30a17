package server

import (
	"context"
	"fmt"
	"testing"
	"time"

	"wicket/node"
)

// TestTicketsWait: an unknown ticket is not found; a pending one answers
// pending without a wait, or when the caller gives up; a waiter gets the
// final outcome even when the ticket is evicted from memory right after it
// resolves.
func TestTicketsWait(t *testing.T) {
	ctx := context.Background()
	tk := newTickets()
	if _, ok := tk.wait(ctx, "tk-none", time.Hour); ok {
		t.Error("an unknown ticket was found")
	}
	tk.open("tk-a")
	if out, ok := tk.wait(ctx, "tk-a", 0); !ok || out.Status != node.Pending || out.Ticket != "tk-a" {
		t.Errorf("pending ticket = %+v, %v", out, ok)
	}
	gone, cancel := context.WithCancel(ctx)
	cancel()
	if out, ok := tk.wait(gone, "tk-a", time.Hour); !ok || out.Status != node.Pending {
		t.Errorf("pending ticket after the caller gave up = %+v, %v", out, ok)
	}

	got := make(chan node.Outcome)
	waiter, now, _ := tk.get("tk-a") // the waiter holds the ticket before it resolves
	go func() { got <- waiter.block(ctx, now, time.Hour) }()
	tk.resolve("tk-a", node.Outcome{Status: node.Accepted, OrderID: "ord-1"})
	for i := range resolvedKept { // evicts tk-a
		id := fmt.Sprintf("tk-%d", i)
		tk.open(id)
		tk.resolve(id, node.Outcome{Status: node.Rejected})
	}
	if out := <-got; out.Status != node.Accepted || out.OrderID != "ord-1" || out.Ticket != "tk-a" {
		t.Errorf("waiter got %+v, want tk-a accepted", out)
	}
	if _, ok := tk.wait(ctx, "tk-a", 0); ok {
		t.Error("tk-a is still in memory after 4096 newer tickets resolved")
	}
}

// TestTicketsSettle: a ticket resolved pending reads its settled outcome
// after settle; a ticket resolved otherwise, or not yet, is not changed.
func TestTicketsSettle(t *testing.T) {
	ctx := context.Background()
	tk := newTickets()
	tk.open("tk-p")
	tk.resolve("tk-p", node.Outcome{Status: node.Pending})
	tk.settle("tk-p", node.Outcome{Status: node.Accepted, Detail: "settled"})
	if out, ok := tk.wait(ctx, "tk-p", 0); !ok || out.Status != node.Accepted || out.Detail != "settled" || out.Ticket != "tk-p" {
		t.Errorf("settled ticket = %+v, %v", out, ok)
	}
	tk.open("tk-r")
	tk.resolve("tk-r", node.Outcome{Status: node.Rejected})
	tk.settle("tk-r", node.Outcome{Status: node.Accepted})
	if out, _ := tk.wait(ctx, "tk-r", 0); out.Status != node.Rejected {
		t.Errorf("a rejected ticket was settled: %+v", out)
	}
	tk.open("tk-q")
	tk.settle("tk-q", node.Outcome{Status: node.Accepted})
	if out, _ := tk.wait(ctx, "tk-q", 0); out.Status != node.Pending {
		t.Errorf("a queued ticket was settled: %+v", out)
	}
}
