package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"os"
	"strings"
	"testing"
	"time"

	"wicket/agent/approval"
	"wicket/internal/testkit"
)

// TestApproveJSONListsWhatWaits: approve --json's listing carries the
// waiting command as the servers describe it, leaves one whose window
// passed, and decides nothing: the command still waits after it.
func TestApproveJSONListsWhatWaits(t *testing.T) {
	dir, err := os.MkdirTemp("", "appj") // short: a socket path's length is bounded
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	key := testkit.Key(t)
	q, err := approval.Listen(dir, nil, key.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	expires := time.Now().Add(time.Minute)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = q.Wait(ctx, approval.Request{ID: "prev-1", Session: "s1", Tool: "submit_order",
			Command: "submit_order: buy 1 SPY at market, day, on venue al"}, expires)
	}()
	testkit.WaitFor(t, "the request to wait", 10*time.Second, func() (bool, string) {
		got, _ := approval.List(ctx, dir)
		return len(got) == 1, "not listed yet"
	})
	out := approveListing(ctx, dir, nil, time.Now())
	if len(out.Commands) != 1 || out.Commands[0].Tool != "submit_order" || !strings.Contains(out.Commands[0].Command, "buy 1 SPY") ||
		out.Commands[0].Server != os.Getpid() || len(out.Proposals) != 0 || len(out.Notes) != 0 {
		t.Fatalf("listing %+v", out)
	}
	var b bytes.Buffer
	if err := writeJSON(&b, out); err != nil || validJSON(b.String(), false) != nil || !strings.Contains(b.String(), `"proposals": []`) {
		t.Fatalf("JSON %v\n%s", err, b.String())
	}
	if late := approveListing(ctx, dir, nil, expires.Add(time.Second)); len(late.Commands) != 0 {
		t.Errorf("a command past its window is listed: %+v", late.Commands)
	}
	select {
	case <-done:
		t.Fatal("listing decided the waiting command")
	default:
	}
	if still, _ := approval.List(ctx, dir); len(still) != 1 {
		t.Errorf("after the listing %d commands wait, want 1", len(still))
	}
}
