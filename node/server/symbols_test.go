package server_test

import (
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node/nodetest"
	"wicket/node/server"
	"wicket/node/venuerig"
)

// TestUnknownSymbolStopsTheStart: a venue configured with a symbol it
// does not list (DOGE-USD on a Binance without DOGEUSDT, a slashless
// BTCUSD on Alpaca) stops the node at start, and the error names the
// venue's own spelling of it, and the symbol to write instead where there
// is one; such a venue could never be traded.
func TestUnknownSymbolStopsTheStart(t *testing.T) {
	bf := venuerig.Binance(t, map[string]string{"USDT": "20000"}, "BTCUSDT", "ETHUSDT")
	af := venuerig.Alpaca(t, "50000", "SPY", "BTC/USD")
	for _, tc := range []struct {
		v    venuerig.Venue
		want []string
	}{
		{venuerig.OnBinance(bf, project.Venue{Name: "bn", Symbols: []string{"ETHUSDT", "DOGE-USD"}}),
			[]string{"venue bn", "binance does not list DOGEUSDT (DOGE-USD in wicket.toml)"}},
		{venuerig.OnAlpaca(af, project.Venue{Name: "al", Symbols: []string{"SPY", "BTCUSD"}}),
			[]string{"venue al", "no asset BTCUSD", "written BTC-USD in wicket.toml"}},
	} {
		tc.v.Timeout = time.Second
		cfg := project.Defaults()
		cfg.Venues = append(cfg.Venues, tc.v.Table)
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		vc, _ := cfg.Venue(tc.v.Table.Name)
		ex, err := tc.v.Adapter(vc)
		if err != nil {
			t.Fatal(err)
		}
		srv, err := server.New(server.Config{Project: cfg, JournalPath: filepath.Join(t.TempDir(), "node.db"), ObserveKey: testkit.Secret(t, 16), ControlKey: testkit.Secret(t, 16),
			Exchanges: map[string]server.Exchange{vc.Name: ex}, VenueTimeout: 2 * time.Second})
		if err == nil {
			srv.Close()
			t.Errorf("%s: a node started with symbols %v", vc.Name, vc.Symbols)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: the start's error %q does not say %q", vc.Name, err, w)
			}
		}
	}
}

// TestInstrumentsReadAgainWithoutTheStream: a venue unreachable at start
// gets its instruments (and then its account) from the polls once it
// answers, even while its stream stays refused, so it does not wait for a
// stream reconnect that may never come.
func TestInstrumentsReadAgainWithoutTheStream(t *testing.T) {
	f := venuerig.Binance(t, map[string]string{"USDT": "20000"}, "BTCUSDT")
	f.Fail5xx(1 << 20)
	f.RefuseStreams(503, -1008, "Server is currently overloaded with other requests.")
	logs := &syncBuffer{}
	v := venuerig.OnBinance(f, project.Venue{Name: "bn", MayArm: true, Symbols: []string{"BTCUSDT"}})
	v.Timeout = time.Second
	srv := startWith(t, v, nodetest.WithVenueTimeout(300*time.Millisecond), nodetest.WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
	vn := &venueNode{srv: srv, fake: f, c: srv.Client()}
	// The start's reconciliation has tried and failed; nothing else reads the instruments but the polls.
	waitFor(t, "the start's reconciliation", func() bool { return strings.Contains(logs.String(), "venue reconciled") })
	if v := vn.venue(t, "bn"); len(v.Instruments) != 0 {
		t.Fatalf("instruments of an unreachable venue: %+v", v.Instruments)
	}
	f.Fail5xx(0)
	waitFor(t, "the instruments and account from the polls", func() bool {
		v := vn.venue(t, "bn")
		return len(v.Instruments) == 1 && v.Account != ""
	})
	if v := vn.venue(t, "bn"); v.Connection != "disconnected" || f.Subscriptions() != 0 {
		t.Errorf("the stream came back (%s, %d subscriptions), so the test proved nothing", v.Connection, f.Subscriptions())
	}
}
