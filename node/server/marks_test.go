package server_test

import (
	"path/filepath"
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

// fakeMarks stands in for a market data provider's last trade prices (the
// provider is outside the node; wicket node serve polls the real one).
type fakeMarks struct {
	mu sync.Mutex
	m  map[string]decimal.Decimal
}

func (f *fakeMarks) set(symbol, price string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil {
		f.m = map[string]decimal.Decimal{}
	}
	f.m[symbol] = testkit.D(price)
}

// drop makes the feed stop giving a price of symbol, as a provider that
// stopped answering would.
func (f *fakeMarks) drop(symbol string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.m, symbol)
}

func (f *fakeMarks) Mark(symbol string) (decimal.Decimal, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, ok := f.m[symbol]
	return p, ok
}

// fedConfig is the default project plus a paper venue "real" whose marks
// come from binance, without slippage so a market order fills at the mark.
func fedConfig() project.Config {
	cfg := project.Defaults()
	cfg.Venues = append(cfg.Venues, project.Venue{Name: "real", Kind: project.KindPaper, Marks: "binance", Currency: "USD",
		Cash: testkit.D("100000"), Symbols: []string{"BTC-USD", "ETH-USD"}, QuantityDecimals: 6, PriceDecimals: 2})
	return cfg
}

func TestPaperMarksFromAFeedFillAMarketOrderAtTheFedPrice(t *testing.T) {
	feed := &fakeMarks{}
	srv := nodetest.NewServer(t, nodetest.WithConfig(fedConfig()),
		nodetest.WithMarks(map[string]server.MarkFeed{"real": feed}))
	c := srv.Client()

	// Before any price arrives: the snapshot says so, orders are refused.
	srv.Tick(t, 1)
	src := venueOf(t, snapshot(t, c), "real").MarkSource
	if !strings.HasPrefix(src, "binance: last trade price") || !strings.Contains(src, "no price yet for BTC-USD, ETH-USD") {
		t.Errorf("mark_source before any price = %q", src)
	}
	if src := venueOf(t, snapshot(t, c), "paper").MarkSource; !strings.HasPrefix(src, "simulated") {
		t.Errorf("the simulated venue's mark_source = %q", src)
	}
	buy := order("real", "BTC-USD", command.Buy, command.Market, "0.3", "")
	out := rejected(t, c, buy, "no_mark")
	if !strings.Contains(out.Reason, "no price of BTC-USD has arrived from binance yet") || !strings.Contains(out.Reason, "retry shortly") {
		t.Errorf("no-mark reason: %s", out.Reason)
	}

	// The feed's price becomes the mark at the next step, rounded to the
	// venue's price decimals; a market order fills there, on paper.
	feed.set("BTC-USD", "61234.5678")
	srv.Tick(t, 1)
	v := venueOf(t, snapshot(t, c), "real")
	eq(t, "fed mark", v.Marks["BTC-USD"], "61234.57")
	if !strings.Contains(v.MarkSource, "no price yet for ETH-USD") || strings.Contains(v.MarkSource, "BTC-USD") {
		t.Errorf("mark_source after BTC's price = %q", v.MarkSource)
	}
	out = accepted(t, c, buy)
	if out.Order == nil || out.Order.Status != node.OrderFilled {
		t.Fatalf("market buy: %+v", out)
	}
	eq(t, "fill price", out.Order.AveragePrice, "61234.57")
	eq(t, "cash after the fill", venueOf(t, snapshot(t, c), "real").Cash, "81629.629") // no fee_bps on this venue
	rejected(t, c, order("real", "ETH-USD", command.Buy, command.Market, "1", ""), "no_mark")

	// The mark follows the feed, never the walk: a still price stays still,
	// and a new one moves it.
	srv.Tick(t, 3)
	eq(t, "still fed mark", venueOf(t, snapshot(t, c), "real").Marks["BTC-USD"], "61234.57")
	feed.set("BTC-USD", "60000")
	srv.Tick(t, 1)
	eq(t, "moved fed mark", venueOf(t, snapshot(t, c), "real").Marks["BTC-USD"], "60000")
	sell := accepted(t, c, order("real", "BTC-USD", command.Sell, command.Market, "0.3", ""))
	eq(t, "sell fill", sell.Order.AveragePrice, "60000")

	// A resting limit order fills when the fed mark reaches it.
	lim := accepted(t, c, order("real", "BTC-USD", command.Buy, command.Limit, "0.1", "59500"))
	if lim.Order.Status != node.OrderOpen {
		t.Fatalf("limit buy below the mark: %+v", lim.Order)
	}
	feed.set("BTC-USD", "59400.004")
	srv.Tick(t, 1)
	p, ok := position(venueOf(t, snapshot(t, c), "real"), "BTC-USD")
	if !ok || !p.Quantity.Equal(testkit.D("0.1")) {
		t.Errorf("after the fed mark crossed the limit: position %+v %v", p, ok)
	}

	// A feed that stops answering holds the mark and stops orders on it
	// until it answers again.
	feed.drop("BTC-USD")
	srv.Tick(t, 1)
	v = venueOf(t, snapshot(t, c), "real")
	eq(t, "held mark", v.Marks["BTC-USD"], "59400")
	if !strings.Contains(v.MarkSource, "the provider stopped answering for BTC-USD (marks held at the last price)") {
		t.Errorf("mark_source after the feed stopped = %q", v.MarkSource)
	}
	out = rejected(t, c, buy, "no_mark")
	if !strings.Contains(out.Reason, "binance stopped answering for BTC-USD") {
		t.Errorf("reason after the feed stopped: %s", out.Reason)
	}
	feed.set("BTC-USD", "59400.004")
	srv.Tick(t, 1)
	if v := venueOf(t, snapshot(t, c), "real"); strings.Contains(v.MarkSource, "BTC-USD") {
		t.Errorf("mark_source after the feed came back = %q", v.MarkSource)
	}

	// A restarted node keeps the journaled mark but takes no order on it
	// until the feed has spoken again in this run.
	srv.Restart(t)
	c = srv.Client()
	eq(t, "mark after restart", venueOf(t, snapshot(t, c), "real").Marks["BTC-USD"], "59400")
	rejected(t, c, buy, "no_mark")
	// Cancels and market_exit are never refused: the way out stays open.
	accepted(t, c, command.Command{Verb: command.MarketExit, Venue: "real"})
	srv.Tick(t, 1)
	accepted(t, c, buy)
}

