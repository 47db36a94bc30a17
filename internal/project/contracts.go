package project

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/shopspring/decimal"
)

// Margin types of a futures contract (Binance USDⓈ-M: ISOLATED, CROSSED).
const (
	MarginIsolated = "isolated"
	MarginCross    = "cross"
)

// DefaultMarginType is a contract's margin type unless wicket.toml says
// otherwise: isolated, so a position can lose at most its own margin.
const DefaultMarginType = MarginIsolated

// MaxVenueLeverage is the most leverage any binance-futures contract
// takes (Binance's own ceiling; a symbol's bracket may allow less).
const MaxVenueLeverage = 125

// Contract is one futures symbol's settings: the leverage and margin type
// the adapter sets at start and checks, and the most leverage the
// guardrail lets it use.
type Contract struct {
	Leverage    int    `toml:"leverage"`     // default 1
	MarginType  string `toml:"margin_type"`  // isolated (the default) or cross
	MaxLeverage int    `toml:"max_leverage"` // guardrail cap; 0: the venue's max_leverage
}

// Futures are a binance-futures venue's keys beside the common ones:
//
//	[[venues]]
//	name = "perps"
//	kind = "binance-futures"
//	symbols = ["BTCUSDT"]
//	max_leverage = 5                      # guardrail: no contract above it
//	min_liquidation_distance_pct = "10"   # guardrail: an order that opens or adds keeps the liquidation price this far from the mark
//	flip = "refuse"                       # an order that would take a position through zero: refuse | split (flip.go)
//	[venues.contracts.BTCUSDT]
//	leverage = 3
//	margin_type = "isolated"
type Futures struct {
	Contracts                 map[string]Contract `toml:"contracts"`
	MaxLeverage               int                 `toml:"max_leverage"`
	MinLiquidationDistancePct decimal.Decimal     `toml:"min_liquidation_distance_pct"`
	Flip                      string              `toml:"flip"` // FlipRefuse (the default) or FlipSplit
}

// Contract is symbol's settings with the defaults filled in; symbol and
// the contracts' keys may each be written either way (BTC-USD or BTCUSDT).
func (v Venue) Contract(symbol string) Contract {
	c := v.Contracts[v.contractKey(symbol)]
	if c.Leverage == 0 {
		c.Leverage = 1
	}
	if c.MarginType == "" {
		c.MarginType = DefaultMarginType
	}
	if c.MaxLeverage == 0 {
		c.MaxLeverage = v.MaxLeverage
	}
	return c
}

// contractKey is the key of v.Contracts that names symbol's instrument in
// either spelling; symbol itself when none does.
func (v Venue) contractKey(symbol string) string {
	if _, ok := v.Contracts[symbol]; ok || len(v.Contracts) == 0 {
		return symbol
	}
	m := v.Instruments()
	for k := range v.Contracts { // validateContractSymbols lets one key at most name an instrument
		if m.Same(k, symbol) {
			return k
		}
	}
	return symbol
}

// validateContracts checks the futures keys: only on a binance-futures
// venue, leverage within 1..125, a known margin type, and a distance
// under 100 %. validateContractSymbols checks the contracts against the
// symbols once their spellings are resolved.
func (v *Venue) validateContracts() error {
	if v.Kind != KindBinanceFutures {
		switch {
		case len(v.Contracts) > 0:
			return fmt.Errorf("contracts: only a %s venue has contracts (leverage, margin type); remove the table", KindBinanceFutures)
		case v.MaxLeverage != 0:
			return fmt.Errorf("max_leverage: only a %s venue trades with leverage; remove the key", KindBinanceFutures)
		case !v.MinLiquidationDistancePct.IsZero():
			return fmt.Errorf("min_liquidation_distance_pct: only a %s venue has a liquidation price; remove the key", KindBinanceFutures)
		case v.Flip != "":
			return fmt.Errorf("flip: only a %s venue holds a position one order can take through zero; remove the key", KindBinanceFutures)
		}
		return nil
	}
	if v.MaxLeverage < 0 || v.MaxLeverage > MaxVenueLeverage {
		return fmt.Errorf("max_leverage %d: give a whole number from 1 to %d, or leave the key out for none", v.MaxLeverage, MaxVenueLeverage)
	}
	if v.MinLiquidationDistancePct.IsNegative() || v.MinLiquidationDistancePct.GreaterThanOrEqual(decimal.NewFromInt(100)) {
		return fmt.Errorf("min_liquidation_distance_pct %s: give a percent from 0 to under 100 (a string such as \"10\")", v.MinLiquidationDistancePct)
	}
	if err := v.validateFlip(); err != nil {
		return err
	}
	for _, s := range slices.Sorted(maps.Keys(v.Contracts)) {
		c := v.Contracts[s]
		if c.MarginType != "" && c.MarginType != MarginIsolated && c.MarginType != MarginCross {
			return fmt.Errorf("contracts.%s.margin_type %q: write %q or %q", s, c.MarginType, MarginIsolated, MarginCross)
		}
		if c.Leverage < 0 || c.Leverage > MaxVenueLeverage || c.MaxLeverage < 0 || c.MaxLeverage > MaxVenueLeverage {
			return fmt.Errorf("contracts.%s: leverage and max_leverage are whole numbers from 1 to %d", s, MaxVenueLeverage)
		}
	}
	return nil
}

// validateContractSymbols checks, once the venue's symbol map is resolved,
// that each contract names one of the venue's symbols in either spelling
// (contracts.BTCUSDT for a listed BTC-USD), no two name one instrument,
// and each symbol's leverage is within its cap.
func (v *Venue) validateContractSymbols() error {
	if len(v.Contracts) == 0 {
		return nil
	}
	m := v.Instruments()
	named := map[string]string{} // the listed symbol → the contract naming it
	for _, s := range slices.Sorted(maps.Keys(v.Contracts)) {
		listed, ok := v.Resolve(s)
		if !ok {
			return fmt.Errorf("contracts.%s: %s is not in the venue's symbols (%s); add it there, in either spelling (BTC-USD or BTCUSDT), or remove the contract",
				s, s, strings.Join(v.Symbols, ", "))
		}
		if prev, dup := named[listed]; dup {
			return fmt.Errorf("contracts.%s and contracts.%s are one contract, %s: keep one table", prev, s, m.Both(listed))
		}
		named[listed] = s
	}
	for _, s := range v.Symbols {
		if c := v.Contract(s); c.MaxLeverage > 0 && c.Leverage > c.MaxLeverage {
			return fmt.Errorf("contracts.%s.leverage %d is above its max_leverage %d; lower the leverage or raise the cap", v.contractKey(s), c.Leverage, c.MaxLeverage)
		}
	}
	return nil
}
