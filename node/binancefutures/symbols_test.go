package binancefutures_test

import (
	"errors"
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

// wicketSpelled is a futures venue on the fake listing wicket's BTC-USD
// and Binance's ETHUSDT, its contracts written the other way round
// (BTCUSDT at 3x, ETH-USD at 2x cross).
func wicketSpelled(t *testing.T, url string) project.Venue {
	t.Helper()
	cfg, err := project.ParseConfig("wicket.toml", []byte(`[[venues]]
name = "perps"
kind = "binance-futures"
base_url = "`+url+`"
symbols = ["BTC-USD", "ETHUSDT"]
[venues.contracts.BTCUSDT]
leverage = 3
[venues.contracts.ETH-USD]
leverage = 2
margin_type = "cross"
`))
	if err != nil {
		t.Fatal(err)
	}
	vc, _ := cfg.Venue("perps")
	return vc
}

// TestWicketSymbolsTravelAsBinances: a futures venue listing wicket's
// BTC-USD sets its contract, places its orders and algo orders, and reads
// its marks, funding, brackets and orders while every request carries
// Binance's BTCUSDT; what comes back — instruments, marks, positions,
// orders, funding, stream reports, a liquidation — is named BTC-USD, as
// the list writes it. Binance's own spelling from the node travels as it
// is and comes back as BTC-USD too.
func TestWicketSymbolsTravelAsBinances(t *testing.T) {
	f, _ := startWith(t)
	vc := wicketSpelled(t, f.URL)
	if len(vc.Symbols) != 2 || vc.Contract("BTC-USD").Leverage != 3 || vc.Contract("ETHUSDT").MarginType != project.MarginCross {
		t.Fatalf("venue read as %+v", vc)
	}
	newOne := func() *binancefutures.Adapter {
		a, err := binancefutures.New(binancefutures.Config{Venue: vc, APIKey: f.APIKey, APISecret: f.Secret, Timeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	a := newOne()
	ins, err := a.Instruments(ctx(t), vc.Symbols)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ins["BTC-USD"]; !ok || len(ins) != 2 || !ins["BTC-USD"].Shortable {
		t.Fatalf("instruments keyed %v, want BTC-USD and ETHUSDT", keys(ins))
	}
	if p := f.Position("BTCUSDT"); p.Leverage != 3 || p.MarginType != "ISOLATED" {
		t.Errorf("BTCUSDT at start: %+v, want 3x ISOLATED", p)
	}
	if p := f.Position("ETHUSDT"); p.Leverage != 2 || p.MarginType != "CROSSED" {
		t.Errorf("ETHUSDT at start: %+v, want 2x CROSSED", p)
	}
	marks, err := a.Marks(ctx(t), vc.Symbols)
	if err != nil || !marks["BTC-USD"].Equal(testkit.D("60000")) || !marks["ETHUSDT"].Equal(testkit.D("3000")) || len(marks) != 2 {
		t.Fatalf("marks %v, %v", marks, err)
	}
	for _, s := range []string{"BTC-USD", "BTCUSDT"} {
		if _, ok := a.FundingRate(s); !ok {
			t.Errorf("no funding rate for %s", s)
		}
		if b := a.MaintenanceBrackets(s); len(b) < 2 || !b[0].Rate.Equal(testkit.D("0.004")) || !b[0].Floor.IsZero() || !b[1].Floor.GreaterThan(b[0].Floor) {
			t.Errorf("maintenance brackets of %s: %+v", s, b)
		}
	}

	s := startStream(t, a)
	if u := s.next(t); !u.Connected {
		t.Fatalf("first update %+v", u)
	}
	mkt := venuetest.ClientID()
	vo, err := a.Submit(ctx(t), node.OrderRequest{ClientOrderID: mkt, Symbol: "BTC-USD", Side: command.Buy, Type: command.Market, Quantity: testkit.D("0.1")})
	if err != nil || vo.Symbol != "BTC-USD" || vo.State != node.VenueFilled {
		t.Fatalf("submit: %+v, %v", vo, err)
	}
	if got := f.Orders(); len(got) != 1 || got[0].Symbol != "BTCUSDT" {
		t.Fatalf("the fake took %+v, want one BTCUSDT order", got)
	}
	for u := s.next(t); ; u = s.next(t) {
		if u.Order != nil && u.Order.ClientOrderID == mkt && u.Order.State == node.VenueFilled {
			if u.Order.Symbol != "BTC-USD" {
				t.Errorf("the stream reports the fill under %q", u.Order.Symbol)
			}
			break
		}
	}
	if back, err := a.Lookup(ctx(t), node.VenueOrder{ClientOrderID: mkt, Symbol: "BTC-USD"}); err != nil || back.Symbol != "BTC-USD" || back.State != node.VenueFilled {
		t.Errorf("lookup: %+v, %v", back, err)
	}
	acct, err := a.Account(ctx(t))
	if err != nil || len(acct.Positions) != 1 || acct.Positions[0].Symbol != "BTC-USD" || acct.Positions[0].Leverage != 3 {
		t.Fatalf("positions %+v, %v", acct.Positions, err)
	}

	// A stop (an algo order) and a limit named in Binance's spelling.
	stop := venuetest.ClientID()
	vo, err = a.Submit(ctx(t), node.OrderRequest{ClientOrderID: stop, Symbol: "BTC-USD", Side: command.Sell, Type: command.Stop, Quantity: testkit.D("0.1"), StopPrice: testkit.D("50000")})
	if err != nil || vo.Symbol != "BTC-USD" {
		t.Fatalf("stop: %+v, %v", vo, err)
	}
	if got := f.Algos(); len(got) != 1 || got[0].Symbol != "BTCUSDT" {
		t.Fatalf("the fake holds algo orders %+v, want one BTCUSDT", got)
	}
	lim := venuetest.ClientID()
	vo, err = a.Submit(ctx(t), node.OrderRequest{ClientOrderID: lim, Symbol: "BTCUSDT", Side: command.Buy, Type: command.Limit, TimeInForce: command.GTC,
		Quantity: testkit.D("0.01"), Price: testkit.D("55000")})
	if err != nil || vo.Symbol != "BTC-USD" {
		t.Fatalf("submit BTCUSDT: %+v, %v", vo, err)
	}
	open, err := newOne().OpenOrders(ctx(t), vc.Symbols)
	if err != nil || len(open) != 2 || open[0].Symbol != "BTC-USD" || open[1].Symbol != "BTC-USD" {
		t.Fatalf("open orders %+v, %v", open, err)
	}
	for _, o := range open {
		if o.ClientOrderID == lim {
			if r, err := a.Replace(ctx(t), o, node.Replacement{Price: testkit.D("54000")}); err != nil || r.Symbol != "BTC-USD" {
				t.Errorf("replace the limit: %+v, %v", r, err)
			}
		}
		if o.ClientOrderID == stop {
			if r, err := a.Replace(ctx(t), o, node.Replacement{StopPrice: testkit.D("51000")}); err != nil || r.Symbol != "BTC-USD" {
				t.Errorf("replace the stop: %+v, %v", r, err)
			}
		}
	}
	for _, id := range []string{lim, stop} {
		o, err := a.Lookup(ctx(t), node.VenueOrder{ClientOrderID: id, Symbol: "BTC-USD"})
		if err != nil {
			t.Fatal(err)
		}
		if c, err := a.Cancel(ctx(t), o); err != nil || c.Symbol != "BTC-USD" || c.State != node.VenueCanceled {
			t.Errorf("cancel %s: %+v, %v", id, c, err)
		}
	}

	// Funding booked for BTCUSDT is BTC-USD's.
	f.AddFunding("BTCUSDT", "-1.25", time.Now())
	fund, err := a.Funding(ctx(t), time.Now().Add(-time.Hour))
	if err != nil || len(fund) != 1 || fund[0].Symbol != "BTC-USD" || !fund[0].Amount.Equal(testkit.D("-1.25")) {
		t.Errorf("funding %+v, %v", fund, err)
	}

	// A liquidation closes BTC-USD's position, and names it so.
	f.Liquidate("BTCUSDT", "40200")
	for u := s.next(t); !u.Resync; u = s.next(t) {
	}
	acct, err = a.Account(ctx(t))
	if err != nil || len(acct.Positions) != 1 || acct.Positions[0].Symbol != "BTC-USD" || !strings.Contains(acct.Positions[0].Closed, "BTC-USD") {
		t.Errorf("after the liquidation: %+v, %v", acct.Positions, err)
	}

	// Leverage is set on BTCUSDT when the node names BTC-USD.
	if err := a.SetLeverage(ctx(t), "BTC-USD", 4); err != nil || f.Position("BTCUSDT").Leverage != 4 {
		t.Errorf("set leverage: %v, BTCUSDT at %d", err, f.Position("BTCUSDT").Leverage)
	}
}

// TestMisconfiguredSymbolNamesBinances: a symbol Binance's futures do not
// list stops the start naming Binance's own spelling of it (BTCUSDT, with
// the list's BTC-USD), and the contract Binance does list for the pair
// when there is one; nothing is set at the venue.
func TestMisconfiguredSymbolNamesBinances(t *testing.T) {
	key, secret := testkit.Secret(t, 16), testkit.Secret(t, 16)
	f := binancefuturesfake.New(key, secret, []binancefuturesfake.Symbol{
		{Name: "ETHUSDT", Base: "ETH", Quote: "USDT", Tick: "0.01", Step: "0.001", MinQty: "0.001", MinNo: "5", Price: "3000"},
		{Name: "SOLUSDC", Base: "SOL", Quote: "USDC", Tick: "0.01", Step: "0.01", MinQty: "0.01", MinNo: "5", Price: "150"},
	}, "10000")
	t.Cleanup(f.Close)
	for _, tc := range []struct {
		symbols []string
		want    []string
	}{
		{[]string{"ETH-USD", "BTC-USD"}, []string{"binance-futures does not list BTCUSDT (BTC-USD in wicket.toml)", "[symbols.binance-futures]"}},
		{[]string{"BTCUSDT"}, []string{"binance-futures does not list BTCUSDT:"}},
		{[]string{"SOL-USD"}, []string{"binance-futures does not list SOLUSDT (SOL-USD in wicket.toml) (binance-futures lists SOLUSDC: write SOL-USDC)"}},
	} {
		vc := project.Venue{Name: "perps", Kind: project.KindBinanceFutures, BaseURL: f.URL, Symbols: tc.symbols}
		a, err := binancefutures.New(binancefutures.Config{Venue: vc, APIKey: key, APISecret: secret, Timeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		_, err = a.Instruments(ctx(t), tc.symbols)
		if !errors.Is(err, node.ErrUnknownSymbol) {
			t.Fatalf("%v: err = %v, want an unknown symbol", tc.symbols, err)
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: %q does not say %q", tc.symbols, err, w)
			}
		}
	}
	if n := f.Requests("POST /fapi/v1/leverage") + f.Requests("POST /fapi/v1/marginType"); n != 0 {
		t.Errorf("%d settings changed at the venue before the symbols were checked", n)
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
