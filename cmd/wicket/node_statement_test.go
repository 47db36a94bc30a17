package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"wicket/internal/testkit"
	"wicket/node"
)

// TestStatementPrintsEachMismatchAndExits3: every mismatch is printed
// with both figures, and a mismatch exits 3; a matching day and a paper
// venue exit 0.
func TestStatementPrintsEachMismatchAndExits3(t *testing.T) {
	bad := []node.Statement{{Day: "2026-12-02", Venue: "bn", Kind: "binance", Independent: true, NodeFills: 2, VenueFills: 3,
		NodeFees: testkit.D("0"), VenueFees: testkit.D("0.6"), Funding: "none: a spot account pays no funding", Mismatches: []node.Mismatch{
			{What: "fee", Node: "0", Venue: "0.6", Text: "order ord-1 (BTCUSDT): the node booked a fee of 0, the venue charged 0.6"},
			{What: "missing_in_node", Venue: "0.003 @ 60000", Text: "venue order 1003 (sell 0.003 BTCUSDT): it is an order the node never placed"},
		}}}
	var out bytes.Buffer
	err := printStatements(&out, bad, false)
	var ec cli.ExitCoder
	if !errors.As(err, &ec) || ec.ExitCode() != exitMismatch {
		t.Fatalf("exit: %v", err)
	}
	for _, want := range []string{"MISMATCH fee", "(node 0, venue 0.6)", "MISMATCH missing_in_node", "(node none, venue 0.003 @ 60000)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	good := []node.Statement{{Day: "2026-12-02", Venue: "paper", Kind: "paper", Note: "paper venue: its only record is the node's own journal, so there is no independent history to compare"},
		{Day: "2026-12-02", Venue: "bn", Kind: "binance", Independent: true}}
	out.Reset()
	if err := printStatements(&out, good, false); err != nil || !strings.Contains(out.String(), "not compared") || !strings.Contains(out.String(), "matches the venue's history") {
		t.Errorf("good day: %v\n%s", err, out.String())
	}
}
