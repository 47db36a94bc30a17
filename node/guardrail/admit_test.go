package guardrail

import (
	"testing"
	"time"

	"wicket/internal/testkit"
	"wicket/node/command"
)

// TestAdmitWritesOnlyRefusalsAsCheckWithDoes: the node's Admit runs the
// same checks with the same verdicts as CheckWith; a failed check's
// detail is CheckWith's word for word and a passing check's is left
// empty (the cost the node saves on every accepted write).
func TestAdmitWritesOnlyRefusalsAsCheckWithDoes(t *testing.T) {
	cfg := riskConfig()
	cfg.Risk.MaxMessages = 2
	g := New(cfg)
	v := restingView{view} // BTC-USD mark 40000, position 1, a buy resting @ 39000
	l := NewLedger()
	clk := testkit.NewClock(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	l.Filled("paper", clk.Now(), testkit.D("26000"))
	twice := submit(command.Buy, command.Limit, "0.1", "39500")
	g.Record(l, twice, "dep-a", clk.Now())
	g.Record(l, twice, "dep-a", clk.Now()) // the venue's and dep-a's message windows full, twice identical
	stopLimit := stop(command.Sell, "0.1", "31000", "30000")
	cmds := []command.Command{
		twice, // venue_messages, deployment_messages, identical_orders fail
		submit(command.Buy, command.Limit, "0.11", "40000"), // daily notional
		submit(command.Sell, command.Limit, "0.1", "39000"), // self trade
		submit(command.Sell, command.Limit, "0.1", "52000"), // price collar
		submit(command.Buy, command.Limit, "0.31", "40000"), // position quantity
		submit(command.Sell, command.Market, "0.6", ""),     // order quantity
		stopAt(command.Sell, "0.1", "31000"),                // stop collar
		stopLimit,                                           // stop collar of a stop_limit
		submit(command.Buy, command.Limit, "0.01", "39990"), // passes
		{Verb: command.Modify, Venue: "paper", OrderID: "ord-1", Price: testkit.D("39100")},
		{Verb: command.CancelOrder, Venue: "paper", OrderID: "ord-1"},
		{Verb: command.CancelOrder, Venue: "paper", OrderID: "ord-9"},
		{Verb: command.SubmitOrder, Venue: "nowhere", Symbol: "BTC-USD"},
	}
	passes, fails := 0, 0
	for _, c := range cmds {
		for _, dep := range []string{"", "dep-a"} {
			a := &Activity{Ledger: l, Deployment: dep, Now: clk.Now()}
			full, terse := g.CheckWith(c, v, a), g.Admit(c, v, a)
			if full.OK != terse.OK || len(full.Checks) != len(terse.Checks) {
				t.Fatalf("%s %s: Admit %v with %d checks, CheckWith %v with %d", c.Verb, describe(c), terse.OK, len(terse.Checks), full.OK, len(full.Checks))
			}
			for i, want := range full.Checks {
				if want.OK {
					want.Detail = ""
					passes++
				} else {
					fails++
				}
				if got := terse.Checks[i]; got != want {
					t.Errorf("%s %s: Admit's check %d is %+v, want %+v", c.Verb, describe(c), i, got, want)
				}
			}
			if full.Summary() != terse.Summary() {
				t.Errorf("summaries differ: %q and %q", terse.Summary(), full.Summary())
			}
		}
	}
	if passes == 0 || fails < 10 {
		t.Fatalf("the fixtures ran %d passing and %d failing checks: too few to compare", passes, fails)
	}
}
