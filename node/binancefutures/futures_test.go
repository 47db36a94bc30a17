package binancefutures_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/binancefutures"
	"wicket/node/binancefutures/binancefuturesfake"
	"wicket/node/command"
	"wicket/node/venuetest"
)

// TestStartPutsAccountAsConfigured: an account in hedge mode at Binance's
// default leverage and cross margin is put in one-way mode, BTCUSDT at
// the configured 3x isolated, ETHUSDT at the defaults (1x isolated).
func TestStartPutsAccountAsConfigured(t *testing.T) {
	f, another := startWith(t)
	f.SetHedgeMode(true)
	another()
	if p := f.Position("BTCUSDT"); p.Leverage != 3 || p.MarginType != "ISOLATED" {
		t.Errorf("BTCUSDT at start: %+v, want 3x ISOLATED", p)
	}
	if p := f.Position("ETHUSDT"); p.Leverage != 1 || p.MarginType != "ISOLATED" {
		t.Errorf("ETHUSDT at start: %+v, want 1x ISOLATED", p)
	}
	if n := f.Requests("POST /fapi/v1/positionSide/dual"); n != 1 {
		t.Errorf("the position mode was changed %d times, want once", n)
	}
}

// TestLeverageChangeRefusedWithPositionOpen: a position open at another
// leverage than wicket.toml's stops the start with what to write, and the
// venue's leverage is left alone; SetLeverage is refused likewise.
func TestLeverageChangeRefusedWithPositionOpen(t *testing.T) {
	f, another := startWith(t)
	f.SetPosition("BTCUSDT", "0.1", "60000", 5, "ISOLATED")
	a, err := newAdapter(t, f)
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.Instruments(ctx(t), []string{"BTCUSDT", "ETHUSDT"})
	if err == nil || !strings.Contains(err.Error(), "never changed under an open position") || !strings.Contains(err.Error(), "leverage = 5") {
		t.Fatalf("start with a 5x position and 3x configured: %v, want a refusal naming leverage = 5", err)
	}
	if p := f.Position("BTCUSDT"); p.Leverage != 5 || f.Requests("POST /fapi/v1/leverage") != 0 {
		t.Errorf("the venue's leverage moved: %+v", p)
	}
	f.SetPosition("BTCUSDT", "0.1", "60000", 3, "ISOLATED")
	b := another()
	if err := b.SetLeverage(ctx(t), "BTCUSDT", 10); !errors.Is(err, node.ErrVenueRejected) || f.Position("BTCUSDT").Leverage != 3 {
		t.Errorf("a leverage change with a position open: %v, leverage now %d", err, f.Position("BTCUSDT").Leverage)
	}
	f.SetPosition("BTCUSDT", "0", "0", 0, "")
	if err := b.SetLeverage(ctx(t), "BTCUSDT", 10); err != nil || f.Position("BTCUSDT").Leverage != 10 {
		t.Errorf("a leverage change with no position: %v, leverage %d", err, f.Position("BTCUSDT").Leverage)
	}
}

// TestReduceOnlyRefusedWhenItWouldOpen: an exit (a fired trigger's
// market order) with no position to close is refused by the venue and
// nothing is placed; a stop exit that triggers with nothing to close is
// rejected, never opens one.
func TestReduceOnlyRefusedWhenItWouldOpen(t *testing.T) {
	f, another := startWith(t)
	a := another()
	id := venuetest.ClientID()
	_, err := a.Submit(ctx(t), node.OrderRequest{ClientOrderID: id + node.FireSuffix, Symbol: "BTCUSDT", Side: command.Sell, Type: command.Market, Quantity: testkit.D("0.01")})
	if !errors.Is(err, node.ErrVenueRejected) || !strings.Contains(err.Error(), "reduce-only") {
		t.Fatalf("a reduce-only exit with no position: %v, want refused as reduce-only", err)
	}
	if len(f.Orders()) != 0 || !f.Position("BTCUSDT").Amount.IsZero() {
		t.Errorf("the refused exit left orders %+v, position %+v", f.Orders(), f.Position("BTCUSDT"))
	}
	sid := venuetest.ClientID()
	if _, err := a.Submit(ctx(t), node.OrderRequest{ClientOrderID: sid, Symbol: "BTCUSDT", Side: command.Sell, Type: command.Stop, Quantity: testkit.D("0.01"), StopPrice: testkit.D("59000")}); err != nil {
		t.Fatal(err)
	}
	f.SetPrice("BTCUSDT", "58900")
	got, err := a.Lookup(ctx(t), node.VenueOrder{Symbol: "BTCUSDT", ClientOrderID: sid, Type: command.Stop})
	if err != nil || got.State != node.VenueRejected || !f.Position("BTCUSDT").Amount.IsZero() {
		t.Errorf("a stop exit triggered with nothing to close: %+v %v, position %+v", got, err, f.Position("BTCUSDT"))
	}
}

