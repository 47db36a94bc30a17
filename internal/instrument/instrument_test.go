package instrument

import (
	"strings"
	"testing"
)

func mustFor(t *testing.T, kind string, over map[string]string) Map {
	t.Helper()
	m, err := For(kind, over)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestTable: each kind's table maps wicket's spelling to its own and back,
// and takes its own spelling as input too.
func TestTable(t *testing.T) {
	for _, tc := range []struct {
		kind, in, venue, canon, both string
	}{
		{Binance, "BTC-USD", "BTCUSDT", "BTC-USD", "BTC-USD (BTCUSDT)"},
		{Binance, "BTCUSDT", "BTCUSDT", "BTC-USD", "BTC-USD (BTCUSDT)"},
		{Binance, "btcusdt", "BTCUSDT", "BTC-USD", "BTC-USD (BTCUSDT)"},
		{Binance, "eth-usd", "ETHUSDT", "ETH-USD", "ETH-USD (ETHUSDT)"},
		{Binance, "ETH-BTC", "ETHBTC", "ETH-BTC", "ETH-BTC (ETHBTC)"},
		{Binance, "ETHBTC", "ETHBTC", "ETH-BTC", "ETH-BTC (ETHBTC)"},
		{Binance, "SOL-USDC", "SOLUSDC", "SOL-USDC", "SOL-USDC (SOLUSDC)"},
		{Binance, "BTCFDUSD", "BTCFDUSD", "BTC-FDUSD", "BTC-FDUSD (BTCFDUSD)"},
		{BinanceFutures, "BTC-USD", "BTCUSDT", "BTC-USD", "BTC-USD (BTCUSDT)"},
		{Alpaca, "BTC-USD", "BTC/USD", "BTC-USD", "BTC-USD (BTC/USD)"},
		{Alpaca, "BTC/USD", "BTC/USD", "BTC-USD", "BTC-USD (BTC/USD)"},
		{Alpaca, "SPY", "SPY", "SPY", "SPY"},
		{Alpaca, "BRK.B", "BRK.B", "BRK.B", "BRK.B"},
		{Paper, "BTC-USD", "BTC-USD", "BTC-USD", "BTC-USD"},
		{Paper, "BTCUSDT", "BTCUSDT", "BTCUSDT", "BTCUSDT"},
	} {
		m := mustFor(t, tc.kind, nil)
		if v, err := m.Venue(tc.in); err != nil || v != tc.venue {
			t.Errorf("%s Venue(%s) = %q, %v; want %s", tc.kind, tc.in, v, err, tc.venue)
		}
		if c, err := m.Canonical(tc.in); err != nil || c != tc.canon {
			t.Errorf("%s Canonical(%s) = %q, %v; want %s", tc.kind, tc.in, c, err, tc.canon)
		}
		if b := m.Both(tc.in); b != tc.both {
			t.Errorf("%s Both(%s) = %q; want %s", tc.kind, tc.in, b, tc.both)
		}
		if !m.Same(tc.in, tc.venue) || !m.Same(tc.in, tc.canon) {
			t.Errorf("%s: %s is not the same as %s and %s", tc.kind, tc.in, tc.venue, tc.canon)
		}
	}
	if (Map{}).Kind() != Paper {
		t.Errorf("zero Map kind %q", Map{}.Kind())
	}
	if mustFor(t, Binance, nil).Same("BTC-USD", "ETH-USD") {
		t.Error("BTC-USD and ETH-USD are one instrument")
	}
}

// TestTableRefuses: a symbol the kind cannot spell is an error naming what
// it takes and where to map it.
func TestTableRefuses(t *testing.T) {
	for _, tc := range []struct{ kind, in, want string }{
		{Binance, "SPY", `binance has no symbol "SPY": binance takes crypto pairs BASE-QUOTE such as BTC-USD (BTCUSDT`},
		{Binance, "", "[symbols.binance]"},
		{Binance, "BTC-", "BTCUSDT"},
		{Alpaca, "not a ticker", `alpaca has no symbol "not a ticker": alpaca takes US stock tickers (SPY, BRK.B)`},
		{Alpaca, "BTC-USD-X", "[symbols.alpaca]"},
	} {
		m := mustFor(t, tc.kind, nil)
		_, err := m.Venue(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s Venue(%q) err = %v, want %q", tc.kind, tc.in, err, tc.want)
		}
		if _, err := m.Canonical(tc.in); err == nil {
			t.Errorf("%s Canonical(%q) took it", tc.kind, tc.in)
		}
		if m.Both(tc.in) != tc.in {
			t.Errorf("%s Both(%q) = %q", tc.kind, tc.in, m.Both(tc.in))
		}
	}
	if _, err := For("kraken", nil); err == nil || !strings.Contains(err.Error(), "alpaca, binance, binance-futures, paper") {
		t.Errorf("unknown kind: %v", err)
	}
}

// TestOverrides: wicket.toml's [symbols.KIND] wins over the table both
// ways, and a bad override is refused naming the fix.
func TestOverrides(t *testing.T) {
	m := mustFor(t, Binance, map[string]string{"BTC-USD": "BTCFDUSD", "PEPE-USD": "1000PEPEUSDT"})
	for _, tc := range []struct{ in, venue, canon string }{
		{"BTC-USD", "BTCFDUSD", "BTC-USD"},
		{"BTCFDUSD", "BTCFDUSD", "BTC-USD"},
		{"BTCUSDT", "BTCUSDT", "BTC-USDT"}, // BTC-USD is another symbol now
		{"PEPE-USD", "1000PEPEUSDT", "PEPE-USD"},
		{"1000PEPEUSDT", "1000PEPEUSDT", "PEPE-USD"},
		{"ETH-USD", "ETHUSDT", "ETH-USD"}, // the table still serves the rest
	} {
		if v, err := m.Venue(tc.in); err != nil || v != tc.venue {
			t.Errorf("Venue(%s) = %q, %v; want %s", tc.in, v, err, tc.venue)
		}
		if c, err := m.Canonical(tc.in); err != nil || c != tc.canon {
			t.Errorf("Canonical(%s) = %q, %v; want %s", tc.in, c, err, tc.canon)
		}
	}
	if m.Both("BTC-USD") != "BTC-USD (BTCFDUSD)" {
		t.Errorf("Both = %q", m.Both("BTC-USD"))
	}
	a := mustFor(t, Alpaca, map[string]string{"BRK-B": "BRK.B"})
	if v, _ := a.Venue("BRK-B"); v != "BRK.B" {
		t.Errorf("alpaca override: %q", v)
	}
	for _, tc := range []struct {
		kind string
		over map[string]string
		want string
	}{
		{Binance, map[string]string{"btc-usd": "BTCUSDT"}, `symbols.binance: "btc-usd" is not a wicket symbol`},
		{Binance, map[string]string{"BTCUSDT": "BTCUSDT"}, `"BTCUSDT" is not a wicket symbol`},
		{Binance, map[string]string{"BTC-USD": ""}, `symbols.binance.BTC-USD: "" is not a symbol`},
		{Binance, map[string]string{"BTC-USD": "BTC USDT"}, "is not a symbol"},
		{Binance, map[string]string{"BTC-USD": "X", "ETH-USD": "X"}, "BTC-USD and ETH-USD both map to X"},
		{Paper, map[string]string{"BTC-USD": "X"}, "takes no symbol overrides; remove [symbols.paper]"},
	} {
		if _, err := For(tc.kind, tc.over); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want %q", tc.over, err, tc.want)
		}
	}
}
