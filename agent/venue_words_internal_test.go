package agent

import (
	"strings"
	"testing"
	"time"

	"wicket/node"
	"wicket/node/command"
)

// TestVenueWords: the approval text states each venue's environment and
// armed state in plain words, a live venue first, from what the preview's
// snapshot showed.
func TestVenueWords(t *testing.T) {
	until := time.Date(2026, 12, 1, 11, 30, 0, 0, time.UTC)
	snap := &node.Snapshot{TradingState: "active", Venues: []node.Venue{
		{Name: "paper", Kind: "paper", Environment: "paper", Armed: true, Currency: "USD"},
		{Name: "alp", Kind: "alpaca", Environment: "paper", Currency: "USD"},
		{Name: "bn", Kind: "binance", Environment: "testnet", Armed: true, ArmedUntil: until, Currency: "USDT"},
		{Name: "bnlive", Kind: "binance", Environment: "live", Armed: true, ArmedUntil: until, Currency: "USDT"},
	}}
	pv := func(names ...string) []node.PreviewVenue {
		var out []node.PreviewVenue
		for _, v := range snap.Venues {
			for _, n := range names {
				if v.Name == n {
					out = append(out, node.PreviewVenue{Name: v.Name, Kind: v.Kind, Environment: v.Environment, Armed: v.Armed, ArmedUntil: v.ArmedUntil})
				}
			}
		}
		return out
	}
	for _, tc := range []struct {
		venue  string
		venues []node.PreviewVenue
		want   []string
		prefix string
	}{
		{"paper", pv("paper"), []string{"environment paper (simulated by the node; nothing reaches an exchange)", "armed (a paper venue always is)", "currency USD", "node trading state active"}, "paper (paper venue)"},
		{"alp", pv("alp"), []string{"environment paper (the broker's paper account; no real money)", "DISARMED: the node refuses its orders until an operator arms it"}, "alp (alpaca venue)"},
		{"bn", pv("bn"), []string{"environment testnet (the exchange's test network; no real money)", "armed by an operator until 2026-12-01 11:30:00 UTC", "currency USDT"}, "bn (binance venue)"},
		{"bnlive", pv("bnlive"), []string{"environment LIVE (real money)", "armed by an operator until 2026-12-01 11:30:00 UTC"}, "LIVE VENUE, REAL MONEY: bnlive (binance venue)"},
		// A market_exit on every venue: the live one is said first.
		{"", pv("paper", "alp", "bn", "bnlive"), []string{"; paper (paper venue)", "; alp (alpaca venue)", "; bn (binance venue)"}, "LIVE VENUE, REAL MONEY: bnlive"},
		{"gone", nil, []string{"gone: not in the node's snapshot"}, "gone"},
	} {
		got := venueWords(node.Preview{Command: command.Command{Venue: tc.venue}, Venues: tc.venues}, snap)
		if !strings.HasPrefix(got, tc.prefix) {
			t.Errorf("%q: %q does not start with %q", tc.venue, got, tc.prefix)
		}
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%q: %q lacks %q", tc.venue, got, w)
			}
		}
		if tc.venue != "bnlive" && tc.venue != "" && strings.Contains(got, "LIVE") {
			t.Errorf("%q: a venue that is not live is called live: %q", tc.venue, got)
		}
	}
	if got := venueWords(node.Preview{Command: command.Command{Venue: "bn"}}, nil); !strings.Contains(got, "environment and armed state are unknown") {
		t.Errorf("no snapshot: %q", got)
	}
}
