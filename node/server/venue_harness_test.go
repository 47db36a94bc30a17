package server_test

import (
	"testing"
	"time"

	"wicket/internal/project"
	"wicket/node/alpaca/alpacafake"
	"wicket/node/binance/binancefake"
	"wicket/node/nodetest"
	"wicket/node/venuerig"
)

// The venue end-to-end tests of this package trade through node/venuerig:
// its Binance and Alpaca fakes, the real adapters on them, and a node on
// those. What is this package's own is the venues' usual shape (the
// tables below) and the venueNode the tests drive.

// newBinanceFake is the usual Binance: BTCUSDT and ETHUSDT, 20000 USDT
// and 0.1 BTC.
func newBinanceFake(t testing.TB) *binancefake.Fake {
	t.Helper()
	return venuerig.Binance(t, map[string]string{"USDT": "20000", "BTC": "0.1"}, "BTCUSDT", "ETHUSDT")
}

// binanceVenue is the wicket.toml table of a binance venue on the fake,
// trading BTCUSDT and ETHUSDT.
func binanceVenue(name, env string, mayArm bool, f *binancefake.Fake) venuerig.Venue {
	return venuerig.OnBinance(f, project.Venue{Name: name, Environment: env, MayArm: mayArm, Symbols: []string{"BTCUSDT", "ETHUSDT"}})
}

// alpacaVenue is the wicket.toml table of an alpaca venue "al" on f,
// may_arm, trading symbols (wicket's spelling: BTC-USD).
func alpacaVenue(f *alpacafake.Fake, symbols ...string) venuerig.Venue {
	return venuerig.OnAlpaca(f, project.Venue{Name: "al", MayArm: true, Symbols: symbols})
}

// startWith starts a node with the default paper venue and v, a venue
// timeout of 500 ms and opts; it does not wait for the node to read v.
func startWith(t testing.TB, v venuerig.Venue, opts ...nodetest.Option) *nodetest.Server {
	t.Helper()
	return venuerig.Node(t, project.Defaults(), []venuerig.Venue{v}, append([]nodetest.Option{nodetest.WithVenueTimeout(500 * time.Millisecond)}, opts...)...)
}

// startVenueNode starts a node with the binance venue venue makes on the
// usual Binance fake and waits until it has read it.
func startVenueNode(t testing.TB, venue func(*binancefake.Fake) venuerig.Venue, opts ...nodetest.Option) *venueNode {
	t.Helper()
	f := newBinanceFake(t)
	v := venue(f)
	srv := startWith(t, v, opts...)
	vn := &venueNode{srv: srv, fake: f, c: srv.Client()}
	vn.waitSynced(t, v.Table.Name)
	return vn
}

// startAlpacaVenue starts a node with venue al on f and waits until it
// has read the venue; armed, it arms al for an hour.
func startAlpacaVenue(t testing.TB, f *alpacafake.Fake, armed bool, symbols ...string) *venueNode {
	t.Helper()
	srv := startWith(t, alpacaVenue(f, symbols...))
	vn := &venueNode{srv: srv, c: srv.Client()}
	vn.waitSynced(t, "al")
	if armed {
		vn.arm(t, "al", time.Hour)
	}
	return vn
}
