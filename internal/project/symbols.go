package project

import (
	"fmt"
	"maps"
	"slices"

	"wicket/internal/instrument"
)

// Symbol spellings (internal/instrument): wicket writes a symbol one way
// (BTC-USD, SPY); each venue and provider kind has its own (BTCUSDT at
// Binance, BTC/USD at Alpaca) from its kind's table. wicket.toml overrides
// a kind's table with a [symbols.KIND] table of wicket symbol = the kind's
// own, used by that kind's venues and by the provider of the same name:
//
//	[symbols.binance]
//	"BTC-USD" = "BTCFDUSD"
//
// A venue's symbols list may name either spelling; the node works in the
// spelling the list uses, and the venue's adapter sends the venue's own.

// validateSymbolTables checks every [symbols.KIND] table.
func validateSymbolTables(tables map[string]map[string]string) error {
	for _, kind := range slices.Sorted(maps.Keys(tables)) {
		if _, err := instrument.For(kind, tables[kind]); err != nil {
			return fmt.Errorf("[symbols.%s]: %w", kind, err)
		}
	}
	return nil
}

// resolveVenueSymbols gives v its kind's overrides and checks that its
// kind can spell every listed symbol, each instrument listed once. A
// symbol the kind cannot spell is an error naming what it takes.
func (c *Config) resolveVenueSymbols(v *Venue) error {
	v.SymbolOverrides = c.Symbols[v.Kind]
	m := v.Instruments()
	seen := map[string]string{} // the venue's own → the listed symbol
	for _, s := range v.Symbols {
		own, err := m.Venue(s)
		if err != nil {
			return fmt.Errorf("symbols: %w", err)
		}
		if prev, dup := seen[own]; dup {
			return fmt.Errorf("symbols %s and %s are one instrument at %s (%s): list it once", prev, s, v.Kind, own)
		}
		seen[own] = s
	}
	return nil
}

// Instruments is the venue's symbol map: its kind's table with the
// [symbols.KIND] overrides Validate gave it. A kind without a table (or a
// paper venue) maps every symbol to itself.
func (v Venue) Instruments() instrument.Map {
	kind := v.Kind
	if kind == "" {
		kind = KindPaper
	}
	m, err := instrument.For(kind, v.SymbolOverrides)
	if err != nil {
		return instrument.Map{}
	}
	return m
}

// Resolve is the venue's listed symbol that sym names in either spelling
// (BTCUSDT or BTC-USD for a binance venue listing BTC-USD); false when the
// venue does not list it.
func (v Venue) Resolve(sym string) (string, bool) {
	if slices.Contains(v.Symbols, sym) {
		return sym, true
	}
	m := v.Instruments()
	for _, s := range v.Symbols {
		if m.Same(s, sym) {
			return s, true
		}
	}
	return "", false
}

// Spelling is a listed symbol's two spellings: wicket's and the venue's.
type Spelling struct {
	Canonical string `json:"canonical"`
	Venue     string `json:"venue"`
}

// Spellings maps each listed symbol whose venue spelling differs from
// wicket's to both (BTC-USD → {BTC-USD, BTCUSDT}); nil when none does.
func (v Venue) Spellings() map[string]Spelling {
	m := v.Instruments()
	var out map[string]Spelling
	for _, s := range v.Symbols {
		c, err1 := m.Canonical(s)
		own, err2 := m.Venue(s)
		if err1 != nil || err2 != nil || c == own {
			continue
		}
		if out == nil {
			out = map[string]Spelling{}
		}
		out[s] = Spelling{Canonical: c, Venue: own}
	}
	return out
}

// ProviderInstruments is the symbol map of market data provider name: its
// table with [symbols.NAME].
func (c *Config) ProviderInstruments(name string) (instrument.Map, error) {
	return instrument.For(name, c.Symbols[name])
}
