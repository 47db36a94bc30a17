package binance_test

import (
	"testing"

	"wicket/internal/instrument"
	"wicket/strategy/provider/binance"
)

// TestClientSymbolOverrides: a client made with [symbols.binance]
// overrides spells with them both ways; without, the table alone.
func TestClientSymbolOverrides(t *testing.T) {
	m, err := instrument.For(instrument.Binance, map[string]string{"BTC-USD": "BTCFDUSD"})
	if err != nil {
		t.Fatal(err)
	}
	c := binance.New(binance.Config{Symbols: m})
	if s, err := c.Symbol("BTC-USD"); err != nil || s != "BTCFDUSD" {
		t.Errorf("Symbol(BTC-USD) = %q, %v", s, err)
	}
	if s, err := c.Canonical("BTCFDUSD"); err != nil || s != "BTC-USD" {
		t.Errorf("Canonical(BTCFDUSD) = %q, %v", s, err)
	}
	plain := binance.New(binance.Config{})
	if s, err := plain.Symbol("BTCUSDT"); err != nil || s != "BTCUSDT" {
		t.Errorf("binance's own spelling: %q, %v", s, err)
	}
	if s, err := plain.Canonical("BTCUSDT"); err != nil || s != "BTC-USD" {
		t.Errorf("Canonical(BTCUSDT) = %q, %v", s, err)
	}
}
