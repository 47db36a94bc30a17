package server_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/command"
	"wicket/node/nodetest"
	"wicket/node/server"
)

// timedMarks is a provider's feed that also says when each price arrived
// (server.TimedMarkFeed), as wicket node serve's poll does; one price
// stands for every symbol.
type timedMarks struct {
	mu sync.Mutex
	p  decimal.Decimal
	at time.Time
}

func (f *timedMarks) set(price string, at time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.p, f.at = testkit.D(price), at
}

func (f *timedMarks) Mark(string) (decimal.Decimal, bool) {
	p, _, ok := f.MarkAt("")
	return p, ok
}

func (f *timedMarks) MarkAt(string) (decimal.Decimal, time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.p, f.at, f.p.IsPositive()
}

// TestPaperMarksOlderThanMaxMarkAgeNeverFill: the feed stops moving (its
// last price is held, as a provider that hangs leaves it), the node's clock
// runs on, and past the venue's max_mark_age (5s by default) orders on the
// symbol are refused with the mark's age and the bound, and a resting
// order the stale mark crosses waits until a fresh price arrives.
func TestPaperMarksOlderThanMaxMarkAgeNeverFill(t *testing.T) {
	clk := testkit.NewClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	feed := &timedMarks{}
	cfg := fedConfig()
	cfg.Venues[1].MaxMarkAge = 5 * time.Second
	srv := nodetest.NewServer(t, nodetest.WithConfig(cfg), nodetest.WithClock(clk.Now),
		nodetest.WithMarks(map[string]server.MarkFeed{"real": feed}))
	c := srv.Client(node.WithClock(clk.Now))

	feed.set("60000", clk.Now())
	srv.Tick(t, 1)
	buy := order("real", "BTC-USD", command.Buy, command.Market, "0.1", "")
	if out := accepted(t, c, buy); out.Order.Status != node.OrderFilled {
		t.Fatalf("market buy on a fresh mark: %+v", out.Order)
	}
	lim := accepted(t, c, order("real", "BTC-USD", command.Buy, command.Limit, "0.1", "59000"))

	// The feed dies: its price stays 60000 from 12:00:00 while the clock
	// runs 36 s on and the marks keep stepping.
	clk.Advance(36 * time.Second)
	srv.Tick(t, 2)
	out := rejected(t, c, buy, "stale_mark")
	if !strings.Contains(out.Reason, "the mark of BTC-USD on real is 36s old, older than its max_mark_age 5s") || !strings.Contains(out.Reason, "retry shortly") {
		t.Errorf("stale reason: %s", out.Reason)
	}
	if src := venueOf(t, snapshot(t, c), "real").MarkSource; !strings.Contains(src, "(orders fill on paper); the price of BTC-USD, ETH-USD is older than max_mark_age 5s; orders on those are refused until a price arrives") {
		t.Errorf("mark_source of a stale symbol: %q", src)
	}
	// A price that crosses the resting order but arrived 10 s ago (the feed's
	// last answer before it hung) triggers nothing.
	feed.set("58900", clk.Now().Add(-10*time.Second))
	srv.Tick(t, 1)
	v := venueOf(t, snapshot(t, c), "real")
	if p, _ := position(v, "BTC-USD"); !p.Quantity.Equal(testkit.D("0.1")) || len(v.OpenOrders) != 1 {
		t.Fatalf("a stale crossing mark filled the resting order: position %+v, open %+v", p, v.OpenOrders)
	}
	// A fresh price: the resting order fills, and orders are taken again.
	feed.set("58900", clk.Now())
	srv.Tick(t, 1)
	v = venueOf(t, snapshot(t, c), "real")
	if p, _ := position(v, "BTC-USD"); !p.Quantity.Equal(testkit.D("0.2")) || len(v.OpenOrders) != 0 {
		t.Errorf("after a fresh mark: position %+v, open %+v (order %s)", p, v.OpenOrders, lim.Order.ID)
	}
	accepted(t, c, buy)
}

// TestPaperMarksFromAPlainFeedAgeFromTheirStep: a feed that says nothing of
// when its prices arrived (a plain server.MarkFeed) gives each price the
// time of the step that read it, so a symbol whose feed went silent ages
// from its last step with a price.
func TestPaperMarksFromAPlainFeedAgeFromTheirStep(t *testing.T) {
	clk := testkit.NewClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	feed := &fakeMarks{}
	cfg := fedConfig()
	cfg.Venues[1].MaxMarkAge = 2 * time.Second
	srv := nodetest.NewServer(t, nodetest.WithConfig(cfg), nodetest.WithClock(clk.Now),
		nodetest.WithMarks(map[string]server.MarkFeed{"real": feed}))
	c := srv.Client(node.WithClock(clk.Now))
	feed.set("BTC-USD", "60000")
	srv.Tick(t, 1)
	clk.Advance(2 * time.Second)
	buy := order("real", "BTC-USD", command.Buy, command.Market, "0.1", "")
	accepted(t, c, buy)
	srv.Tick(t, 1) // the feed still answers: the mark is 0s old again
	clk.Advance(2 * time.Second)
	accepted(t, c, buy)
	feed.drop("BTC-USD") // silent, and no step has read it since: the mark is held
	clk.Advance(time.Second)
	out := rejected(t, c, buy, "stale_mark")
	if !strings.Contains(out.Reason, "is 3s old, older than its max_mark_age 2s") {
		t.Errorf("reason: %s", out.Reason)
	}
}
