package server_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"wicket/node"
	"wicket/node/nodetest"
)

// TestNodeKeepsLedgerHeads: the node keeps the research ledger heads it
// is sent (the control key only), in its journal across a restart, out of
// the audit pages, and refuses a malformed one.
func TestNodeKeepsLedgerHeads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "node.db")
	srv := nodetest.NewServer(t, nodetest.WithJournal(path))
	ctx := context.Background()
	c := srv.Client()
	head := func(seq int64) node.LedgerHead {
		return node.LedgerHead{Seq: seq, Hash: strings.Repeat("a", 64), RunID: "run-1", Rows: 1, Time: "2026-12-03T00:00:00Z", MAC: strings.Repeat("b", 64)}
	}
	for _, s := range []int64{1, 2} {
		if err := c.AnchorLedger(ctx, head(s)); err != nil {
			t.Fatal(err)
		}
	}
	bad := head(3)
	bad.Hash = "not hex"
	if err := c.AnchorLedger(ctx, bad); err == nil || !strings.Contains(err.Error(), "hash must be 64 hex digits") {
		t.Errorf("a malformed head: %v", err)
	}
	observer := observeClient(t, srv)
	if err := observer.AnchorLedger(ctx, head(3)); err == nil {
		t.Error("the observe key kept a ledger head")
	}
	page, err := c.Audit(ctx, node.AuditQuery{})
	if err != nil || len(page.Entries) != 0 {
		t.Errorf("the audit pages show ledger heads: %+v %v", page.Entries, err)
	}
	srv.Close()
	srv = nodetest.NewServer(t, nodetest.WithJournal(path))
	heads, err := observeClient(t, srv).LedgerHeads(ctx)
	if err != nil || len(heads) != 2 || heads[1] != head(2) {
		t.Fatalf("heads after a restart: %+v %v", heads, err)
	}
}

// observeClient is a client of srv holding its observe key only.
func observeClient(t *testing.T, srv *nodetest.Server) *node.Client {
	t.Helper()
	c, err := node.NewClient(srv.Addr, srv.ObserveKey, "")
	if err != nil {
		t.Fatal(err)
	}
	return c
}
