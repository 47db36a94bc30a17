// Package venuerig is the one venue end-to-end rig of the module's tests:
// a loopback Binance or Alpaca fake listing the instruments the tests
// trade (with keys made for the run), the wicket.toml table of a venue on
// it, the real adapter on it, and a node (nodetest) with those venues,
// started and read. Every test that trades through a real adapter on a
// node, in any package, starts from here; none repeats it.
//
// It is for tests only: it fails tests through testing.TB, it must never
// be imported by the binary's own code (cmd/wicket's layering test checks
// that), it never talks to a real venue and never prints a key.
package venuerig

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/alpaca"
	"wicket/node/alpaca/alpacafake"
	"wicket/node/binance"
	"wicket/node/binance/binancefake"
	"wicket/node/binancefutures"
	"wicket/node/binancefutures/binancefuturesfake"
	"wicket/node/nodetest"
	"wicket/node/server"
)

// AdapterTimeout is the adapters' call timeout in the rig: long enough for
// a loaded machine, short enough that a lost answer fails a test quickly.
const AdapterTimeout = 2 * time.Second

// binanceSymbols are the fake Binance's instruments, by name.
var binanceSymbols = map[string]binancefake.Symbol{
	"BTCUSDT": {Name: "BTCUSDT", Base: "BTC", Quote: "USDT", Tick: "0.01", Step: "0.00001", MinQty: "0.00001", MinNo: "5", Price: "60000.00"},
	"ETHUSDT": {Name: "ETHUSDT", Base: "ETH", Quote: "USDT", Tick: "0.01", Step: "0.0001", MinQty: "0.0001", MinNo: "5", Price: "3000.00"},
	"BNBUSDT": {Name: "BNBUSDT", Base: "BNB", Quote: "USDT", Tick: "0.01", Step: "0.001", MinQty: "0.001", MinNo: "5", Price: "600.00"}, // fees paid in BNB
}

// futuresSymbols are the fake Binance USDⓈ-M's perpetuals, by name.
var futuresSymbols = map[string]binancefuturesfake.Symbol{
	"BTCUSDT": {Name: "BTCUSDT", Base: "BTC", Quote: "USDT", Tick: "0.10", Step: "0.001", MinQty: "0.001", MinNo: "5", Price: "60000"},
	"ETHUSDT": {Name: "ETHUSDT", Base: "ETH", Quote: "USDT", Tick: "0.01", Step: "0.001", MinQty: "0.001", MinNo: "5", Price: "3000"},
}

// alpacaAssets are the fake Alpaca's assets, by its symbol.
var alpacaAssets = map[string]alpacafake.Asset{
	"SPY":     {Symbol: "SPY", Class: "us_equity", Fractionable: true, Shortable: true, Price: "500.00"},
	"BTC/USD": {Symbol: "BTC/USD", Class: "crypto", Fractionable: true, MinOrder: "0.0001", Increment: "0.0001", PriceIncrement: "1", Price: "60000"},
}

// Binance is a loopback Binance listing symbols (BTCUSDT at 60000,
// ETHUSDT at 3000, BNBUSDT at 600) and holding balances, with an API key and secret made
// for this run, closed when the test ends.
func Binance(tb testing.TB, balances map[string]string, symbols ...string) *binancefake.Fake {
	tb.Helper()
	list, err := pick(binanceSymbols, symbols)
	if err != nil {
		tb.Fatalf("venuerig.Binance: %v", err)
	}
	f := binancefake.New(testkit.Secret(tb, 16), testkit.Secret(tb, 16), list, balances)
	tb.Cleanup(f.Close)
	return f
}

// BinanceFutures is a loopback Binance USDⓈ-M listing perpetuals
// (BTCUSDT at 60000, ETHUSDT at 3000) with a USDT wallet, with an API key
// and secret made for this run, closed when the test ends.
func BinanceFutures(tb testing.TB, wallet string, symbols ...string) *binancefuturesfake.Fake {
	tb.Helper()
	list, err := pick(futuresSymbols, symbols)
	if err != nil {
		tb.Fatalf("venuerig.BinanceFutures: %v", err)
	}
	f := binancefuturesfake.New(testkit.Secret(tb, 16), testkit.Secret(tb, 16), list, wallet)
	tb.Cleanup(f.Close)
	return f
}

// Alpaca is a loopback Alpaca listing assets (SPY at 500, BTC/USD at
// 60000) with cash, with a key id and secret made for this run, closed
// when the test ends.
func Alpaca(tb testing.TB, cash string, assets ...string) *alpacafake.Fake {
	tb.Helper()
	list, err := pick(alpacaAssets, assets)
	if err != nil {
		tb.Fatalf("venuerig.Alpaca: %v", err)
	}
	f := alpacafake.New(testkit.Secret(tb, 16), testkit.Secret(tb, 16), list, cash)
	tb.Cleanup(f.Close)
	return f
}

// pick is the rig's entries named, in order; a name it does not hold is
// an error listing those it does.
func pick[T any](all map[string]T, names []string) ([]T, error) {
	list := make([]T, 0, len(names))
	for _, n := range names {
		v, ok := all[n]
		if !ok {
			have := make([]string, 0, len(all))
			for k := range all {
				have = append(have, k)
			}
			sort.Strings(have)
			return nil, fmt.Errorf("no instrument %q in the rig (it has %s)", n, strings.Join(have, ", "))
		}
		list = append(list, v)
	}
	return list, nil
}

