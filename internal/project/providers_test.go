package project

import (
	"strings"
	"testing"
)

func TestProvidersConfig(t *testing.T) {
	ok := `
[providers.binance]
base_url = "https://mirror.example.com/binance"
stream_url = "wss://stream.example.com:9443"
[providers.alpaca]
base_url = "http://127.0.0.1:8080"
adjustment = "all"
`
	cfg, err := ParseConfig("wicket.toml", []byte(ok))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Provider("binance").BaseURL; got != "https://mirror.example.com/binance" {
		t.Errorf("binance base_url %q", got)
	}
	if got := cfg.Provider("alpaca").Adjustment; got != "all" {
		t.Errorf("alpaca adjustment %q", got)
	}
	if got := cfg.Provider("binance").Adjustment; got != "" {
		t.Errorf("absent keys are empty (defaults), got %q", got)
	}
	for _, tc := range []struct{ toml, want string }{
		{"[providers.kraken]\nbase_url = \"https://api.kraken.com\"", "[providers.kraken]: unknown provider (valid: binance, alpaca)"},
		{"[providers.binance]\nbase_url = \"http://api.binance.com\"", "is not encrypted; use https://"},
		{"[providers.binance]\nbase_url = \"ftp://api.binance.com\"", "must start with https://"},
		{"[providers.binance]\nbase_url = \"https://user:pw@api.binance.com\"", "carries user info"},
		{"[providers.binance]\nbase_url = \"https://api.binance.com/?key=1\"", "must not have a query"},
		{"[providers.binance]\nbase_url = \"https://\"", "has no host"},
		{"[providers.binance]\nbase_url = \"api.binance.com\"", "must start with https://"},
		{"[providers.binance]\nstream_url = \"https://stream.binance.com\"", "providers.binance.stream_url"},
		{"[providers.binance]\nadjustment = \"all\"", "only alpaca has an adjustment"},
		{"[providers.alpaca]\nadjustment = \"some\"", `adjustment "some" is not one of raw, split, dividend, all`},
		{"[providers.binance]\nbase = \"https://api.binance.com\"", "unknown key(s) providers.binance.base"},
	} {
		_, err := ParseConfig("wicket.toml", []byte(tc.toml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.toml, err, tc.want)
		}
	}
	if _, err := ParseConfig("wicket.toml", []byte(DefaultConfigText)); err != nil {
		t.Errorf("the default text: %v", err)
	}
}
