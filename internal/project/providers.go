package project

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
)

// ProviderConfig is one [providers.NAME] table of wicket.toml: where
// `wicket data fetch` and `wicket data record` reach a market data provider.
// Empty URLs mean the provider's public endpoints.
type ProviderConfig struct {
	BaseURL   string `toml:"base_url"`   // REST endpoint, e.g. https://api.binance.com
	StreamURL string `toml:"stream_url"` // websocket endpoint, e.g. wss://stream.binance.com:9443
	// FuturesURL (binance only): the USDⓈ-M futures REST endpoint funding
	// rates come from, e.g. https://fapi.binance.com.
	FuturesURL string `toml:"futures_url"`
	// Adjustment (alpaca only): raw, split, dividend or all; default split.
	Adjustment string `toml:"adjustment"`
}

// ProviderNames are the providers wicket has a client for.
var ProviderNames = []string{"binance", "alpaca"}

// AlpacaAdjustments are the values [providers.alpaca] adjustment accepts.
var AlpacaAdjustments = []string{"raw", "split", "dividend", "all"}

// Provider returns the [providers.NAME] table (zero when absent).
func (c *Config) Provider(name string) ProviderConfig { return c.Providers[name] }

func validateProviders(ps map[string]ProviderConfig) error {
	names := make([]string, 0, len(ps))
	for n := range ps {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		p := ps[n]
		if !slices.Contains(ProviderNames, n) {
			return fmt.Errorf("[providers.%s]: unknown provider (valid: %s)", n, strings.Join(ProviderNames, ", "))
		}
		if err := checkEndpoint(p.BaseURL, "http"); err != nil {
			return fmt.Errorf("providers.%s.base_url: %w", n, err)
		}
		if err := checkEndpoint(p.StreamURL, "ws"); err != nil {
			return fmt.Errorf("providers.%s.stream_url: %w", n, err)
		}
		if err := checkEndpoint(p.FuturesURL, "http"); err != nil {
			return fmt.Errorf("providers.%s.futures_url: %w", n, err)
		}
		if p.FuturesURL != "" && n != "binance" {
			return fmt.Errorf("providers.%s.futures_url: only binance has a futures endpoint", n)
		}
		if p.Adjustment != "" {
			if n != "alpaca" {
				return fmt.Errorf("providers.%s.adjustment: only alpaca has an adjustment", n)
			}
			if !slices.Contains(AlpacaAdjustments, p.Adjustment) {
				return fmt.Errorf("providers.alpaca.adjustment %q is not one of %s", p.Adjustment, strings.Join(AlpacaAdjustments, ", "))
			}
		}
	}
	return nil
}

// checkEndpoint accepts an empty value (the default) or an absolute URL of
// scheme kind ("http" or "ws") with a host and nothing but a path: TLS
// (https, wss) except on a loopback host, no user info, query or fragment.
func checkEndpoint(raw, kind string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%q is not a URL: %v", raw, err)
	}
	secure, plain := kind+"s", kind
	if u.Scheme != secure && u.Scheme != plain {
		return fmt.Errorf("%q must start with %s:// (or %s:// on a loopback host)", raw, secure, plain)
	}
	if u.Host == "" || u.Hostname() == "" {
		return fmt.Errorf("%q has no host", raw)
	}
	if u.User != nil {
		return fmt.Errorf("%q carries user info; keys belong in secrets.env, never in wicket.toml", raw)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return fmt.Errorf("%q must not have a query or fragment", raw)
	}
	if u.Scheme == plain && !loopbackHost(u.Hostname()) {
		return fmt.Errorf("%q is not encrypted; use %s:// (plain %s:// only on a loopback host)", raw, secure, plain)
	}
	return nil
}

func loopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
