package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/command"
	"wicket/node/nodetest"
	"wicket/strategy/provider"
	"wicket/strategy/provider/providertest"
)

// markedProject is a project with a paper venue "real" whose marks come
// from a fake of Binance's API (BTCUSDT only, so ETH-USD never gets a
// price), without fees or slippage so a market order fills at the mark.
func markedProject(t *testing.T, clock *providertest.Clock) (dir string, fake *providertest.Binance, observe, control string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "proj")
	p, err := project.Init(dir, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	t0 := clock.Now().Truncate(time.Hour)
	fake = providertest.NewBinance(clock, map[string]providertest.Gen{
		"BTCUSDT": {Start: t0.Add(-48 * time.Hour), End: t0.Add(48 * time.Hour), Step: time.Hour},
	})
	t.Cleanup(fake.Close)
	appendFile(t, p.ConfigPath(), fmt.Sprintf(`
[[venues]]
name = "real"
kind = "paper"
marks = "binance"
cash = "10000"
fee_bps = 0
slippage_bps = 0
symbols = ["BTC-USD", "ETH-USD"]

[providers.binance]
base_url = %q
`, fake.URL))
	s, err := p.Secrets(func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	observe, _, _ = s.Lookup(project.KeyObserve)
	control, _, _ = s.Lookup(project.KeyControl)
	return dir, fake, observe, control
}

// fakePrice is the fake's last trade price of BTCUSDT at the clock's now.
func fakePrice(clock *providertest.Clock) decimal.Decimal {
	g := providertest.Gen{Step: time.Hour}
	return decimal.NewFromFloat(g.At(clock.Now().Truncate(time.Hour)).C)
}

// TestNodeServePaperMarksFromBinance runs `wicket node serve` with a paper
// venue on marks = "binance" against the provider fake: the mark is the
// fake's price, a market order fills there, and it follows the price.
func TestNodeServePaperMarksFromBinance(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real node process")
	}
	clock := providertest.NewClock(time.Date(2024, 3, 1, 12, 30, 0, 0, time.UTC))
	dir, fake, observe, control := markedProject(t, clock)
	_, addr, log := runNodeServe(t, "--project", dir, "node", "serve", "--listen", "127.0.0.1:0", "--tick", "50ms")
	c, err := node.NewClient(addr, observe, control)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	// waitMark waits until venue real's BTC-USD mark is want.
	waitMark := func(want decimal.Decimal) node.Venue {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for {
			snap, err := c.Snapshot(ctx, "real", 0)
			if err == nil && snap.Venues[0].Marks["BTC-USD"].Equal(want) && !strings.Contains(snap.Venues[0].MarkSource, "BTC-USD") {
				return snap.Venues[0]
			}
			if time.Now().After(deadline) {
				t.Fatalf("the BTC-USD mark never became the fake's %s: %+v %v\n%s", want, snap, err, log.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	price := fakePrice(clock)
	v := waitMark(price)
	if !strings.HasPrefix(v.MarkSource, "binance: last trade price") || !strings.Contains(v.MarkSource, "no price yet for ETH-USD") {
		t.Errorf("mark_source = %q", v.MarkSource)
	}
	snap, err := c.Snapshot(ctx, "paper", 0)
	if err != nil || !strings.HasPrefix(snap.Venues[0].MarkSource, "simulated") {
		t.Errorf("the default paper venue's mark_source: %+v %v", snap, err)
	}

	buy := command.Command{Verb: command.SubmitOrder, Venue: "real", Symbol: "BTC-USD", Side: command.Buy, Type: command.Market, Quantity: testkit.D("2")}
	res, err := nodetest.Send(ctx, c, command.NewEnvelope(buy, "marks test"), 5*time.Second)
	if err != nil || res.Order == nil || res.Order.Status != node.OrderFilled || !res.Order.AveragePrice.Equal(price) {
		t.Fatalf("market buy on fed marks: %+v %v (want a fill at %s)", res, err, price)
	}
	// ETH-USD has no price (the fake does not list ETHUSDT): refused.
	eth := buy
	eth.Symbol = "ETH-USD"
	res, err = nodetest.Send(ctx, c, command.NewEnvelope(eth, "marks test"), 5*time.Second)
	var ne *node.Error
	if !errors.As(err, &ne) || res.Code != "no_mark" || !strings.Contains(res.Reason, "no price of ETH-USD has arrived from binance") {
		t.Errorf("ETH-USD without a price: %+v %v", res, err)
	}

	// An hour later the fake's price moves, and the mark with it.
	clock.Sleep(ctx, time.Hour) //nolint:errcheck // a background context
	if next := fakePrice(clock); next.Equal(price) {
		t.Fatalf("the fake's price did not move: %s", next)
	}
	waitMark(fakePrice(clock))
	sell := buy
	sell.Side = command.Sell
	res, err = nodetest.Send(ctx, c, command.NewEnvelope(sell, "marks test"), 5*time.Second)
	if err != nil || res.Order == nil || !res.Order.AveragePrice.Equal(fakePrice(clock)) {
		t.Errorf("market sell after the move: %+v %v", res, err)
	}

	// The node asked the fake's ticker, and says so once in its log.
	n := 0
	for _, r := range fake.Requests() {
		if r.Path == "/api/v3/ticker/price" {
			n++
		}
	}
	if n < 2 {
		t.Errorf("the ticker was asked %d times", n)
	}
	for _, want := range []string{"paper marks from a provider", "first mark", "mark feed failed"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the node's log lacks %q:\n%s", want, log.String())
		}
	}
}

// TestNodeServePaperMarksRefusals: a fed venue that cannot work is refused
// before the node starts, saying what to change.
func TestNodeServePaperMarksRefusals(t *testing.T) {
	t.Setenv(project.KeyAlpacaID, "") // whatever the host has: no key
	t.Setenv(project.KeyAlpacaSecret, "")
	ctx := context.Background()
	for _, tc := range []struct {
		marks, symbol string
		tick          time.Duration
		want          string
		extra         string
	}{
		{"binance", "BTC-USD", 0, "--tick 0s keeps marks still, but venue real takes its marks from binance", ""},
		{"binance", "SPY", time.Second, `venue "real": marks = "binance": `, ""},
		{"alpaca", "SPY", time.Second, `venue "real": marks = "alpaca": the stock SPY needs an Alpaca key: set WICKET_ALPACA_KEY_ID and WICKET_ALPACA_SECRET_KEY`, ""},
		{"binance", "BTC-USD", time.Second, `venue "real": max_mark_age 2s is not above the 2s between polls of binance, so every mark would go stale before the next one; give at least 4s (the default is 5s)`, "max_mark_age = \"2s\"\n"},
	} {
		dir := filepath.Join(t.TempDir(), "proj")
		p, err := project.Init(dir, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		appendFile(t, p.ConfigPath(), fmt.Sprintf("\n[[venues]]\nname = \"real\"\nmarks = %q\nsymbols = [%q]\n%s", tc.marks, tc.symbol, tc.extra))
		cfg, err := p.Config()
		if err != nil {
			t.Fatal(err)
		}
		_, err = nodeMarks(ctx, p, cfg, tc.tick, time.Now, slog.New(slog.DiscardHandler), io.Discard)
		t.Logf("%s %s: %v", tc.marks, tc.symbol, err)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %s tick %s: err = %v, want %q", tc.marks, tc.symbol, tc.tick, err, tc.want)
		}
	}
}

// flaky is a mark source that fails, fails the same way, fails another way,
// then answers.
type flaky struct{ n int }

func (f *flaky) Name() string { return "binance" }
func (f *flaky) LastPrice(_ context.Context, sym string) (provider.Mark, error) {
	f.n++
	switch f.n {
	case 1, 2:
		return provider.Mark{}, errors.New("HTTP 503")
	case 3:
		return provider.Mark{}, errors.New("HTTP 429")
	}
	return provider.Mark{Symbol: sym, Price: testkit.D("101.5")}, nil
}

func TestLoggedMarksLogsEachChangeOnce(t *testing.T) {
	buf := &syncBuffer{}
	l := newLoggedMarks(&flaky{}, time.Now, slog.New(slog.NewTextHandler(buf, nil)))
	var current []bool
	for range 6 {
		if _, err := l.LastPrice(context.Background(), "BTC-USD"); err != nil {
			l.failed("BTC-USD", err)
		}
		current = append(current, l.current("BTC-USD"))
	}
	// Three failures in a row and the last price no longer counts; an
	// answer makes it current again.
	if fmt.Sprint(current) != "[true true false true true true]" {
		t.Errorf("current after each poll: %v", current)
	}
	out := buf.String()
	if got := strings.Count(out, "HTTP 503"); got != 1 {
		t.Errorf("a repeated failure was logged %d times:\n%s", got, out)
	}
	if !strings.Contains(out, "HTTP 429") || strings.Count(out, "mark feed recovered") != 1 || strings.Contains(out, "first mark") {
		t.Errorf("log:\n%s", out)
	}
}

// TestNodeMarksFromAlpaca wires a venue with marks = "alpaca" to the Alpaca
// fake: a crypto pair without a key and a stock with it, each at the fake's
// latest trade price.
func TestNodeMarksFromAlpaca(t *testing.T) {
	clock := providertest.NewClock(time.Date(2024, 3, 1, 15, 10, 0, 0, time.UTC))
	t0 := clock.Now().Truncate(time.Hour)
	gen := providertest.Gen{Start: t0.Add(-24 * time.Hour), End: t0.Add(24 * time.Hour), Step: time.Hour}
	fake := providertest.NewAlpaca(clock, map[string]providertest.Gen{"SPY": gen}, map[string]providertest.Gen{"BTC/USD": gen})
	fake.KeyID, fake.Secret = scriptAlpacaID, scriptAlpacaSecret
	t.Cleanup(fake.Close)
	t.Setenv(project.KeyAlpacaID, scriptAlpacaID)
	t.Setenv(project.KeyAlpacaSecret, scriptAlpacaSecret)
	dir := filepath.Join(t.TempDir(), "proj")
	p, err := project.Init(dir, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	appendFile(t, p.ConfigPath(), fmt.Sprintf("\n[[venues]]\nname = \"al\"\nmarks = \"alpaca\"\nsymbols = [\"BTC-USD\", \"SPY\"]\n\n[providers.alpaca]\nbase_url = %q\n", fake.URL))
	cfg, err := p.Config()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logs := &syncBuffer{}
	feeds, err := nodeMarks(ctx, p, cfg, time.Second, time.Now, slog.New(slog.NewTextHandler(logs, nil)), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(feeds) != 1 || feeds["al"] == nil {
		t.Fatalf("feeds = %v", feeds)
	}
	want := decimal.NewFromFloat(gen.At(t0).C)
	deadline := time.Now().Add(10 * time.Second)
	for _, s := range []string{"BTC-USD", "SPY"} {
		for {
			if m, ok := feeds["al"].Mark(s); ok {
				if !m.Equal(want) {
					t.Errorf("%s mark %s, want the fake's %s", s, m, want)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no %s mark from the Alpaca fake; log:\n%s", s, logs.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if strings.Contains(logs.String(), scriptAlpacaSecret) || strings.Contains(logs.String(), scriptAlpacaID) {
		t.Error("an Alpaca key reached the log")
	}
}

// TestLoggedMarksKeepWhenAPriceArrived: the feed gives each price with the
// time its poll answered, by the injected clock; failed polls leave that
// time as it was, so the node's max_mark_age sees the price age.
func TestLoggedMarksKeepWhenAPriceArrived(t *testing.T) {
	clock := providertest.NewClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	l := newLoggedMarks(&flaky{n: 3}, clock.Now, slog.New(slog.DiscardHandler)) // answers from now on
	if _, _, ok := l.MarkAt("BTC-USD"); ok {
		t.Fatal("a price before any poll")
	}
	t0 := clock.Now()
	if _, err := l.LastPrice(context.Background(), "BTC-USD"); err != nil {
		t.Fatal(err)
	}
	clock.Sleep(context.Background(), 40*time.Second) //nolint:errcheck // a background context
	p, at, ok := l.MarkAt("BTC-USD")
	if !ok || !p.Equal(testkit.D("101.5")) || !at.Equal(t0) {
		t.Errorf("MarkAt = %s %s %v; want 101.5 from %s", p, at, ok, t0)
	}
	l.failed("BTC-USD", errors.New("timeout")) // one failure: still current, still from t0
	if _, at, ok := l.MarkAt("BTC-USD"); !ok || !at.Equal(t0) {
		t.Errorf("after a failed poll: %s %v", at, ok)
	}
	if _, err := l.LastPrice(context.Background(), "BTC-USD"); err != nil {
		t.Fatal(err)
	}
	if _, at, _ := l.MarkAt("BTC-USD"); !at.Equal(clock.Now()) {
		t.Errorf("a new answer's time %s, want %s", at, clock.Now())
	}
}
