package deploy

import (
	"context"
	"crypto/ed25519"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/node/nodetest"
	"wicket/node/venuerig"
)

// realVenue is a real venue of the node, behind the fake of its API.
type realVenue struct {
	name, series string
	venue        venuerig.Venue
	orders       func() int // the orders the fake venue took
}

func binanceVenue(t *testing.T) realVenue {
	f := venuerig.Binance(t, map[string]string{"USDT": "20000"}, "BTCUSDT")
	return realVenue{name: "bn", series: "BTCUSDT@1m",
		venue:  venuerig.OnBinance(f, project.Venue{Name: "bn", Environment: "testnet", MayArm: true, Symbols: []string{"BTCUSDT"}}),
		orders: func() int { return len(f.Orders()) }}
}

func alpacaVenue(t *testing.T) realVenue {
	f := venuerig.Alpaca(t, "20000", "BTC/USD")
	return realVenue{name: "al", series: "BTC-USD@1m",
		venue:  venuerig.OnAlpaca(f, project.Venue{Name: "al", Environment: "paper", MayArm: true, Symbols: []string{"BTC-USD"}}),
		orders: func() int { return len(f.Orders()) }}
}

// TestDeployAutoOnRealVenueNeedsBothArmed: on a Binance and on an Alpaca
// venue (the fakes of their APIs), auto is refused while the venue is
// disarmed; once the venue is armed it deploys, but sends nothing while
// the deployment is disarmed; armed by the operator it sends one order;
// after a restart its arming has lapsed and it sends nothing.
func TestDeployAutoOnRealVenueNeedsBothArmed(t *testing.T) {
	for _, v := range []struct {
		name string
		make func(*testing.T) realVenue
	}{{"binance", binanceVenue}, {"alpaca", alpacaVenue}} {
		t.Run(v.name, func(t *testing.T) { autoNeedsBothArmed(t, v.make(t)) })
	}
}

func autoNeedsBothArmed(t *testing.T, rv realVenue) {
	// The node has read the venue when Start returns.
	ns := venuerig.Start(t, []venuerig.Venue{rv.venue}, nodetest.WithVenueTimeout(500*time.Millisecond))
	cfg, c := ns.Config, ns.Client()
	dir := t.TempDir()
	start := func() (*Runner, *Store) {
		s := openStore(t, dir)
		r, err := New(ctxT(t), Config{Project: cfg, Store: s, Node: c, Strategies: newPool(t), OperatorKey: ns.OperatorKey.Public().(ed25519.PublicKey)})
		if err != nil {
			t.Fatal(err)
		}
		return r, s
	}
	r, store := start()
	spec := Spec{Strategy: "flip.star", Source: flip, Series: rv.series, Venue: rv.name, Mode: ModeAuto, Capital: decimal.NewFromInt(1000), Warmup: 10}
	_, err := r.Create(ctxT(t), spec)
	wantErr(t, err, "disarmed", "wicket node arm "+rv.name, "--mode propose")
	if _, err := c.Arm(context.Background(), rv.name, time.Hour, rv.name, ns.OperatorKey); err != nil {
		t.Fatal(err)
	}
	d, err := r.Create(ctxT(t), spec)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Minute)
	bar := func(i int, up bool) Bar {
		o, cl := 60000.0, 59990.0
		if up {
			cl = 60010
		}
		return Bar{Time: now.Add(time.Duration(i-10) * time.Minute), Open: o, High: 60020, Low: 59980, Close: cl, Volume: 1}
	}
	if err := r.Step(ctxT(t), d.ID, bar(0, true)); err != nil {
		t.Fatal(err)
	}
	in := mustIntents(t, store, d.ID)
	if len(in) != 1 || in[0].Status != IntentRefused || !strings.Contains(in[0].Note, "wicket node arm "+d.ID) || rv.orders() != 0 {
		t.Fatalf("a disarmed deployment: %+v, %d orders at the venue", in, rv.orders())
	}
	operatorArms(t, r, d.ID, ns.OperatorKey, "1h")
	if err := r.Step(ctxT(t), d.ID, bar(1, true)); err != nil {
		t.Fatal(err)
	}
	if n := rv.orders(); n != 1 {
		t.Fatalf("armed: %d orders at the venue, want 1 (%+v)", n, mustIntents(t, store, d.ID))
	}
	// Restart: the deployment's arming lapses; its next change of
	// target is refused.
	store.Close()
	r, store = start()
	if dep, _ := r.Get(d.ID); !dep.ArmedUntil.IsZero() {
		t.Fatal("a deployment's arming survived the restart")
	}
	if err := r.Step(ctxT(t), d.ID, bar(2, false)); err != nil {
		t.Fatal(err)
	}
	in = mustIntents(t, store, d.ID)
	if last := in[len(in)-1]; last.Status != IntentRefused || rv.orders() != 1 {
		t.Fatalf("after the restart: %+v, %d orders at the venue", last, rv.orders())
	}
}

func mustIntents(t *testing.T, s *Store, id string) []Intent {
	t.Helper()
	in, err := s.Intents(id)
	if err != nil {
		t.Fatal(err)
	}
	return in
}
