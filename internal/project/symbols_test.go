package project

import (
	"reflect"
	"strings"
	"testing"
)

// TestVenueSymbols: a venue lists symbols in either spelling; its kind
// must be able to spell each, once; Resolve finds the listed symbol from
// either spelling and Spellings shows both.
func TestVenueSymbols(t *testing.T) {
	cfg, err := ParseConfig("wicket.toml", []byte(`
[[venues]]
name = "bn"
kind = "binance"
symbols = ["BTC-USD", "ETHUSDT"]

[[venues]]
name = "al"
kind = "alpaca"
symbols = ["BTC-USD", "SPY"]

[[venues]]
name = "paper"
symbols = ["BTC-USD"]
`))
	if err != nil {
		t.Fatal(err)
	}
	bn, _ := cfg.Venue("bn")
	for in, want := range map[string]string{"BTC-USD": "BTC-USD", "BTCUSDT": "BTC-USD", "btcusdt": "BTC-USD", "ETH-USD": "ETHUSDT", "ETHUSDT": "ETHUSDT"} {
		if got, ok := bn.Resolve(in); !ok || got != want {
			t.Errorf("bn.Resolve(%s) = %q, %v; want %s", in, got, ok, want)
		}
	}
	if got, ok := bn.Resolve("SOL-USD"); ok {
		t.Errorf("bn.Resolve(SOL-USD) = %q, listed", got)
	}
	want := map[string]Spelling{"BTC-USD": {"BTC-USD", "BTCUSDT"}, "ETHUSDT": {"ETH-USD", "ETHUSDT"}}
	if got := bn.Spellings(); !reflect.DeepEqual(got, want) {
		t.Errorf("bn.Spellings() = %v, want %v", got, want)
	}
	al, _ := cfg.Venue("al")
	if got, ok := al.Resolve("BTC/USD"); !ok || got != "BTC-USD" {
		t.Errorf("al.Resolve(BTC/USD) = %q, %v", got, ok)
	}
	if got := al.Spellings(); !reflect.DeepEqual(got, map[string]Spelling{"BTC-USD": {"BTC-USD", "BTC/USD"}}) {
		t.Errorf("al.Spellings() = %v", got)
	}
	p, _ := cfg.Venue("paper")
	if _, ok := p.Resolve("BTCUSDT"); ok || p.Spellings() != nil {
		t.Errorf("a paper venue has one spelling: %v", p.Spellings())
	}

	for _, tc := range []struct{ body, want string }{
		{"[[venues]]\nname = \"bn\"\nkind = \"binance\"\nsymbols = [\"SPY\"]\n",
			`venue "bn": symbols: binance has no symbol "SPY": binance takes crypto pairs BASE-QUOTE such as BTC-USD (BTCUSDT`},
		{"[[venues]]\nname = \"bn\"\nkind = \"binance\"\nsymbols = [\"BTC-USD\", \"BTCUSDT\"]\n",
			"symbols BTC-USD and BTCUSDT are one instrument at binance (BTCUSDT): list it once"},
		{"[[venues]]\nname = \"al\"\nkind = \"alpaca\"\nsymbols = [\"BTC-USD\", \"not_a_ticker\"]\n", `alpaca has no symbol "not_a_ticker"`},
	} {
		if _, err := ParseConfig("wicket.toml", []byte(tc.body)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want %q", tc.body, err, tc.want)
		}
	}
}

// TestSymbolOverrides: [symbols.KIND] overrides the kind's table for its
// venues and for the provider of the same name; a bad table is refused
// naming the fix.
func TestSymbolOverrides(t *testing.T) {
	cfg, err := ParseConfig("wicket.toml", []byte(`
[[venues]]
name = "bn"
kind = "binance"
symbols = ["BTC-USD"]

[symbols.binance]
"BTC-USD" = "BTCFDUSD"
`))
	if err != nil {
		t.Fatal(err)
	}
	bn, _ := cfg.Venue("bn")
	if own, err := bn.Instruments().Venue("BTC-USD"); err != nil || own != "BTCFDUSD" {
		t.Errorf("venue: BTC-USD is %q, %v; want BTCFDUSD", own, err)
	}
	if got, ok := bn.Resolve("BTCFDUSD"); !ok || got != "BTC-USD" {
		t.Errorf("Resolve(BTCFDUSD) = %q, %v", got, ok)
	}
	if _, ok := bn.Resolve("BTCUSDT"); ok {
		t.Error("BTCUSDT resolved to the venue's BTC-USD, which is BTCFDUSD there")
	}
	pm, err := cfg.ProviderInstruments("binance")
	if err != nil {
		t.Fatal(err)
	}
	if own, _ := pm.Venue("BTC-USD"); own != "BTCFDUSD" {
		t.Errorf("provider: BTC-USD is %q, want BTCFDUSD", own)
	}
	if am, _ := cfg.ProviderInstruments("alpaca"); am.Both("BTC-USD") != "BTC-USD (BTC/USD)" {
		t.Errorf("alpaca provider: %s", am.Both("BTC-USD"))
	}
	for _, tc := range []struct{ body, want string }{
		{"[symbols.kraken]\n\"BTC-USD\" = \"XBTUSD\"\n", `[symbols.kraken]: no symbol table for kind "kraken" (kinds: alpaca, binance, binance-futures, paper)`},
		{"[symbols.paper]\n\"BTC-USD\" = \"X\"\n", "takes no symbol overrides"},
		{"[symbols.binance]\n\"btc\" = \"BTCUSDT\"\n", `"btc" is not a wicket symbol`},
		{"[symbols.binance]\n\"BTC-USD\" = 1\n", "symbols"},
	} {
		if _, err := ParseConfig("wicket.toml", []byte(tc.body)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want %q", tc.body, err, tc.want)
		}
	}
}

// BenchmarkSpellings is what each snapshot adds per venue: both spellings
// of a binance venue's four symbols.
func BenchmarkSpellings(b *testing.B) {
	cfg, err := ParseConfig("wicket.toml", []byte("[[venues]]\nname = \"bn\"\nkind = \"binance\"\nsymbols = [\"BTC-USD\", \"ETH-USD\", \"SOLUSDT\", \"ETH-BTC\"]\n"))
	if err != nil {
		b.Fatal(err)
	}
	v, _ := cfg.Venue("bn")
	b.ReportAllocs()
	for b.Loop() {
		if len(v.Spellings()) != 4 {
			b.Fatal("spellings")
		}
	}
}
