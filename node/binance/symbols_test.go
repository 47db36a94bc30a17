package binance_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/binance"
	"wicket/node/binance/binancefake"
	"wicket/node/command"
)

// TestWicketSymbolsTravelAsBinances: a venue listing wicket's BTC-USD
// reads its instrument, mark, position and orders under BTC-USD while
// every request carries Binance's BTCUSDT; Binance's own spelling given by
// the node travels as it is.
func TestWicketSymbolsTravelAsBinances(t *testing.T) {
	f, _ := startWith(t)
	cfg, err := project.ParseConfig("wicket.toml", []byte(`[[venues]]
name = "bn"
kind = "binance"
base_url = "`+f.URL+`"
symbols = ["BTC-USD", "ETHUSDT"]
`))
	if err != nil {
		t.Fatal(err)
	}
	vc, _ := cfg.Venue("bn")
	a, err := binance.New(binance.Config{Venue: vc, APIKey: f.APIKey, APISecret: f.Secret, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ins, err := a.Instruments(ctx(t), vc.Symbols)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ins["BTC-USD"]; !ok || len(ins) != 2 {
		t.Fatalf("instruments keyed %v, want BTC-USD and ETHUSDT", keys(ins))
	}
	marks, err := a.Marks(ctx(t), vc.Symbols)
	if err != nil || !marks["BTC-USD"].Equal(decimal.NewFromInt(60000)) || !marks["ETHUSDT"].IsPositive() {
		t.Fatalf("marks %v, %v", marks, err)
	}
	acct, err := a.Account(ctx(t))
	if err != nil || len(acct.Positions) != 1 || acct.Positions[0].Symbol != "BTC-USD" {
		t.Fatalf("positions %+v, %v", acct.Positions, err)
	}
	vo, err := a.Submit(ctx(t), node.OrderRequest{ClientOrderID: cid, Symbol: "BTC-USD", Side: command.Buy, Type: command.Market, Quantity: decimal.RequireFromString("0.01")})
	if err != nil || vo.Symbol != "BTC-USD" {
		t.Fatalf("submit: %+v, %v", vo, err)
	}
	if got := f.Orders(); len(got) != 1 || got[0].Symbol != "BTCUSDT" {
		t.Fatalf("the fake took %+v, want one BTCUSDT order", got)
	}
	back, err := a.Lookup(ctx(t), node.VenueOrder{ClientOrderID: cid, Symbol: "BTC-USD"})
	if err != nil || back.Symbol != "BTC-USD" || back.State != node.VenueFilled {
		t.Fatalf("lookup: %+v, %v", back, err)
	}
	// Binance's own spelling from the node goes out as it is and comes
	// back as the venue's list writes it.
	const lim = "wk-0190f5a2-7c1e-7b3a-9d4e-123456789abd"
	vo, err = a.Submit(ctx(t), node.OrderRequest{ClientOrderID: lim, Symbol: "BTCUSDT", Side: command.Buy, Type: command.Limit, TimeInForce: command.GTC,
		Quantity: decimal.RequireFromString("0.01"), Price: decimal.NewFromInt(50000)})
	if err != nil || vo.Symbol != "BTC-USD" {
		t.Fatalf("submit BTCUSDT: %+v, %v", vo, err)
	}
	open, err := a.OpenOrders(ctx(t), vc.Symbols)
	if err != nil || len(open) != 1 || open[0].Symbol != "BTC-USD" {
		t.Fatalf("open orders %+v, %v", open, err)
	}
	if c, err := a.Cancel(ctx(t), open[0]); err != nil || c.Symbol != "BTC-USD" || c.State != node.VenueCanceled {
		t.Fatalf("cancel: %+v, %v", c, err)
	}
}

// TestMisconfiguredSymbolNamesBinances: a symbol Binance does not list
// stops the start naming Binance's own spelling of it (BTCUSDT, with the
// list's BTC-USD), and the pair Binance does list when there is one.
func TestMisconfiguredSymbolNamesBinances(t *testing.T) {
	key, secret := testkit.Secret(t, 16), testkit.Secret(t, 16)
	f := binancefake.New(key, secret, []binancefake.Symbol{
		{Name: "ETHUSDT", Base: "ETH", Quote: "USDT", Tick: "0.01", Step: "0.0001", MinQty: "0.0001", MinNo: "5", Price: "3000.00"},
		{Name: "SOLUSDC", Base: "SOL", Quote: "USDC", Tick: "0.01", Step: "0.01", MinQty: "0.01", MinNo: "5", Price: "150.00"},
	}, map[string]string{"USDT": "10000"})
	t.Cleanup(f.Close)
	for _, tc := range []struct {
		symbols []string
		want    []string
	}{
		{[]string{"ETH-USD", "BTC-USD"}, []string{"binance does not list BTCUSDT (BTC-USD in wicket.toml)", "[symbols.binance]"}},
		{[]string{"BTCUSDT"}, []string{"binance does not list BTCUSDT:"}},
		{[]string{"SOL-USD"}, []string{"binance does not list SOLUSDT (SOL-USD in wicket.toml) (binance lists SOLUSDC: write SOL-USDC)"}},
	} {
		vc := project.Venue{Name: "bn", Kind: project.KindBinance, BaseURL: f.URL, Symbols: tc.symbols}
		a, err := binance.New(binance.Config{Venue: vc, APIKey: key, APISecret: secret, Timeout: 2 * time.Second})
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
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestCancelAllTravelsAsBinances: the kill switch's cancel-all on a venue
// listing BTC-USD asks Binance for BTCUSDT and names what it canceled as
// the list does.
func TestCancelAllTravelsAsBinances(t *testing.T) {
	f, _ := startWith(t)
	cfg, err := project.ParseConfig("wicket.toml", []byte(`[[venues]]
name = "bn"
kind = "binance"
base_url = "`+f.URL+`"
symbols = ["BTC-USD"]
`))
	if err != nil {
		t.Fatal(err)
	}
	vc, _ := cfg.Venue("bn")
	a, err := binance.New(binance.Config{Venue: vc, APIKey: f.APIKey, APISecret: f.Secret, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Instruments(ctx(t), vc.Symbols); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Submit(ctx(t), node.OrderRequest{ClientOrderID: cid, Symbol: "BTC-USD", Side: command.Buy, Type: command.Limit, TimeInForce: command.GTC,
		Quantity: decimal.RequireFromString("0.01"), Price: decimal.NewFromInt(50000)}); err != nil {
		t.Fatal(err)
	}
	out, err := a.CancelAll(ctx(t), vc.Symbols)
	if err != nil || len(out) != 1 || out[0].Symbol != "BTC-USD" || out[0].State != node.VenueCanceled {
		t.Fatalf("cancel-all: %+v, %v", out, err)
	}
	if n := f.CancelAlls(); n != 1 {
		t.Fatalf("the fake saw %d cancel-alls, want 1", n)
	}
}
