package project

import (
	"fmt"
	"github.com/shopspring/decimal"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Venue kinds.
const (
	KindPaper   = "paper"
	KindAlpaca  = "alpaca"
	KindBinance = "binance"
	// KindBinanceFutures is Binance USDⓈ-M perpetual futures (contracts.go).
	KindBinanceFutures = "binance-futures"
)

// Environments of real venues. Live is real money.
const (
	EnvPaper   = "paper"   // alpaca's paper-trading account (the default)
	EnvTestnet = "testnet" // binance's spot testnet (the default)
	EnvLive    = "live"    // a real-money account
)

// venueKinds lists each kind with its environments, the default first.
var venueKinds = map[string][]string{
	KindPaper:          nil,
	KindAlpaca:         {EnvPaper, EnvLive},
	KindBinance:        {EnvTestnet, EnvLive},
	KindBinanceFutures: {EnvTestnet, EnvLive},
}

// Keys of the real venues' accounts, read from the environment or
// secrets.env like the node keys. They never appear in any output.
// Alpaca's account keys are the same pair as its market data keys
// (KeyAlpacaID, KeyAlpacaSecret in secrets.go).
const (
	KeyBinanceAPIKey    = "WICKET_BINANCE_API_KEY"
	KeyBinanceAPISecret = "WICKET_BINANCE_API_SECRET"
	// A futures account's keys (Binance's futures testnet issues its own).
	KeyBinanceFuturesAPIKey    = "WICKET_BINANCE_FUTURES_API_KEY"
	KeyBinanceFuturesAPISecret = "WICKET_BINANCE_FUTURES_API_SECRET"
)

// VenueKeys lists, per real kind, the key names its account needs (id
// first, then secret).
var VenueKeys = map[string][2]string{
	KindAlpaca:         {KeyAlpacaID, KeyAlpacaSecret},
	KindBinance:        {KeyBinanceAPIKey, KeyBinanceAPISecret},
	KindBinanceFutures: {KeyBinanceFuturesAPIKey, KeyBinanceFuturesAPISecret},
}

// Real reports whether the venue is a real account (not simulated).
func (v Venue) Real() bool { return v.Kind != KindPaper }

// Live reports whether the venue trades real money.
func (v Venue) Live() bool { return v.Real() && v.Environment == EnvLive }

// validateKind checks kind, environment, may_arm and base_url, fills the
// default environment, and refuses paper-only keys on a real venue (whose
// cash, fees and prices are the venue's own).
func (v *Venue) validateKind() error {
	switch {
	case v.MaxDailyLoss.IsNegative():
		return fmt.Errorf("max_daily_loss %s: give the most the venue may lose in a UTC day as a positive amount (a string such as \"500\"), or leave the key out for none", v.MaxDailyLoss)
	case v.MaxDrawdownPct.IsNegative() || v.MaxDrawdownPct.GreaterThanOrEqual(decimal.NewFromInt(100)):
		return fmt.Errorf("max_drawdown_pct %s: give a percent above 0 and under 100 (a string such as \"10\"), or leave the key out for none", v.MaxDrawdownPct)
	}
	envs, ok := venueKinds[v.Kind]
	if !ok {
		return fmt.Errorf("kind %q is not supported (valid: %s, %s, %s, %s)", v.Kind, KindPaper, KindAlpaca, KindBinance, KindBinanceFutures)
	}
	if err := v.validateContracts(); err != nil {
		return err
	}
	if v.Kind == KindPaper {
		switch {
		case v.Environment != "":
			return fmt.Errorf("environment %q: a paper venue has no environment (it is simulated); remove the key", v.Environment)
		case v.MayArm:
			return fmt.Errorf("may_arm: a paper venue needs no arming; remove the key")
		case v.BaseURL != "":
			return fmt.Errorf("base_url: a paper venue reaches no API; remove the key")
		}
		return v.validateMarks()
	}
	if v.Environment == "" {
		v.Environment = envs[0]
	}
	if !slices.Contains(envs, v.Environment) {
		return fmt.Errorf("environment %q is not one of %s's: %s (%s is real money)", v.Environment, v.Kind, strings.Join(envs, ", "), EnvLive)
	}
	if v.BaseURL != "" {
		u, err := url.Parse(v.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
			return fmt.Errorf("base_url %q is not an http(s) URL such as https://api.example.com (no credentials, query or fragment)", v.BaseURL)
		}
	}
	switch {
	case !v.Cash.IsZero():
		return fmt.Errorf("cash: a %s venue's cash is the account's own; remove the key", v.Kind)
	case v.FeeBps != 0 || v.SlippageBps != 0:
		return fmt.Errorf("fee_bps / slippage_bps: a %s venue's fees and fills are the venue's own; remove the keys", v.Kind)
	case len(v.StartPrices) > 0:
		return fmt.Errorf("start_prices: a %s venue's marks come from the venue; remove the key", v.Kind)
	case v.Marks != "":
		return fmt.Errorf("marks: a %s venue's marks come from the venue; remove the key", v.Kind)
	case v.MaxMarkAge != 0:
		return fmt.Errorf("max_mark_age: a %s venue's marks come from the venue; remove the key", v.Kind)
	}
	return nil
}

// venueKeyNames lists every real venue kind's key names, in a fixed order.
func venueKeyNames() []string {
	return []string{KeyAlpacaID, KeyAlpacaSecret, KeyBinanceAPIKey, KeyBinanceAPISecret, KeyBinanceFuturesAPIKey, KeyBinanceFuturesAPISecret}
}

// validateMarks checks a paper venue's marks key: empty (the simulation:
// the seeded random walk or a replay) or a market data provider, whose last
// trade price then feeds the marks.
func (v *Venue) validateMarks() error {
	switch {
	case v.Marks == "" && v.MaxMarkAge != 0:
		return fmt.Errorf("max_mark_age bounds the age of a fed venue's marks, and this venue's are simulated; add marks = %q or remove the key", ProviderNames[0])
	case v.Marks == "":
		return nil
	case !slices.Contains(ProviderNames, v.Marks):
		return fmt.Errorf("marks %q is not a mark source (valid: %s, the provider's last trade price; leave the key out for simulated marks)",
			v.Marks, strings.Join(ProviderNames, ", "))
	case v.MaxMarkAge == 0:
		v.MaxMarkAge = DefaultMaxMarkAge
	case v.MaxMarkAge < time.Second:
		return fmt.Errorf("max_mark_age %s is under a second; write a duration such as \"5s\" (a bare number counts nanoseconds)", v.MaxMarkAge)
	}
	return nil
}

// DefaultMaxMarkAge is how old a fed paper venue's mark may be, unless its
// max_mark_age says otherwise, and still fill or trigger an order.
const DefaultMaxMarkAge = 5 * time.Second
