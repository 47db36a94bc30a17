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
)

// TestUnknownSymbolStopsTheStart: a venue configured with a symbol it
// does not list (a wicket-style BTC-USD on Binance, a slashless BTCUSD on
// Alpaca) stops the node at start, and the error names the venue's own
// symbol to write instead; such a venue could never be traded.
func TestUnknownSymbolStopsTheStart(t *testing.T) {
	bf := binanceFake(t, map[string]string{"USDT": "20000"}, "BTCUSDT", "ETHUSDT")
	af := alpacaFake(t, "50000", "SPY", "BTC/USD")
	for _, tc := range []struct {
		vc    project.Venue
		adapt func(project.Venue) (server.Exchange, error)
		want  []string
	}{
		{project.Venue{Name: "bn", Kind: project.KindBinance, BaseURL: bf.URL, Symbols: []string{"ETHUSDT", "BTC-USD"}},
			onBinance(bf, time.Second), []string{"venue bn", "BTC-USD (binance's symbol for it is BTCUSDT)"}},
		{project.Venue{Name: "al", Kind: project.KindAlpaca, BaseURL: af.URL, Symbols: []string{"SPY", "BTCUSD"}},
			onAlpaca(af, time.Second), []string{"venue al", "no asset BTCUSD", "written BTC-USD in wicket.toml"}},
	} {
		cfg := project.Defaults()
		cfg.Venues = append(cfg.Venues, tc.vc)
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		vc, _ := cfg.Venue(tc.vc.Name)
		ex, err := tc.adapt(vc)
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
	f := binanceFake(t, map[string]string{"USDT": "20000"}, "BTCUSDT")
	f.Fail5xx(1 << 20)
	f.RefuseStreams(503, -1008, "Server is currently overloaded with other requests.")
	logs := &syncBuffer{}
	srv, _ := startWith(t, project.Venue{Name: "bn", Kind: project.KindBinance, MayArm: true, BaseURL: f.URL, Symbols: []string{"BTCUSDT"}},
		onBinance(f, time.Second), nodetest.WithVenueTimeout(300*time.Millisecond), nodetest.WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
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
