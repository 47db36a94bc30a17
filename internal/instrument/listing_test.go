package instrument

import (
	"slices"
	"testing"
)

// TestListing: a venue's list read through its map sends either spelling
// as the kind's own and names the kind's own back as the list writes it;
// a symbol the list does not name, or the map cannot spell, passes as it
// is; an error names the kind's spelling with the list's after it.
func TestListing(t *testing.T) {
	l := mustFor(t, BinanceFutures, map[string]string{"SOL-USD": "SOLUSDC"}).Listing([]string{"BTC-USD", "ETHUSDT", "SOL-USD"})
	for in, want := range map[string]string{"BTC-USD": "BTCUSDT", "BTCUSDT": "BTCUSDT", "eth-usd": "ETHUSDT", "SOL-USD": "SOLUSDC", "DOGE USD": "DOGE USD"} {
		if got := l.Venue(in); got != want {
			t.Errorf("Venue(%q) = %q, want %q", in, got, want)
		}
	}
	for own, want := range map[string]string{"BTCUSDT": "BTC-USD", "ETHUSDT": "ETHUSDT", "SOLUSDC": "SOL-USD", "XRPUSDT": "XRPUSDT"} {
		if got := l.Listed(own); got != want {
			t.Errorf("Listed(%q) = %q, want %q", own, got, want)
		}
	}
	if got := l.Venues([]string{"BTC-USD", "ETHUSDT"}); !slices.Equal(got, []string{"BTCUSDT", "ETHUSDT"}) {
		t.Errorf("Venues = %v", got)
	}
	if got := l.Named("BTC-USD"); got != "BTCUSDT (BTC-USD in wicket.toml)" {
		t.Errorf("Named(BTC-USD) = %q", got)
	}
	if got := l.Named("ETHUSDT"); got != "ETHUSDT" {
		t.Errorf("Named(ETHUSDT) = %q", got)
	}
	if l.Map().Kind() != BinanceFutures {
		t.Errorf("Map().Kind() = %q", l.Map().Kind())
	}
	var zero Listing
	if zero.Venue("BTC-USD") != "BTC-USD" || zero.Listed("BTCUSDT") != "BTCUSDT" {
		t.Error("the zero Listing maps symbols")
	}
}