func TestPaperMarksTooFineForThePriceDecimalsAreRefused(t *testing.T) {
	feed := &fakeMarks{}
	feed.set("BTC-USD", "0.004")
	srv := nodetest.NewServer(t, nodetest.WithConfig(fedConfig()),
		nodetest.WithMarks(map[string]server.MarkFeed{"real": feed}))
	srv.Tick(t, 1)
	out := rejected(t, srv.Client(), order("real", "BTC-USD", command.Buy, command.Market, "1", ""), "no_mark")
	if !strings.Contains(out.Reason, "binance's price of BTC-USD, 0.004, rounds to 0 at the venue's price_decimals 2; raise price_decimals") {
		t.Errorf("reason: %s", out.Reason)
	}
}

func TestPaperMarksFeedMustMatchTheConfig(t *testing.T) {
	start := func(cfg project.Config, marks map[string]server.MarkFeed) error {
		s, err := server.New(server.Config{Project: cfg, JournalPath: filepath.Join(t.TempDir(), "n.db"),
			ObserveKey: strings.Repeat("o", 32), ControlKey: strings.Repeat("c", 32), Marks: marks})
		if err == nil {
			s.Close()
		}
		return err
	}
	for _, tc := range []struct {
		name  string
		marks map[string]server.MarkFeed
		want  string
	}{
		{"no feed", nil, `venue "real" takes its marks from binance (marks in wicket.toml) but was given no mark feed`},
		{"feed for a simulated venue", map[string]server.MarkFeed{"real": &fakeMarks{}, "paper": &fakeMarks{}}, `venue "paper" was given a mark feed but its wicket.toml table has no marks key`},
		{"feed for no venue", map[string]server.MarkFeed{"real": &fakeMarks{}, "nope": &fakeMarks{}}, `venue "nope", which wicket.toml does not list`},
	} {
		if err := start(fedConfig(), tc.marks); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
	if err := start(fedConfig(), map[string]server.MarkFeed{"real": server.MarkFunc(func(string) (decimal.Decimal, bool) { return decimal.Decimal{}, false })}); err != nil {
		t.Errorf("a matching feed: %v", err)
	}
}