// Venue is one venue of a rigged node: its wicket.toml table and the
// adapter the node trades it through, whose calls time out after Timeout
// (AdapterTimeout when zero).
type Venue struct {
	Table   project.Venue
	Timeout time.Duration
	adapt   func(vc project.Venue, timeout time.Duration) (server.Exchange, error)
}

// Adapter is the venue's adapter made from vc, its table as the
// validated configuration holds it.
func (v Venue) Adapter(vc project.Venue) (server.Exchange, error) {
	timeout := v.Timeout
	if timeout == 0 {
		timeout = AdapterTimeout
	}
	return v.adapt(vc, timeout)
}

// OnBinance is venue table on the Binance fake f, traded through the
// binance adapter with f's keys. The table's kind and BaseURL are set to
// binance and f's.
func OnBinance(f *binancefake.Fake, table project.Venue) Venue {
	table.Kind, table.BaseURL = project.KindBinance, f.URL
	return Venue{Table: table, adapt: func(vc project.Venue, timeout time.Duration) (server.Exchange, error) {
		return binance.New(binance.Config{Venue: vc, APIKey: f.APIKey, APISecret: f.Secret, Timeout: timeout})
	}}
}

// OnBinanceFutures is venue table on the futures fake f, traded through
// the binancefutures adapter with f's keys. The table's kind and BaseURL
// are set to binance-futures and f's.
func OnBinanceFutures(f *binancefuturesfake.Fake, table project.Venue) Venue {
	table.Kind, table.BaseURL = project.KindBinanceFutures, f.URL
	return Venue{Table: table, adapt: func(vc project.Venue, timeout time.Duration) (server.Exchange, error) {
		return binancefutures.New(binancefutures.Config{Venue: vc, APIKey: f.APIKey, APISecret: f.Secret, Timeout: timeout})
	}}
}

// OnAlpaca is venue table on the Alpaca fake f, traded through the alpaca
// adapter with f's keys. The table's kind and BaseURL are set to alpaca
// and f's.
func OnAlpaca(f *alpacafake.Fake, table project.Venue) Venue {
	table.Kind, table.BaseURL = project.KindAlpaca, f.URL
	return Venue{Table: table, adapt: func(vc project.Venue, timeout time.Duration) (server.Exchange, error) {
		return alpaca.New(alpaca.Config{Venue: vc, KeyID: f.KeyID, Secret: f.Secret, Timeout: timeout})
	}}
}

// Node starts a node whose configuration is base with venues added (then
// validated, each adapter made from its validated table), marks read
// every 50 ms. It does not wait for the node to read the venues (Start
// does). opts come after the rig's own, so they override them.
func Node(tb testing.TB, base project.Config, venues []Venue, opts ...nodetest.Option) *nodetest.Server {
	tb.Helper()
	cfg := base
	cfg.Venues = append([]project.Venue(nil), base.Venues...) // base keeps its own
	for _, v := range venues {
		cfg.Venues = append(cfg.Venues, v.Table)
	}
	if err := cfg.Validate(); err != nil {
		tb.Fatalf("venuerig: %v", err)
	}
	ex := make(map[string]server.Exchange, len(venues))
	for _, v := range venues {
		vc, _ := cfg.Venue(v.Table.Name)
		a, err := v.Adapter(vc)
		if err != nil {
			tb.Fatalf("venuerig: adapter for %s: %v", v.Table.Name, err)
		}
		ex[vc.Name] = a
	}
	opts = append([]nodetest.Option{nodetest.WithConfig(cfg), nodetest.WithExchanges(ex), nodetest.WithMarkEvery(50 * time.Millisecond)}, opts...)
	return nodetest.NewServer(tb, opts...)
}

// Start starts a node with the default configuration (its paper venue)
// and venues, as Node does, and waits until it has read every one of
// venues.
func Start(tb testing.TB, venues []Venue, opts ...nodetest.Option) *nodetest.Server {
	tb.Helper()
	srv := Node(tb, project.Defaults(), venues, opts...)
	c := srv.Client()
	for _, v := range venues {
		WaitSynced(tb, c, v.Table.Name)
	}
	return srv
}

// Synced says whether the node has read venue v: connected, its
// instruments and account read, and a mark for every symbol.
func Synced(v node.Venue) bool {
	return v.Connection == "connected" && len(v.Instruments) > 0 && v.Account != "" && len(v.Marks) == len(v.Symbols)
}

// WaitSynced polls the node (a bounded wait, 10 s) until it has read
// venue name, and returns the venue as it then reads.
func WaitSynced(tb testing.TB, c *node.Client, name string) node.Venue {
	tb.Helper()
	var (
		v   node.Venue
		err error
	)
	for deadline := time.Now().Add(10 * time.Second); ; {
		var snap *node.Snapshot
		if snap, err = c.Snapshot(context.Background(), name, 0); err == nil && len(snap.Venues) == 1 {
			if v = snap.Venues[0]; Synced(v) {
				return v
			}
		}
		if time.Now().After(deadline) {
			tb.Fatalf("venue %s never synced: %+v %v", name, v, err)
		}
		time.Sleep(20 * time.Millisecond) // polling the node's background read of the venue, bounded
	}
}
