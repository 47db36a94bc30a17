package alpaca_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/alpaca"
	"wicket/node/alpaca/alpacafake"
	"wicket/node/command"
)

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

func start(t *testing.T, timeout time.Duration) (*alpacafake.Fake, *alpaca.Adapter) {
	t.Helper()
	f, another := startWith(t, timeout)
	return f, another()
}

// startWith is start that returns a way to make more adapters on the
// fake (another process, or this one restarted).
func startWith(t *testing.T, timeout time.Duration) (*alpacafake.Fake, func() *alpaca.Adapter) {
	t.Helper()
	key, secret := testkit.Secret(t, 16), testkit.Secret(t, 16)
	f := alpacafake.New(key, secret, []alpacafake.Asset{
		{Symbol: "SPY", Class: "us_equity", Fractionable: true, Shortable: true, Price: "500.00"},
		{Symbol: "BRK.A", Class: "us_equity", Price: "600000.00"},
		{Symbol: "BTC/USD", Class: "crypto", Fractionable: true, MinOrder: "0.0001", Increment: "0.000000001", PriceIncrement: "1", Price: "60000"},
	}, "100000")
	t.Cleanup(f.Close)
	return f, func() *alpaca.Adapter {
		t.Helper()
		a, err := alpaca.New(alpaca.Config{Venue: project.Venue{Name: "al", Kind: project.KindAlpaca, Environment: project.EnvPaper, BaseURL: f.URL,
			Symbols: []string{"SPY", "BRK.A", "BTC-USD"}}, KeyID: key, Secret: secret, Timeout: timeout})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.Instruments(ctx(t), []string{"SPY", "BRK.A", "BTC-USD"}); err != nil {
			t.Fatal(err)
		}
		return a
	}
}

const cid = "wk-0190f5a2-7c1e-7b3a-9d4e-123456789abc"

func TestReads(t *testing.T) {
	_, a := start(t, 2*time.Second)
	in, err := a.Instruments(ctx(t), []string{"SPY", "BRK.A", "BTC-USD"})
	if err != nil {
		t.Fatal(err)
	}
	if s := in["SPY"]; !s.Fractional || !s.Shortable || !s.Tick.Equal(testkit.D("0.01")) || !s.Step.Equal(testkit.D("0.000000001")) {
		t.Errorf("SPY %+v", s)
	}
	if b := in["BRK.A"]; b.Fractional || !b.Step.Equal(testkit.D("1")) || b.Shortable {
		t.Errorf("BRK.A %+v", b)
	}
	if c := in["BTC-USD"]; c.Shortable || !c.Tick.Equal(testkit.D("1")) || !c.MinQuantity.Equal(testkit.D("0.0001")) {
		t.Errorf("BTC-USD %+v", c)
	}
	acct, err := a.Account(ctx(t))
	if err != nil || acct.ID != "PA3FAKE0001" || !acct.Cash.Equal(testkit.D("100000")) || acct.Currency != "USD" {
		t.Errorf("account %+v %v", acct, err)
	}
	marks, err := a.Marks(ctx(t), []string{"SPY", "BTC-USD"})
	if err != nil || !marks["SPY"].Equal(testkit.D("500")) || !marks["BTC-USD"].Equal(testkit.D("60000")) {
		t.Errorf("marks %v %v", marks, err)
	}
}