// TestPositionsAsTheVenueKeepsThem: the account's position carries the
// venue's signed quantity, entry, mark, unrealised P&L, leverage, margin
// type, margin and liquidation price; a short is negative.
func TestPositionsAsTheVenueKeepsThem(t *testing.T) {
	f, another := startWith(t)
	a := another()
	if _, err := a.Submit(ctx(t), node.OrderRequest{ClientOrderID: venuetest.ClientID(), Symbol: "BTCUSDT", Side: command.Sell, Type: command.Market, Quantity: testkit.D("0.1")}); err != nil {
		t.Fatal(err)
	}
	f.SetPrice("BTCUSDT", "59000")
	acct, err := a.Account(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if !acct.Margined || len(acct.Positions) != 1 {
		t.Fatalf("account %+v, want margined with one position", acct)
	}
	p := acct.Positions[0]
	// Short 0.1 at 60000, 3x isolated: margin 2000; notional 6000 in the first bracket (0.4 %): liquidation (60000 + 20000) / 1.004.
	if !p.Quantity.Equal(testkit.D("-0.1")) || !p.AveragePrice.Equal(testkit.D("60000")) || !p.Mark.Equal(testkit.D("59000")) ||
		!p.UnrealizedPnL.Equal(testkit.D("100")) || p.Leverage != 3 || p.MarginType != "isolated" || !p.Margin.Equal(testkit.D("2000")) ||
		!p.LiquidationPrice.Equal(testkit.D("79681.27")) {
		t.Errorf("position %+v", p)
	}
}

// TestLiquidationClosesPosition: a liquidation at the venue is reported
// on the stream (a resync) and the next account read closes the position
// with the liquidation order's price; an adapter that was not streaming
// finds the same in the venue's force orders.
func TestLiquidationClosesPosition(t *testing.T) {
	f, another := startWith(t)
	a, polled := another(), another()
	if _, err := a.Submit(ctx(t), node.OrderRequest{ClientOrderID: venuetest.ClientID(), Symbol: "BTCUSDT", Side: command.Buy, Type: command.Market, Quantity: testkit.D("0.1")}); err != nil {
		t.Fatal(err)
	}
	if _, err := polled.Account(ctx(t)); err != nil {
		t.Fatal(err)
	}
	s := startStream(t, a)
	if u := s.next(t); !u.Connected {
		t.Fatalf("first update %+v", u)
	}
	f.Liquidate("BTCUSDT", "40200")
	for u := s.next(t); !u.Resync; u = s.next(t) {
	}
	for who, ad := range map[string]accounter{"the streaming adapter": a, "a polling adapter": polled} {
		acct, err := ad.Account(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		if len(acct.Positions) != 1 || !acct.Positions[0].Quantity.IsZero() || !strings.Contains(acct.Positions[0].Closed, "liquidat") ||
			!strings.Contains(acct.Positions[0].Closed, "40200") {
			t.Errorf("%s reads the account after the liquidation as %+v", who, acct.Positions)
		}
	}
	// A position opened again and closed by an order is closed, not liquidated.
	for _, side := range []command.Side{command.Buy, command.Sell} {
		if _, err := a.Submit(ctx(t), node.OrderRequest{ClientOrderID: venuetest.ClientID(), Symbol: "BTCUSDT", Side: side, Type: command.Market, Quantity: testkit.D("0.1")}); err != nil {
			t.Fatal(err)
		}
		if _, err := polled.Account(ctx(t)); err != nil {
			t.Fatal(err)
		}
	}
	if acct, err := polled.Account(ctx(t)); err != nil || len(acct.Positions) != 0 {
		t.Errorf("after a close by an order: %+v %v, want no position and no liquidation", acct.Positions, err)
	}
}

// TestReplaceInPlace: a partly filled limit is modified in place (one
// PUT): the same order id, the new quantity and price, its fills kept.
func TestReplaceInPlace(t *testing.T) {
	f, another := startWith(t)
	a := another()
	id := venuetest.ClientID()
	o, err := a.Submit(ctx(t), node.OrderRequest{ClientOrderID: id, Symbol: "BTCUSDT", Side: command.Buy, Type: command.Limit, TimeInForce: command.GTC, Quantity: testkit.D("0.02"), Price: testkit.D("59000")})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{f: f}
	h.FillPart(t, o.VenueOrderID, testkit.D("0.005"))
	o.Filled = testkit.D("0.005")
	rep, err := a.Replace(ctx(t), o, node.Replacement{Quantity: testkit.D("0.03"), Price: testkit.D("59500")})
	if err != nil {
		t.Fatal(err)
	}
	if rep.VenueOrderID != o.VenueOrderID || rep.ClientOrderID != id || !rep.Quantity.Equal(testkit.D("0.03")) || !rep.Price.Equal(testkit.D("59500")) ||
		!rep.Filled.Equal(testkit.D("0.005")) || rep.State != node.VenueOpen || f.Requests("PUT /fapi/v1/order") != 1 {
		t.Errorf("replace answered %+v (%d PUTs)", rep, f.Requests("PUT /fapi/v1/order"))
	}
	if _, err := a.Replace(ctx(t), rep, node.Replacement{Quantity: testkit.D("0.005")}); !errors.Is(err, node.ErrVenueRejected) {
		t.Errorf("a replace to no more than the filled: %v", err)
	}
}

// TestOCOLegs: an oco is its two reduce-only algo orders under the
// node's ids; when the take-profit fills the stop still works at the
// venue (Binance links none: the node's orphan check cancels it), and a
// cancel of it succeeds.
func TestOCOLegs(t *testing.T) {
	f, another := startWith(t)
	f.SetPosition("ETHUSDT", "0.5", "3000", 1, "ISOLATED")
	a := another()
	id := venuetest.ClientID()
	legs, err := a.SubmitGroup(ctx(t), node.GroupRequest{Class: node.GroupOCO, Legs: []node.OrderRequest{
		{ClientOrderID: id, Symbol: "ETHUSDT", Side: command.Sell, Type: command.Limit, TimeInForce: command.GTC, Quantity: testkit.D("0.5"), Price: testkit.D("3060")},
		{ClientOrderID: id + node.StopLegSuffix, Symbol: "ETHUSDT", Side: command.Sell, Type: command.Stop, TimeInForce: command.GTC, Quantity: testkit.D("0.5"), StopPrice: testkit.D("2940")},
	}})
	if err != nil || len(legs) != 2 || legs[0].ClientOrderID != id || legs[1].ClientOrderID != id+node.StopLegSuffix || legs[0].State != node.VenueOpen {
		t.Fatalf("oco: %+v %v", legs, err)
	}
	f.SetPrice("ETHUSDT", "3060")
	if got, err := another().Lookup(ctx(t), node.VenueOrder{Symbol: "ETHUSDT", ClientOrderID: id}); err != nil || got.State != node.VenueFilled || !got.AveragePrice.Equal(testkit.D("3060")) {
		t.Errorf("take-profit after the price reached it: %+v %v", got, err)
	}
	if !f.Position("ETHUSDT").Amount.IsZero() {
		t.Errorf("position after the take-profit: %+v", f.Position("ETHUSDT"))
	}
	stop, err := a.Lookup(ctx(t), node.VenueOrder{Symbol: "ETHUSDT", ClientOrderID: id + node.StopLegSuffix})
	if err != nil || stop.State != node.VenueOpen {
		t.Fatalf("the stop leg after the take-profit: %+v %v", stop, err)
	}
	if c, err := a.Cancel(ctx(t), stop); err != nil || c.State != node.VenueCanceled {
		t.Errorf("cancel of the surviving stop: %+v %v", c, err)
	}
}

type accounter interface {
	Account(ctx context.Context) (node.Account, error)
}

func newAdapter(t *testing.T, f *binancefuturesfake.Fake) (*binancefutures.Adapter, error) {
	return binancefutures.New(binancefutures.Config{Venue: venueOf(f.URL), APIKey: f.APIKey, APISecret: f.Secret, Timeout: 2 * time.Second})
}

type stream struct {
	updates chan node.VenueUpdate
	ended   chan struct{}
}

func startStream(t *testing.T, a *binancefutures.Adapter) *stream {
	c, stop := context.WithCancel(context.Background())
	s := &stream{updates: make(chan node.VenueUpdate, 256), ended: make(chan struct{})}
	go func() {
		defer close(s.ended)
		a.Stream(c, func(u node.VenueUpdate) { //nolint:errcheck // ends with the test
			select {
			case s.updates <- u:
			case <-c.Done():
			}
		})
	}()
	t.Cleanup(func() { stop(); <-s.ended })
	return s
}

func (s *stream) next(t *testing.T) node.VenueUpdate {
	t.Helper()
	select {
	case u := <-s.updates:
		return u
	case <-s.ended:
		t.Fatal("the stream ended")
	case <-time.After(5 * time.Second):
		t.Fatal("no stream update within 5s")
	}
	return node.VenueUpdate{}
}

// hostRecorder records the hosts asked for and answers nothing.
type hostRecorder struct{ hosts []string }

func (h *hostRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	h.hosts = append(h.hosts, r.URL.Scheme+"://"+r.URL.Host)
	return nil, errors.New("no network in tests")
}

// TestEnvironments: testnet (the default) reaches Binance's futures
// testnet, live the live API; the keys are required.
func TestEnvironments(t *testing.T) {
	for env, want := range map[string]string{"": "https://testnet.binancefuture.com", project.EnvTestnet: "https://testnet.binancefuture.com", project.EnvLive: "https://fapi.binance.com"} {
		rec := &hostRecorder{}
		a, err := binancefutures.New(binancefutures.Config{Venue: project.Venue{Name: "perps", Kind: project.KindBinanceFutures, Environment: env},
			APIKey: testkit.Secret(t, 16), APISecret: testkit.Secret(t, 16), Transport: rec, Timeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		a.Marks(ctx(t), []string{"BTCUSDT"}) //nolint:errcheck // no network: only the host asked for matters
		if len(rec.hosts) == 0 || rec.hosts[0] != want {
			t.Errorf("environment %q reached %v, want %s", env, rec.hosts, want)
		}
	}
	if _, err := binancefutures.New(binancefutures.Config{Venue: project.Venue{Name: "perps"}}); err == nil || !strings.Contains(err.Error(), project.KeyBinanceFuturesAPIKey) {
		t.Errorf("no keys: %v", err)
	}
}

// TestAlgoLostAnswers: a stop whose submit answer is lost is unknown,
// sent once, and found by its client id (by this adapter and by another
// process); a lost cancel answer leaves it canceled at the venue, read
// back so.
func TestAlgoLostAnswers(t *testing.T) {
	f, another := startWith(t)
	f.SetPosition("ETHUSDT", "1", "3000", 1, "ISOLATED")
	a := another()
	id := venuetest.ClientID()
	f.DropResponses("/fapi/v1/algoOrder", 1)
	_, err := a.Submit(ctx(t), node.OrderRequest{ClientOrderID: id, Symbol: "ETHUSDT", Side: command.Sell, Type: command.Stop, Quantity: testkit.D("1"), StopPrice: testkit.D("2900")})
	if !errors.Is(err, node.ErrVenueUnknown) {
		t.Fatalf("a stop whose answer was lost: %v, want ErrVenueUnknown", err)
	}
	if n := f.Requests("POST /fapi/v1/algoOrder"); n != 1 || len(f.Algos()) != 1 {
		t.Fatalf("sent %d times, the venue holds %d", n, len(f.Algos()))
	}
	var got node.VenueOrder
	for who, ad := range map[string]*binancefutures.Adapter{"this adapter": a, "another process": another()} {
		got, err = ad.Lookup(ctx(t), node.VenueOrder{Symbol: "ETHUSDT", ClientOrderID: id, Type: command.Stop})
		if err != nil || got.State != node.VenueOpen || got.Type != command.Stop || !got.StopPrice.Equal(testkit.D("2900")) || got.ClientOrderID != id {
			t.Errorf("%s finds the stop as %+v %v", who, got, err)
		}
	}
	f.DropResponses("/fapi/v1/algoOrder", 1)
	if _, err := a.Cancel(ctx(t), got); !errors.Is(err, node.ErrVenueUnknown) {
		t.Errorf("a cancel whose answer was lost: %v", err)
	}
	if got, err := a.Lookup(ctx(t), got); err != nil || got.State != node.VenueCanceled || f.Requests("DELETE /fapi/v1/algoOrder") != 1 {
		t.Errorf("after the lost cancel: %+v %v (%d cancels)", got, err, f.Requests("DELETE /fapi/v1/algoOrder"))
	}
}

// TestStartRefusals: a symbol the venue does not list, and an account in
// hedge mode with a position (Binance will not switch it), stop the start
// with what to do.
func TestStartRefusals(t *testing.T) {
	f, another := startWith(t)
	a := another()
	if _, err := a.Instruments(ctx(t), []string{"BTCUSD"}); !errors.Is(err, node.ErrUnknownSymbol) || !strings.Contains(err.Error(), "BTCUSDT") {
		t.Errorf("an unlisted symbol: %v", err)
	}
	f.SetHedgeMode(true)
	f.SetPosition("BTCUSDT", "0.1", "60000", 3, "ISOLATED")
	b, err := newAdapter(t, f)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Instruments(ctx(t), []string{"BTCUSDT"}); err == nil || !strings.Contains(err.Error(), "hedge mode") {
		t.Errorf("hedge mode with a position: %v", err)
	}
}

// TestStreamReportsTriggeredStop: a stop the venue holds as an algo
// order is reported on the stream under the node's id when it triggers
// and fills (ALGO_UPDATE and its order's ORDER_TRADE_UPDATE, read back
// with the fills), never as an external order.
func TestStreamReportsTriggeredStop(t *testing.T) {
	f, another := startWith(t)
	f.SetPosition("ETHUSDT", "1", "3000", 1, "ISOLATED")
	a := another()
	s := startStream(t, a)
	if u := s.next(t); !u.Connected {
		t.Fatalf("first update %+v", u)
	}
	id := venuetest.ClientID()
	if _, err := a.Submit(ctx(t), node.OrderRequest{ClientOrderID: id, Symbol: "ETHUSDT", Side: command.Sell, Type: command.Stop, Quantity: testkit.D("1"), StopPrice: testkit.D("2900")}); err != nil {
		t.Fatal(err)
	}
	f.SetPrice("ETHUSDT", "2890")
	for range 32 {
		u := s.next(t)
		if u.Order != nil && u.Order.ClientOrderID != id {
			t.Fatalf("an update of another order: %+v", u.Order)
		}
		if u.Order != nil && u.Order.State == node.VenueFilled {
			if !u.Order.Filled.Equal(testkit.D("1")) || !u.Order.AveragePrice.Equal(testkit.D("2890")) || u.Order.Type != command.Stop {
				t.Errorf("the stop's fill reported as %+v", u.Order)
			}
			return
		}
	}
	t.Fatal("no report of the stop filled")
}
