package binance_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/binance"
	"wicket/node/binance/binancefake"
	"wicket/node/command"
)

// start runs a fake exchange with BTCUSDT at 60000 and an adapter on it.
func start(t *testing.T, opts ...func(*binance.Config)) (*binancefake.Fake, *binance.Adapter) {
	t.Helper()
	f, another := startWith(t, opts...)
	return f, another()
}

// startWith is start that returns a way to make more adapters on the
// fake (another process, or this one restarted).
func startWith(t *testing.T, opts ...func(*binance.Config)) (*binancefake.Fake, func() *binance.Adapter) {
	t.Helper()
	key, secret := testkit.Secret(t, 16), testkit.Secret(t, 16)
	f := binancefake.New(key, secret, []binancefake.Symbol{
		{Name: "BTCUSDT", Base: "BTC", Quote: "USDT", Tick: "0.01", Step: "0.00001", MinQty: "0.00001", MinNo: "5", Price: "60000.00"},
		{Name: "ETHUSDT", Base: "ETH", Quote: "USDT", Tick: "0.01", Step: "0.0001", MinQty: "0.0001", MinNo: "5", Price: "3000.00"},
	}, map[string]string{"USDT": "10000", "BTC": "0.5"})
	t.Cleanup(f.Close)
	cfg := binance.Config{Venue: project.Venue{Name: "bn", Kind: project.KindBinance, Environment: project.EnvTestnet, BaseURL: f.URL},
		APIKey: key, APISecret: secret, Timeout: 2 * time.Second}
	for _, o := range opts {
		o(&cfg)
	}
	return f, func() *binance.Adapter {
		t.Helper()
		a, err := binance.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.Instruments(ctx(t), []string{"BTCUSDT", "ETHUSDT"}); err != nil {
			t.Fatal(err)
		}
		return a
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

const cid = "wk-0190f5a2-7c1e-7b3a-9d4e-123456789abc"

func TestClientIDMapping(t *testing.T) {
	v, err := binance.ClientID(cid)
	if err != nil || v != "wk0190f5a27c1e7b3a9d4e123456789abc" || len(v) > 36 {
		t.Fatalf("ClientID = %q, %v", v, err)
	}
	if back := binance.NodeID(v); back != cid {
		t.Errorf("NodeID(%q) = %q", v, back)
	}
	if back := binance.NodeID(v + ".1"); back != cid {
		t.Errorf("a replacement's id reads back as %q", back)
	}
	// A split flip's two orders (a futures venue) travel within 36
	// characters and read back as the node's.
	for suffix, short := range map[string]string{node.FlipCloseSuffix: "-c", node.FlipOpenSuffix: "-o"} {
		v, err := binance.ClientID(cid + suffix)
		if err != nil || v != "wk0190f5a27c1e7b3a9d4e123456789abc"+short || len(v) > 36 {
			t.Errorf("ClientID(%q) = %q, %v", cid+suffix, v, err)
		}
		if back := binance.NodeID(v); back != cid+suffix {
			t.Errorf("NodeID(%q) = %q", v, back)
		}
	}
	if v, err := binance.ClientID("my-order_1"); err != nil || v != "my-order_1" {
		t.Errorf("a short id travels as is: %q %v", v, err)
	}
	for _, bad := range []string{strings.Repeat("x", 37), "has space", "wk0190f5a27c1e7b3a9d4e123456789abc", "wk0190f5a27c1e7b3a9d4e123456789abc-c"} {
		if _, err := binance.ClientID(bad); err == nil {
			t.Errorf("ClientID(%q) accepted", bad)
		}
	}
}

func TestReads(t *testing.T) {
	_, a := start(t)
	in, err := a.Instruments(ctx(t), []string{"BTCUSDT"})
	if err != nil {
		t.Fatal(err)
	}
	b := in["BTCUSDT"]
	if !b.Tick.Equal(testkit.D("0.01")) || !b.Step.Equal(testkit.D("0.00001")) || !b.MinNotional.Equal(testkit.D("5")) || !b.Fractional || b.Shortable {
		t.Errorf("instrument %+v", b)
	}
	acct, err := a.Account(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if acct.Currency != "USDT" || !acct.Cash.Equal(testkit.D("10000")) || len(acct.Positions) != 1 || !acct.Positions[0].Quantity.Equal(testkit.D("0.5")) {
		t.Errorf("account %+v", acct)
	}
	marks, err := a.Marks(ctx(t), []string{"BTCUSDT", "ETHUSDT"})
	if err != nil || !marks["BTCUSDT"].Equal(testkit.D("60000")) || !marks["ETHUSDT"].Equal(testkit.D("3000")) {
		t.Errorf("marks %v %v", marks, err)
	}
	if _, err := a.Instruments(ctx(t), []string{"NOPE"}); err == nil {
		t.Error("an unlisted symbol was accepted")
	}
}

func TestOrders(t *testing.T) {
	f, a := start(t)
	mkt, err := a.Submit(ctx(t), node.OrderRequest{ClientOrderID: cid, Symbol: "BTCUSDT", Side: command.Buy, Type: command.Market, Quantity: testkit.D("0.01")})
	if err != nil {
		t.Fatal(err)
	}
	if mkt.State != node.VenueFilled || !mkt.Filled.Equal(testkit.D("0.01")) || !mkt.AveragePrice.Equal(testkit.D("60000")) || mkt.ClientOrderID != cid {
		t.Errorf("market order %+v", mkt)
	}
	if got := f.Orders()[0].ClientOrderID; got != "wk0190f5a27c1e7b3a9d4e123456789abc" {
		t.Errorf("the fake saw client id %q", got)
	}
	lim := "wk-0190f5a2-7c1e-7b3a-9d4e-00000000000a"
	o, err := a.Submit(ctx(t), node.OrderRequest{ClientOrderID: lim, Symbol: "BTCUSDT", Side: command.Buy, Type: command.Limit,
		TimeInForce: command.GTC, Quantity: testkit.D("0.02"), Price: testkit.D("59000.00")})
	if err != nil || o.State != node.VenueOpen {
		t.Fatalf("limit: %+v %v", o, err)
	}
	got, err := a.Lookup(ctx(t), node.VenueOrder{Symbol: "BTCUSDT", ClientOrderID: lim})
	if err != nil || got.VenueOrderID != o.VenueOrderID || got.State != node.VenueOpen {
		t.Errorf("lookup %+v %v", got, err)
	}
	rep, err := a.Replace(ctx(t), o, node.Replacement{Quantity: testkit.D("0.03"), Price: testkit.D("59500.00")})
	if err != nil {
		t.Fatal(err)
	}
	if rep.VenueOrderID == o.VenueOrderID || !rep.Quantity.Equal(testkit.D("0.03")) || !rep.Price.Equal(testkit.D("59500")) || rep.ClientOrderID != lim {
		t.Errorf("replaced %+v", rep)
	}
	if orders := f.Orders(); orders[1].Status != "CANCELED" || orders[2].ClientOrderID != "wk0190f5a27c1e7b3a9d4e00000000000a.1" {
		t.Errorf("cancel-replace at the fake: %+v / %+v", orders[1], orders[2])
	}
	open, err := a.OpenOrders(ctx(t), []string{"BTCUSDT"})
	if err != nil || len(open) != 1 || open[0].VenueOrderID != rep.VenueOrderID {
		t.Errorf("open orders %+v %v", open, err)
	}
	c, err := a.Cancel(ctx(t), rep)
	if err != nil || c.State != node.VenueCanceled || c.ClientOrderID != lim {
		t.Errorf("cancel %+v %v", c, err)
	}
	if _, err := a.Cancel(ctx(t), rep); !errors.Is(err, node.ErrVenueNotFound) {
		t.Errorf("cancel twice: %v", err)
	}
	if _, err := a.Lookup(ctx(t), node.VenueOrder{Symbol: "BTCUSDT", ClientOrderID: "wk-0190f5a2-7c1e-7b3a-9d4e-0000000000ff"}); !errors.Is(err, node.ErrVenueNotFound) {
		t.Errorf("lookup of an absent order: %v", err)
	}
	_, err = a.Submit(ctx(t), node.OrderRequest{ClientOrderID: "wk-0190f5a2-7c1e-7b3a-9d4e-0000000000fe", Symbol: "BTCUSDT", Side: command.Buy,
		Type: command.Limit, Quantity: testkit.D("0.000001"), Price: testkit.D("59000.00")})
	if !errors.Is(err, node.ErrVenueRejected) || !strings.Contains(err.Error(), "LOT_SIZE") {
		t.Errorf("a too-fine quantity at the venue: %v", err)
	}
}

func TestWriteFaults(t *testing.T) {
	f, a := start(t, func(c *binance.Config) { c.Timeout = 300 * time.Millisecond })
	req := func(id string) node.OrderRequest {
		return node.OrderRequest{ClientOrderID: id, Symbol: "BTCUSDT", Side: command.Buy, Type: command.Market, Quantity: testkit.D("0.001")}
	}
	// A dropped response: the venue has the order, the adapter says unknown, and nothing is resent.
	f.DropResponses("/api/v3/order", 1)
	before := f.Requests("POST /api/v3/order")
	_, err := a.Submit(ctx(t), req("wk-0190f5a2-7c1e-7b3a-9d4e-000000000001"))
	if !errors.Is(err, node.ErrVenueUnknown) {
		t.Fatalf("dropped response: %v", err)
	}
	if n := f.Requests("POST /api/v3/order") - before; n != 1 || len(f.Orders()) != 1 {
		t.Fatalf("a lost submit was sent %d times; the fake holds %d orders", n, len(f.Orders()))
	}
	got, err := a.Lookup(ctx(t), node.VenueOrder{Symbol: "BTCUSDT", ClientOrderID: "wk-0190f5a2-7c1e-7b3a-9d4e-000000000001"})
	if err != nil || got.State != node.VenueFilled {
		t.Errorf("lookup after a lost answer: %+v %v", got, err)
	}
	// 5xx on a submit: unknown, sent once.
	f.Fail5xx(1)
	before = f.Requests("POST /api/v3/order")
	if _, err := a.Submit(ctx(t), req("wk-0190f5a2-7c1e-7b3a-9d4e-000000000002")); !errors.Is(err, node.ErrVenueUnknown) {
		t.Errorf("5xx submit: %v", err)
	}
	if n := f.Requests("POST /api/v3/order") - before; n != 1 {
		t.Errorf("a 5xx submit was sent %d times", n)
	}
	// Latency beyond the timeout: unknown.
	f.SetLatency(600 * time.Millisecond)
	if _, err := a.Submit(ctx(t), req("wk-0190f5a2-7c1e-7b3a-9d4e-000000000003")); !errors.Is(err, node.ErrVenueUnknown) {
		t.Errorf("slow submit: %v", err)
	}
	f.SetLatency(0)
	// 429 on a submit: refused unprocessed, sent once, and the gate holds later calls back.
	f.RateLimit(1, "1")
	before = f.Requests("POST /api/v3/order")
	_, err = a.Submit(ctx(t), req("wk-0190f5a2-7c1e-7b3a-9d4e-000000000004"))
	if !errors.Is(err, node.ErrVenueRejected) || !strings.Contains(err.Error(), "rate limited") {
		t.Errorf("429 submit: %v", err)
	}
	_, err = a.Submit(ctx(t), req("wk-0190f5a2-7c1e-7b3a-9d4e-000000000005"))
	if !errors.Is(err, node.ErrVenueRejected) || f.Requests("POST /api/v3/order")-before != 1 {
		t.Errorf("a submit inside the Retry-After window reached the venue: %v", err)
	}
}

func TestReadRetries(t *testing.T) {
	f, a := start(t)
	f.Fail5xx(2)
	before := f.Requests("GET /api/v3/account")
	if _, err := a.Account(ctx(t)); err != nil {
		t.Fatalf("a read after two 5xx: %v", err)
	}
	if n := f.Requests("GET /api/v3/account") - before; n != 3 {
		t.Errorf("account read %d times, want 3", n)
	}
	f.Fail5xx(5)
	if _, err := a.Account(ctx(t)); !errors.Is(err, node.ErrVenueUnknown) {
		t.Errorf("reads are retried a bounded number of times: %v", err)
	}
	f.Fail5xx(0)
	f.RateLimit(1, "1")
	t0 := time.Now()
	if _, err := a.Marks(ctx(t), []string{"BTCUSDT"}); err != nil {
		t.Fatalf("a read after a 429: %v", err)
	}
	if waited := time.Since(t0); waited < 900*time.Millisecond {
		t.Errorf("the read retried after %s, before Retry-After: 1", waited)
	}
}

func TestStream(t *testing.T) {
	f, a := start(t)
	f.PartialFills(true)
	updates := make(chan node.VenueUpdate, 64)
	sctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Stream(sctx, func(u node.VenueUpdate) { updates <- u }) }()
	next := func() node.VenueUpdate {
		t.Helper()
		select {
		case u := <-updates:
			return u
		case err := <-done:
			t.Fatalf("the stream ended: %v", err)
		case <-time.After(5 * time.Second):
			t.Fatal("no stream update")
		}
		return node.VenueUpdate{}
	}
	if u := next(); !u.Connected || u.Order != nil {
		t.Fatalf("first update %+v", u)
	}
	o, err := a.Submit(ctx(t), node.OrderRequest{ClientOrderID: cid, Symbol: "BTCUSDT", Side: command.Buy, Type: command.Market, Quantity: testkit.D("0.01")})
	if err != nil || o.State != node.VenueOpen || !o.Filled.Equal(testkit.D("0.005")) {
		t.Fatalf("partial market fill: %+v %v", o, err)
	}
	if u := next(); u.Order == nil || u.Order.ClientOrderID != cid || !u.Order.Filled.Equal(testkit.D("0.005")) || u.Order.State != node.VenueOpen {
		t.Errorf("partial fill report %+v", u.Order)
	}
	f.Cross()
	if u := next(); u.Order == nil || !u.Order.Filled.Equal(testkit.D("0.01")) || u.Order.State != node.VenueFilled {
		t.Errorf("final fill report %+v", u.Order)
	}
	if n := f.Subscriptions(); n != 1 {
		t.Errorf("%d subscriptions through the WebSocket API, want 1", n)
	}
	f.DropStreams()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "dropped") {
			t.Errorf("stream ended with %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a dropped stream did not end Stream")
	}
	cancel()
}

// TestStreamRefusedWithItsReason: a subscription the venue refuses ends
// Stream at once with the venue's status, code and message, and never
// reports the stream connected.
func TestStreamRefusedWithItsReason(t *testing.T) {
	f, a := start(t)
	f.RefuseStreams(410, -1099, "This endpoint is gone; use the WebSocket API.")
	connected := false
	err := a.Stream(ctx(t), func(u node.VenueUpdate) { connected = connected || u.Connected })
	if err == nil || connected || !strings.Contains(err.Error(), "status 410") || !strings.Contains(err.Error(), "code -1099: This endpoint is gone") {
		t.Errorf("a refused subscription: connected %v, %v", connected, err)
	}
	f.RefuseStreams(0, 0, "")
	bad, err := binance.New(binance.Config{Venue: project.Venue{Name: "bn", Kind: project.KindBinance, BaseURL: f.URL}, APIKey: f.APIKey, APISecret: testkit.Secret(t, 16)})
	if err != nil {
		t.Fatal(err)
	}
	if err := bad.Stream(ctx(t), func(node.VenueUpdate) {}); err == nil || !strings.Contains(err.Error(), "-1022") {
		t.Errorf("a subscription signed with the wrong secret: %v", err)
	}
	f.Fail5xx(1) // the handshake itself refused
	if err := a.Stream(ctx(t), func(node.VenueUpdate) {}); err == nil || !strings.Contains(err.Error(), "HTTP 503") || !strings.Contains(err.Error(), "Service Unavailable") {
		t.Errorf("a refused handshake: %v", err)
	}
}

// TestPositionAveragePriceFromTrades: Binance keeps no position price; the
// adapter computes the holding's average from the account's trades (buys
// at their prices, a sell taking out at the average), and says nothing (0)
// for a holding its trades do not account for.
func TestPositionAveragePriceFromTrades(t *testing.T) {
	key, secret := testkit.Secret(t, 16), testkit.Secret(t, 16)
	f := binancefake.New(key, secret, []binancefake.Symbol{
		{Name: "BTCUSDT", Base: "BTC", Quote: "USDT", Tick: "0.01", Step: "0.00001", MinQty: "0.00001", MinNo: "5", Price: "60000.00"},
		{Name: "ETHUSDT", Base: "ETH", Quote: "USDT", Tick: "0.01", Step: "0.0001", MinQty: "0.0001", MinNo: "5", Price: "3000.00"},
	}, map[string]string{"USDT": "10000", "ETH": "1"})
	t.Cleanup(f.Close)
	a, err := binance.New(binance.Config{Venue: project.Venue{Name: "bn", Kind: project.KindBinance, BaseURL: f.URL}, APIKey: key, APISecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Instruments(ctx(t), []string{"BTCUSDT", "ETHUSDT"}); err != nil {
		t.Fatal(err)
	}
	trade := func(side command.Side, qty, price string) {
		t.Helper()
		f.SetPrice("BTCUSDT", price)
		if _, err := a.Submit(ctx(t), node.OrderRequest{ClientOrderID: "t" + qty + price + string(side), Symbol: "BTCUSDT", Side: side, Type: command.Market, Quantity: testkit.D(qty)}); err != nil {
			t.Fatal(err)
		}
	}
	trade(command.Buy, "0.01", "60000.00")
	trade(command.Buy, "0.02", "60003.00")
	trade(command.Sell, "0.015", "61000.00")
	acct, err := a.Account(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]node.VenuePosition{}
	for _, p := range acct.Positions {
		got[p.Symbol] = p
	}
	if p := got["BTCUSDT"]; !p.Quantity.Equal(testkit.D("0.015")) || !p.AveragePrice.Equal(testkit.D("60002")) {
		t.Errorf("BTCUSDT position %s at %s, want 0.015 at 60002", p.Quantity, p.AveragePrice)
	}
	if p := got["ETHUSDT"]; !p.Quantity.Equal(testkit.D("1")) || !p.AveragePrice.IsZero() {
		t.Errorf("ETHUSDT position (held before any trade) %s at %s, want its price unknown (0)", p.Quantity, p.AveragePrice)
	}
	before := f.Requests("GET /api/v3/myTrades")
	if _, err := a.Account(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if n := f.Requests("GET /api/v3/myTrades") - before; n != 0 {
		t.Errorf("an unchanged holding read its trades again (%d reads)", n)
	}
}