func TestOrders(t *testing.T) {
	f, a := start(t, 2*time.Second)
	o, err := a.Submit(ctx(t), node.OrderRequest{ClientOrderID: cid, Symbol: "SPY", Side: command.Buy, Type: command.Market, TimeInForce: command.IOC, Quantity: testkit.D("2")})
	if err != nil || o.State != node.VenueFilled || !o.AveragePrice.Equal(testkit.D("500")) || o.ClientOrderID != cid {
		t.Fatalf("market buy %+v %v", o, err)
	}
	if got := f.Orders()[0]; got.ClientOrderID != cid || got.TIF != "day" {
		t.Errorf("at the fake: %+v", got)
	}
	acct, _ := a.Account(ctx(t))
	if len(acct.Positions) != 1 || acct.Positions[0].Symbol != "SPY" || !acct.Positions[0].Quantity.Equal(testkit.D("2")) {
		t.Errorf("positions %+v", acct.Positions)
	}
	lim := "wk-0190f5a2-7c1e-7b3a-9d4e-00000000000a"
	o, err = a.Submit(ctx(t), node.OrderRequest{ClientOrderID: lim, Symbol: "BTC-USD", Side: command.Buy, Type: command.Limit, TimeInForce: command.GTC,
		Quantity: testkit.D("0.01"), Price: testkit.D("59000")})
	if err != nil || o.State != node.VenueOpen || o.Symbol != "BTC-USD" {
		t.Fatalf("limit %+v %v", o, err)
	}
	got, err := a.Lookup(ctx(t), node.VenueOrder{ClientOrderID: lim})
	if err != nil || got.VenueOrderID != o.VenueOrderID {
		t.Errorf("lookup by client id %+v %v", got, err)
	}
	rep, err := a.Replace(ctx(t), o, node.Replacement{Quantity: testkit.D("0.02"), Price: testkit.D("59500")})
	if err != nil || rep.VenueOrderID == o.VenueOrderID || !rep.Quantity.Equal(testkit.D("0.02")) || rep.ClientOrderID != lim {
		t.Fatalf("replace %+v %v", rep, err)
	}
	if orders := f.Orders(); orders[1].Status != "replaced" || orders[2].ClientOrderID != lim+".r1" {
		t.Errorf("replace at the fake: %+v / %+v", orders[1], orders[2])
	}
	open, err := a.OpenOrders(ctx(t), []string{"SPY", "BTC-USD"})
	if err != nil || len(open) != 1 || open[0].VenueOrderID != rep.VenueOrderID {
		t.Errorf("open %+v %v", open, err)
	}
	c, err := a.Cancel(ctx(t), rep)
	if err != nil || c.State != node.VenueCanceled {
		t.Errorf("cancel %+v %v", c, err)
	}
	if _, err := a.Cancel(ctx(t), rep); !errors.Is(err, node.ErrVenueRejected) {
		t.Errorf("cancel of a canceled order: %v", err)
	}
	if _, err := a.Lookup(ctx(t), node.VenueOrder{ClientOrderID: "wk-0190f5a2-7c1e-7b3a-9d4e-0000000000ff"}); !errors.Is(err, node.ErrVenueNotFound) {
		t.Errorf("absent: %v", err)
	}
	_, err = a.Submit(ctx(t), node.OrderRequest{ClientOrderID: "wk-x1", Symbol: "BRK.A", Side: command.Buy, Type: command.Market, Quantity: testkit.D("1")})
	if !errors.Is(err, node.ErrVenueRejected) || !strings.Contains(err.Error(), "insufficient buying power") {
		t.Errorf("a refusal: %v", err)
	}
}

