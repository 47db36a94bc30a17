package server_test

import (
	"testing"
	"time"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node/alpaca"
	"wicket/node/alpaca/alpacafake"
	"wicket/node/binance"
	"wicket/node/binance/binancefake"
	"wicket/node/server"
)

// The venue end-to-end harness of this package: a loopback venue fake
// (Binance or Alpaca, with keys made for the run), the real adapter on
// it, a node (nodetest) with that venue and a client. Every test that
// trades through a real adapter starts from these; none repeats them.

// binanceSymbols are the fake Binance's instruments, by name.
var binanceSymbols = map[string]binancefake.Symbol{
	"BTCUSDT": {Name: "BTCUSDT", Base: "BTC", Quote: "USDT", Tick: "0.01", Step: "0.00001", MinQty: "0.00001", MinNo: "5", Price: "60000.00"},
	"ETHUSDT": {Name: "ETHUSDT", Base: "ETH", Quote: "USDT", Tick: "0.01", Step: "0.0001", MinQty: "0.0001", MinNo: "5", Price: "3000.00"},
}

// alpacaAssets are the fake Alpaca's assets, by its symbol.
var alpacaAssets = map[string]alpacafake.Asset{
	"SPY":     {Symbol: "SPY", Class: "us_equity", Fractionable: true, Shortable: true, Price: "500.00"},
	"BTC/USD": {Symbol: "BTC/USD", Class: "crypto", Fractionable: true, MinOrder: "0.0001", Increment: "0.0001", PriceIncrement: "1", Price: "60000"},
}

// binanceFake is a loopback Binance listing symbols (BTCUSDT at 60000,
// ETHUSDT at 3000) and holding balances, closed when the test ends.
func binanceFake(t testing.TB, balances map[string]string, symbols ...string) *binancefake.Fake {
	t.Helper()
	list := make([]binancefake.Symbol, 0, len(symbols))
	for _, s := range symbols {
		sym, ok := binanceSymbols[s]
		if !ok {
			t.Fatalf("binanceFake: no instrument %q in the harness", s)
		}
		list = append(list, sym)
	}
	f := binancefake.New(testkit.Secret(t, 16), testkit.Secret(t, 16), list, balances)
	t.Cleanup(f.Close)
	return f
}

// newBinanceFake is the usual Binance: BTCUSDT and ETHUSDT, 20000 USDT
// and 0.1 BTC.
func newBinanceFake(t testing.TB) *binancefake.Fake {
	t.Helper()
	return binanceFake(t, map[string]string{"USDT": "20000", "BTC": "0.1"}, "BTCUSDT", "ETHUSDT")
}

// alpacaFake is a loopback Alpaca listing assets (SPY at 500, BTC/USD at
// 60000) with cash, closed when the test ends.
func alpacaFake(t testing.TB, cash string, assets ...string) *alpacafake.Fake {
	t.Helper()
	list := make([]alpacafake.Asset, 0, len(assets))
	for _, s := range assets {
		a, ok := alpacaAssets[s]
		if !ok {
			t.Fatalf("alpacaFake: no asset %q in the harness", s)
		}
		list = append(list, a)
	}
	f := alpacafake.New(testkit.Secret(t, 16), testkit.Secret(t, 16), list, cash)
	t.Cleanup(f.Close)
	return f
}

// onBinance is the binance adapter on f, for startWith.
func onBinance(f *binancefake.Fake, timeout time.Duration) func(project.Venue) (server.Exchange, error) {
	return func(vc project.Venue) (server.Exchange, error) {
		return binance.New(binance.Config{Venue: vc, APIKey: f.APIKey, APISecret: f.Secret, Timeout: timeout})
	}
}

// onAlpaca is the alpaca adapter on f, for startWith.
func onAlpaca(f *alpacafake.Fake, timeout time.Duration) func(project.Venue) (server.Exchange, error) {
	return func(vc project.Venue) (server.Exchange, error) {
		return alpaca.New(alpaca.Config{Venue: vc, KeyID: f.KeyID, Secret: f.Secret, Timeout: timeout})
	}
}

// alpacaVenue is the wicket.toml table of an alpaca venue "al" on f,
// may_arm, trading symbols (wicket's spelling: BTC-USD).
func alpacaVenue(f *alpacafake.Fake, symbols ...string) project.Venue {
	return project.Venue{Name: "al", Kind: project.KindAlpaca, MayArm: true, BaseURL: f.URL, Symbols: symbols}
}

// startAlpacaVenue starts a node with venue al on f (cash, assets as
// alpacaFake takes them) and waits until it has read the venue; armed,
// it arms al for an hour.
func startAlpacaVenue(t testing.TB, f *alpacafake.Fake, armed bool, symbols ...string) *venueNode {
	t.Helper()
	srv, _ := startWith(t, alpacaVenue(f, symbols...), onAlpaca(f, 2*time.Second))
	vn := &venueNode{srv: srv, c: srv.Client()}
	vn.waitSynced(t, "al")
	if armed {
		vn.arm(t, "al", time.Hour)
	}
	return vn
}
