package project

import (
	"strings"
	"testing"
)

// TestFuturesContracts: a binance-futures venue reads its contracts
// (leverage, margin type, caps) and the leverage guardrail's keys, fills
// the defaults (1x isolated), and refuses what cannot be, naming the fix;
// another kind refuses the keys.
func TestFuturesContracts(t *testing.T) {
	base := "[[venues]]\nname = \"perps\"\nkind = \"binance-futures\"\nsymbols = [\"BTCUSDT\", \"ETHUSDT\"]\nmay_arm = true\n"
	cfg, err := ParseConfig("wicket.toml", []byte(base+"max_leverage = 5\nmin_liquidation_distance_pct = \"10\"\n[venues.contracts.BTCUSDT]\nleverage = 3\nmargin_type = \"cross\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	v, _ := cfg.Venue("perps")
	if v.Environment != EnvTestnet || v.MaxLeverage != 5 || v.MinLiquidationDistancePct.String() != "10" {
		t.Errorf("venue read as %+v", v)
	}
	if c := v.Contract("BTCUSDT"); c.Leverage != 3 || c.MarginType != MarginCross || c.MaxLeverage != 5 {
		t.Errorf("BTCUSDT: %+v", c)
	}
	if c := v.Contract("ETHUSDT"); c.Leverage != 1 || c.MarginType != MarginIsolated {
		t.Errorf("ETHUSDT defaults: %+v", c)
	}
	for _, c := range []struct{ text, want string }{
		{base + "[venues.contracts.DOGEUSDT]\nleverage = 2\n", "DOGEUSDT is not in the venue's symbols"},
		{base + "[venues.contracts.BTCUSDT]\nmargin_type = \"portfolio\"\n", `write "isolated" or "cross"`},
		{base + "[venues.contracts.BTCUSDT]\nleverage = 200\n", "from 1 to 125"},
		{base + "max_leverage = 2\n[venues.contracts.BTCUSDT]\nleverage = 3\n", "leverage 3 is above its max_leverage 2"},
		{base + "min_liquidation_distance_pct = \"100\"\n", "under 100"},
		{strings.Replace(base, "binance-futures", "binance", 1) + "max_leverage = 3\n", "only a binance-futures venue trades with leverage"},
		{strings.Replace(base, "binance-futures", "binance", 1) + "[venues.contracts.BTCUSDT]\nleverage = 2\n", "only a binance-futures venue has contracts"},
	} {
		if _, err := ParseConfig("wicket.toml", []byte(c.text)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.text, err, c.want)
		}
	}
}

// TestContractsEitherSpelling: a contract may name a listed symbol in
// either spelling (contracts.BTCUSDT for a listed BTC-USD, contracts.ETH-USD
// for a listed ETHUSDT, contracts.BTCUSDC for a BTC-USD mapped to it in
// [symbols.binance-futures]) and is found under either; two contracts for
// one instrument, or one for a symbol not listed, are refused.
func TestContractsEitherSpelling(t *testing.T) {
	base := "[[venues]]\nname = \"perps\"\nkind = \"binance-futures\"\nsymbols = [\"BTC-USD\", \"ETHUSDT\"]\n"
	cfg, err := ParseConfig("wicket.toml", []byte(base+"max_leverage = 5\n[venues.contracts.BTCUSDT]\nleverage = 3\n[venues.contracts.ETH-USD]\nleverage = 2\nmargin_type = \"cross\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	v, _ := cfg.Venue("perps")
	for _, s := range []string{"BTC-USD", "BTCUSDT"} {
		if c := v.Contract(s); c.Leverage != 3 || c.MaxLeverage != 5 {
			t.Errorf("%s: %+v", s, c)
		}
	}
	for _, s := range []string{"ETHUSDT", "ETH-USD"} {
		if c := v.Contract(s); c.Leverage != 2 || c.MarginType != MarginCross {
			t.Errorf("%s: %+v", s, c)
		}
	}
	over := "[symbols.binance-futures]\n\"BTC-USD\" = \"BTCUSDC\"\n" + base + "[venues.contracts.BTCUSDC]\nleverage = 4\n"
	cfg, err = ParseConfig("wicket.toml", []byte(over))
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := cfg.Venue("perps"); v.Contract("BTC-USD").Leverage != 4 {
		t.Errorf("BTC-USD mapped to BTCUSDC: %+v", v.Contract("BTC-USD"))
	}
	for _, c := range []struct{ text, want string }{
		{base + "[venues.contracts.BTCUSDT]\nleverage = 3\n[venues.contracts.BTC-USD]\nleverage = 2\n", "contracts.BTC-USD and contracts.BTCUSDT are one contract, BTC-USD (BTCUSDT): keep one table"},
		{base + "[venues.contracts.BTCUSDC]\nleverage = 3\n", "contracts.BTCUSDC: BTCUSDC is not in the venue's symbols"},
		{base + "max_leverage = 2\n[venues.contracts.ETH-USD]\nleverage = 3\n", "contracts.ETH-USD.leverage 3 is above its max_leverage 2"},
	} {
		if _, err := ParseConfig("wicket.toml", []byte(c.text)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.text, err, c.want)
		}
	}
}
