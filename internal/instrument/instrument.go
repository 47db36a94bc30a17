// Package instrument is wicket's one instrument model: a symbol is written
// one way everywhere (BTC-USD, ETH-BTC, SPY), and each venue and provider
// kind maps it to its own spelling (BTCUSDT at Binance, BTC/USD at Alpaca
// crypto) and back, from one table per kind, overridable per kind in
// wicket.toml ([symbols.KIND]).
//
// Both the node's venue adapters and the strategy's market data providers
// use it, so it never imports a domain package. It never reaches a venue
// or a file: whether a venue lists a symbol is the adapter's to ask.
package instrument

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Kinds with a table. Venue and provider kinds share one name where they
// are the same market (the binance provider and a binance venue).
const (
	Paper          = "paper"
	Binance        = "binance"
	BinanceFutures = "binance-futures"
	Alpaca         = "alpaca"
)

// table is one kind's spelling rule.
type table struct {
	// identity: the kind has no spelling of its own (paper).
	identity bool
	// pairs: the kind takes crypto pairs BASE-QUOTE; sep joins them in
	// its own spelling ("" for BTCUSDT, "/" for BTC/USD).
	pairs bool
	sep   string
	// quotes maps a canonical quote to the kind's (USD → USDT); one the
	// map leaves out is written as it is.
	quotes map[string]string
	// ownQuotes are the quote assets read off the end of an unseparated
	// own symbol, longest first (FDUSD before USD-suffixed ones).
	ownQuotes []string
	// stocks: plain tickers (SPY, BRK.B) pass as they are.
	stocks bool
	// accepts says what the kind takes, for an error.
	accepts string
}

var binanceTable = table{
	pairs:     true,
	quotes:    map[string]string{"USD": "USDT"},
	ownQuotes: []string{"FDUSD", "USDT", "USDC", "TUSD", "BUSD", "BTC", "ETH", "BNB", "EUR", "TRY", "BRL", "JPY", "GBP", "DAI"},
	accepts:   "crypto pairs BASE-QUOTE such as BTC-USD (BTCUSDT), ETH-BTC (ETHBTC) or SOL-USDC (SOLUSDC), binance quoting dollars in USDT, or binance's own spelling (BTCUSDT)",
}

// tables is the one table per kind.
var tables = map[string]table{
	Paper:          {identity: true},
	Binance:        binanceTable,
	BinanceFutures: binanceTable,
	Alpaca: {
		pairs: true, sep: "/", stocks: true,
		accepts: "US stock tickers (SPY, BRK.B) and crypto pairs BASE-QUOTE such as BTC-USD (alpaca's BTC/USD), or alpaca's own spelling (BTC/USD)",
	},
}

// Kinds lists the kinds with a table, sorted.
func Kinds() []string { return slices.Sorted(maps.Keys(tables)) }

// Map is one kind's table with wicket.toml's overrides. The zero Map is
// paper's: every symbol as written.
type Map struct {
	kind    string
	t       table
	toVenue map[string]string // override: canonical → the kind's own
	toCanon map[string]string // override: the kind's own → canonical
}

// For returns kind's map with overrides (canonical symbol → the kind's own
// spelling, as [symbols.KIND] in wicket.toml writes them), which win over
// the table both ways. An unknown kind, or an override that is not a
// canonical symbol mapped to a plain one, is an error naming the fix.
func For(kind string, overrides map[string]string) (Map, error) {
	t, ok := tables[kind]
	if !ok {
		return Map{}, fmt.Errorf("no symbol table for kind %q (kinds: %s)", kind, strings.Join(Kinds(), ", "))
	}
	m := Map{kind: kind, t: t}
	if len(overrides) == 0 {
		return m, nil
	}
	if t.identity {
		return Map{}, fmt.Errorf("a %s venue trades its symbols as written and takes no symbol overrides; remove [symbols.%s]", kind, kind)
	}
	m.toVenue, m.toCanon = map[string]string{}, map[string]string{}
	for _, canon := range slices.Sorted(maps.Keys(overrides)) {
		own := overrides[canon]
		if !canonical(canon) {
			return Map{}, fmt.Errorf("symbols.%s: %q is not a wicket symbol: write the key as wicket writes it, a pair BASE-QUOTE (BTC-USD) or a ticker (SPY), upper case", kind, canon)
		}
		if !plain(own) {
			return Map{}, fmt.Errorf("symbols.%s.%s: %q is not a symbol: give the %s spelling, letters, digits and . / _ - only", kind, canon, own, kind)
		}
		if prev, dup := m.toCanon[own]; dup {
			return Map{}, fmt.Errorf("symbols.%s: %s and %s both map to %s; one %s symbol has one wicket spelling", kind, prev, canon, own, kind)
		}
		m.toVenue[canon], m.toCanon[own] = own, canon
	}
	return m, nil
}

// Kind is the map's kind ("paper" for the zero Map).
func (m Map) Kind() string {
	if m.kind == "" {
		return Paper
	}
	return m.kind
}

