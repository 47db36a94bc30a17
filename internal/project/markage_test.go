package project

import (
	"strings"
	"testing"
	"time"
)

// TestMaxMarkAge: a fed paper venue bounds its marks' age (5s unless set);
// the key on a simulated or real venue, or a bare number, is refused.
func TestMaxMarkAge(t *testing.T) {
	parse := func(body string) (Venue, error) {
		cfg, err := ParseConfig("wicket.toml", []byte("[[venues]]\nname = \"v\"\nsymbols = [\"BTC-USD\"]\n"+body+"\n"))
		if err != nil {
			return Venue{}, err
		}
		return cfg.Venues[0], nil
	}
	for body, want := range map[string]time.Duration{
		"marks = \"binance\"":                        DefaultMaxMarkAge,
		"marks = \"alpaca\"\nmax_mark_age = \"12s\"": 12 * time.Second,
		"marks = \"binance\"\nmax_mark_age = \"1m\"": time.Minute,
		"": 0,
	} {
		v, err := parse(body)
		if err != nil || v.MaxMarkAge != want {
			t.Errorf("%q: max_mark_age %s, %v; want %s", body, v.MaxMarkAge, err, want)
		}
	}
	for _, tc := range []struct{ body, want string }{
		{"max_mark_age = \"5s\"", "max_mark_age bounds the age of a fed venue's marks, and this venue's are simulated; add marks = \"binance\" or remove the key"},
		{"kind = \"binance\"\nmax_mark_age = \"5s\"", "max_mark_age: a binance venue's marks come from the venue; remove the key"},
		{"marks = \"binance\"\nmax_mark_age = 5", `max_mark_age 5ns is under a second; write a duration such as "5s"`},
		{"marks = \"binance\"\nmax_mark_age = \"-5s\"", "max_mark_age -5s is under a second"},
		{"marks = \"binance\"\nmax_mark_age = \"soon\"", `wicket.toml:5:17: invalid duration: "soon"`},
	} {
		if _, err := parse(tc.body); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want %q", tc.body, err, tc.want)
		}
	}
}