func TestFaults(t *testing.T) {
	f, a := start(t, 300*time.Millisecond)
	req := func(id string) node.OrderRequest {
		return node.OrderRequest{ClientOrderID: id, Symbol: "SPY", Side: command.Buy, Type: command.Market, Quantity: testkit.D("1")}
	}
	f.DropResponses("/v2/orders", 1)
	if _, err := a.Submit(ctx(t), req("wk-a1")); !errors.Is(err, node.ErrVenueUnknown) {
		t.Fatalf("dropped: %v", err)
	}
	if n := f.Requests("POST /v2/orders"); n != 1 || len(f.Orders()) != 1 {
		t.Fatalf("a lost submit was sent %d times", n)
	}
	f.Fail5xx(1)
	if _, err := a.Submit(ctx(t), req("wk-a2")); !errors.Is(err, node.ErrVenueUnknown) || f.Requests("POST /v2/orders") != 2 {
		t.Errorf("5xx submit: %v (sent %d)", err, f.Requests("POST /v2/orders"))
	}
	f.SetLatency(600 * time.Millisecond)
	if _, err := a.Submit(ctx(t), req("wk-a3")); !errors.Is(err, node.ErrVenueUnknown) {
		t.Errorf("slow submit: %v", err)
	}
	f.SetLatency(0)
	f.RateLimit(1, "1")
	if _, err := a.Submit(ctx(t), req("wk-a4")); !errors.Is(err, node.ErrVenueRejected) || !strings.Contains(err.Error(), "rate limited") {
		t.Errorf("429 submit: %v", err)
	}
	before := f.Requests("POST /v2/orders")
	if _, err := a.Submit(ctx(t), req("wk-a5")); !errors.Is(err, node.ErrVenueRejected) || f.Requests("POST /v2/orders") != before {
		t.Errorf("a submit inside Retry-After reached the venue: %v", err)
	}
	time.Sleep(1100 * time.Millisecond)
	f.Fail5xx(2)
	if _, err := a.Account(ctx(t)); err != nil {
		t.Errorf("a read after two 5xx: %v", err)
	}
}

func TestStream(t *testing.T) {
	f, a := start(t, 2*time.Second)
	f.PartialFills(true)
	updates := make(chan node.VenueUpdate, 64)
	sctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- a.Stream(sctx, func(u node.VenueUpdate) { updates <- u }) }()
	next := func() node.VenueUpdate {
		t.Helper()
		select {
		case u := <-updates:
			return u
		case err := <-done:
			t.Fatalf("stream ended: %v", err)
		case <-time.After(5 * time.Second):
			t.Fatal("no update")
		}
		return node.VenueUpdate{}
	}
	if u := next(); !u.Connected {
		t.Fatalf("first %+v", u)
	}
	o, err := a.Submit(ctx(t), node.OrderRequest{ClientOrderID: cid, Symbol: "BTC-USD", Side: command.Buy, Type: command.Market, Quantity: testkit.D("0.01")})
	if err != nil || o.State != node.VenueOpen || !o.Filled.Equal(testkit.D("0.005")) {
		t.Fatalf("partial %+v %v", o, err)
	}
	for u := next(); ; u = next() { // new, then partial_fill
		if u.Order != nil && u.Order.Filled.Equal(testkit.D("0.005")) {
			if u.Order.ClientOrderID != cid || u.Order.Symbol != "BTC-USD" {
				t.Errorf("update %+v", u.Order)
			}
			break
		}
	}
	f.Cross()
	if u := next(); u.Order == nil || u.Order.State != node.VenueFilled || !u.Order.Filled.Equal(testkit.D("0.01")) {
		t.Errorf("fill %+v", u.Order)
	}
	f.DropStreams()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "dropped") {
			t.Errorf("ended with %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a dropped stream did not end")
	}
}

// TestOpenOrdersOfAForeignReplacementName: an order named like a
// replacement with no first under that name (not the node's) is listed as
// it is, and does not fail the listing. (A lost replace's listing is the
// conformance suite's "lost replace answer".)
func TestOpenOrdersOfAForeignReplacementName(t *testing.T) {
	_, another := startWith(t, 2*time.Second)
	a := another()
	if _, err := a.Submit(ctx(t), node.OrderRequest{ClientOrderID: "web-order.r1", Symbol: "BTC-USD", Side: command.Sell, Type: command.Limit,
		TimeInForce: command.GTC, Quantity: testkit.D("0.001"), Price: testkit.D("70000")}); err != nil {
		t.Fatal(err)
	}
	open, err := another().OpenOrders(ctx(t), []string{"BTC-USD"})
	if err != nil || len(open) != 1 {
		t.Fatalf("with an order named like a replacement: %+v %v", open, err)
	}
}
