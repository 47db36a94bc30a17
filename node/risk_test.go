package node_test

import (
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/command"
	"wicket/node/guardrail"
)

// TestSnapshotRunsTheSelfTradeCheck: a client's preview, checked against
// a snapshot, refuses an order crossing the account's own resting order.
func TestSnapshotRunsTheSelfTradeCheck(t *testing.T) {
	cfg := project.Defaults()
	cfg.Risk.SelfTrade = true
	snap := &node.Snapshot{Venues: []node.Venue{{Name: "paper", Marks: map[string]decimal.Decimal{"BTC-USD": testkit.D("100")},
		OpenOrders: []node.Order{{ID: "ord-1", Symbol: "BTC-USD", Side: command.Sell, Type: command.Limit, Quantity: testkit.D("1"), Price: testkit.D("101"), Status: node.OrderOpen}}}}}
	buy := command.Command{Verb: command.SubmitOrder, Venue: "paper", Symbol: "BTC-USD", Side: command.Buy, Type: command.Limit, Quantity: testkit.D("1"), Price: testkit.D("101")}
	rep := guardrail.New(cfg).Check(buy, snap)
	if rep.OK || !strings.Contains(rep.Summary(), "self_trade: buy 1 BTC-USD at 101 would cross the account's own resting sell 1 @ 101 (order ord-1)") {
		t.Fatalf("crossing buy: %s", rep.Summary())
	}
	buy.Price = testkit.D("100.99")
	if rep := guardrail.New(cfg).Check(buy, snap); !rep.OK {
		t.Fatalf("a buy under the resting sell: %s", rep.Summary())
	}
}
