package server_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/command"
	"wicket/node/nodetest"
	"wicket/node/server"
)

// settablePrice is a mark feed the test moves.
type settablePrice struct {
	mu sync.Mutex
	p  decimal.Decimal
}

func (f *settablePrice) set(v string) { f.mu.Lock(); f.p = decimal.RequireFromString(v); f.mu.Unlock() }

func (f *settablePrice) Mark(string) (decimal.Decimal, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.p, f.p.IsPositive()
}

// TestVenueBreakerMovesTheVenueToReduceOnly: a paper venue with
// max_daily_loss in wicket.toml that loses more than that in its UTC day
// is moved to reduce_only at the next mark step: journaled (it holds
// across a restart), audited by the node, in the snapshot with the
// reason; a buy that adds is refused naming the breaker, a sell that
// reduces is taken; neither the control key nor another key clears it;
// the operator's signed clear does, and the venue trades again.
func TestVenueBreakerMovesTheVenueToReduceOnly(t *testing.T) {
	cfg := project.Defaults()
	v := &cfg.Venues[0]
	v.Marks, v.Cash, v.MaxDailyLoss = "binance", decimal.NewFromInt(10000), decimal.NewFromInt(50)
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	feed := &settablePrice{}
	feed.set("100")
	n := nodetest.NewServer(t, nodetest.WithConfig(cfg), nodetest.WithMarks(map[string]server.MarkFeed{"paper": feed}))
	c := n.Client()
	ctx := context.Background()
	n.Tick(t, 1)
	if out := send(t, c, order("paper", "BTC-USD", command.Buy, command.Market, "10", ""), "test"); out.Status != node.Accepted {
		t.Fatalf("buy: %+v", out)
	}
	breaker := func() string {
		t.Helper()
		s, err := c.Snapshot(ctx, "paper", 0)
		if err != nil {
			t.Fatal(err)
		}
		return s.Venues[0].Breaker
	}
	feed.set("97") // a loss of about 30: within the limit
	n.Tick(t, 1)
	if b := breaker(); b != "" {
		t.Fatalf("tripped within the limit: %s", b)
	}
	feed.set("94") // about 60 below the day's start
	n.Tick(t, 1)
	if b := breaker(); !strings.Contains(b, "max_daily_loss") || !strings.Contains(b, "wicket node clear-breaker paper") {
		t.Fatalf("breaker after the loss: %q", b)
	}
	out := send(t, c, order("paper", "BTC-USD", command.Buy, command.Market, "1", ""), "test")
	if out.Status != node.Rejected || out.Code != "reduce_only" || !strings.Contains(out.Reason, "venue paper is reduce_only by its breaker") {
		t.Fatalf("a buy past the breaker: %+v", out)
	}
	if out := send(t, c, order("paper", "BTC-USD", command.Sell, command.Market, "4", ""), "test"); out.Status != node.Accepted {
		t.Fatalf("a reducing sell: %+v", out)
	}
	page, err := c.Audit(ctx, node.AuditQuery{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	audited := 0
	for _, e := range page.Entries {
		if e.Arming != nil && e.Arming.Action == node.ArmingBreaker && e.KeyID == node.KeyNode && strings.Contains(e.Arming.Note, "max_daily_loss") {
			audited++
		}
	}
	if audited != 1 {
		t.Fatalf("%d audit entries for the trip, want 1", audited)
	}

	n.Restart(t)
	c = n.Client()
	if b := breaker(); !strings.Contains(b, "max_daily_loss") {
		t.Fatalf("the trip did not survive a restart: %q", b)
	}
	other := testkit.Key(t)
	if _, err := c.ClearBreaker(ctx, "paper", "paper", other); err == nil || !strings.Contains(err.Error(), "operator key's signature") {
		t.Fatalf("a clear signed by another key: %v", err)
	}
	if _, err := c.ClearBreaker(ctx, "paper", "papers", n.OperatorKey); err == nil || !strings.Contains(err.Error(), "typed to confirm") {
		t.Fatalf("a clear with the wrong name typed: %v", err)
	}
	if b := breaker(); b == "" {
		t.Fatal("a refused clear cleared the breaker")
	}
	if _, err := c.ClearBreaker(ctx, "paper", "paper", n.OperatorKey); err != nil {
		t.Fatal(err)
	}
	if b := breaker(); b != "" {
		t.Fatalf("after the operator's clear: %q", b)
	}
	n.Tick(t, 1) // measured from the clear: no new trip
	if b := breaker(); b != "" {
		t.Fatalf("re-tripped after the clear: %q", b)
	}
	if out := send(t, c, order("paper", "BTC-USD", command.Buy, command.Market, "1", ""), "test"); out.Status != node.Accepted {
		t.Fatalf("a buy after the clear: %+v", out)
	}
}