// Venue is sym, written either way, in the kind's own spelling:
// BTC-USD → BTCUSDT at binance, BTC/USD at alpaca; BTCUSDT stays BTCUSDT.
func (m Map) Venue(sym string) (string, error) {
	if own, ok := m.toVenue[sym]; ok {
		return own, nil
	}
	if _, ok := m.toCanon[sym]; ok || m.t.identity || m.kind == "" {
		return sym, nil
	}
	if base, quote, ok := pair(sym); ok && m.t.pairs {
		if q, ok := m.t.quotes[quote]; ok {
			quote = q
		}
		return base + m.t.sep + quote, nil
	}
	if base, quote, ok := m.own(sym); ok {
		return base + m.t.sep + quote, nil
	}
	if m.t.stocks && ticker(sym) {
		return sym, nil
	}
	return "", m.refuse(sym)
}

// Canonical is sym, written either way, in wicket's spelling: BTCUSDT →
// BTC-USD at binance, BTC/USD → BTC-USD at alpaca; BTC-USD stays BTC-USD.
func (m Map) Canonical(sym string) (string, error) {
	if canon, ok := m.toCanon[sym]; ok {
		return canon, nil
	}
	if _, ok := m.toVenue[sym]; ok || m.t.identity || m.kind == "" {
		return sym, nil
	}
	if base, quote, ok := pair(sym); ok && m.t.pairs {
		return base + "-" + quote, nil
	}
	if base, quote, ok := m.own(sym); ok {
		c := base + "-" + quote
		for cq, q := range m.t.quotes {
			if q == quote {
				c = base + "-" + cq
			}
		}
		if o, over := m.toVenue[c]; over && o != base+m.t.sep+quote {
			c = base + "-" + quote // BTC-USD is overridden to another symbol: this one is BTC-USDT
		}
		return c, nil
	}
	if m.t.stocks && ticker(sym) {
		return sym, nil
	}
	return "", m.refuse(sym)
}

// Same reports whether a and b, each written either way, are one
// instrument of the kind.
func (m Map) Same(a, b string) bool {
	va, err := m.Venue(a)
	if err != nil {
		return a == b
	}
	vb, err := m.Venue(b)
	return err == nil && va == vb
}

// Both is sym as wicket writes it with the kind's own spelling after it
// when that differs: "BTC-USD (BTCUSDT)"; "SPY"; sym itself when the kind
// cannot map it.
func (m Map) Both(sym string) string {
	c, err := m.Canonical(sym)
	if err != nil {
		return sym
	}
	v, err := m.Venue(sym)
	if err != nil || v == c {
		return c
	}
	return c + " (" + v + ")"
}

// own reads sym as the kind's own spelling of a pair: BASE/QUOTE with the
// kind's separator, or BASE+QUOTE ending in a known quote asset.
func (m Map) own(sym string) (base, quote string, ok bool) {
	if !m.t.pairs {
		return "", "", false
	}
	up := strings.ToUpper(sym)
	if m.t.sep != "" {
		base, quote, ok = strings.Cut(up, m.t.sep)
		if !ok || !alnum(base) || !alnum(quote) {
			return "", "", false
		}
		return base, quote, true
	}
	for _, q := range m.t.ownQuotes {
		if b, ok := strings.CutSuffix(up, q); ok && alnum(b) {
			return b, q, true
		}
	}
	return "", "", false
}

func (m Map) refuse(sym string) error {
	return fmt.Errorf("%s has no symbol %q: %s takes %s; or map it in [symbols.%s] of wicket.toml (\"BTC-USD\" = \"BTCUSDT\")",
		m.Kind(), sym, m.Kind(), m.t.accepts, m.Kind())
}

// pair splits a canonical pair BASE-QUOTE (either case; the parts come
// back upper case).
func pair(sym string) (base, quote string, ok bool) {
	base, quote, ok = strings.Cut(sym, "-")
	if !ok || !alnum(base) || !alnum(quote) {
		return "", "", false
	}
	return strings.ToUpper(base), strings.ToUpper(quote), true
}

// Pair splits a wicket pair symbol BASE-QUOTE (BTC-USD), upper-casing
// its parts; ok is false for a ticker (SPY) or anything else.
func Pair(sym string) (base, quote string, ok bool) { return pair(sym) }

// canonical: an upper-case pair or ticker, as wicket writes symbols.
func canonical(sym string) bool {
	if b, q, ok := pair(sym); ok {
		return sym == b+"-"+q
	}
	return ticker(sym)
}

// ticker: an upper-case stock ticker (SPY, BRK.B).
func ticker(sym string) bool {
	main, class, dotted := strings.Cut(sym, ".")
	if len(main) == 0 || len(main) > 6 || main[0] < 'A' || main[0] > 'Z' || !upperAlnum(main) {
		return false
	}
	return !dotted || (len(class) >= 1 && len(class) <= 2 && upperAlnum(class) && !strings.ContainsAny(class, "0123456789"))
}

func upperAlnum(s string) bool {
	for _, r := range s {
		if !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

func alnum(s string) bool {
	for _, r := range s {
		if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

// plain: a venue spelling wicket can carry: 1 to 32 of [A-Za-z0-9./_-].
func plain(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for _, r := range s {
		if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune("./_-", r)) {
			return false
		}
	}
	return true
}
