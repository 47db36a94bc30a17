package deploy

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/node"
	"wicket/node/alpaca"
	"wicket/node/alpaca/alpacafake"
	"wicket/node/binance"
	"wicket/node/binance/binancefake"
	"wicket/node/nodetest"
	"wicket/node/server"
)

func hexKey(t testing.TB) string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// realVenue is a real venue of the node, behind the fake of its API.
type realVenue struct {
	name, series string
	venue        project.Venue
	exchange     func(vc project.Venue) (server.Exchange, error)
	orders       func() int // the orders the fake venue took
}

func binanceVenue(t *testing.T) realVenue {
	key, secret := hexKey(t), hexKey(t)
	f := binancefake.New(key, secret, []binancefake.Symbol{
		{Name: "BTCUSDT", Base: "BTC", Quote: "USDT", Tick: "0.01", Step: "0.00001", MinQty: "0.00001", MinNo: "5", Price: "60000.00"},
	}, map[string]string{"USDT": "20000"})
	t.Cleanup(f.Close)
	return realVenue{name: "bn", series: "BTCUSDT@1m",
		venue: project.Venue{Name: "bn", Kind: project.KindBinance, Environment: "testnet", MayArm: true, BaseURL: f.URL, Symbols: []string{"BTCUSDT"}},
		exchange: func(vc project.Venue) (server.Exchange, error) {
			return binance.New(binance.Config{Venue: vc, APIKey: key, APISecret: secret, Timeout: 2 * time.Second})
		},
		orders: func() int { return len(f.Orders()) }}
}

func alpacaVenue(t *testing.T) realVenue {
	key, secret := hexKey(t), hexKey(t)
	f := alpacafake.New(key, secret, []alpacafake.Asset{{Symbol: "BTC/USD", Class: "crypto", Fractionable: true,
		MinOrder: "0.0001", Increment: "0.0001", PriceIncrement: "1", Price: "60000"}}, "20000")
	t.Cleanup(f.Close)
	return realVenue{name: "al", series: "BTC-USD@1m",
		venue: project.Venue{Name: "al", Kind: project.KindAlpaca, Environment: "paper", MayArm: true, BaseURL: f.URL, Symbols: []string{"BTC-USD"}},
		exchange: func(vc project.Venue) (server.Exchange, error) {
			return alpaca.New(alpaca.Config{Venue: vc, KeyID: key, Secret: secret, Timeout: 2 * time.Second})
		},
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
	cfg := project.Defaults()
	cfg.Venues = append(cfg.Venues, rv.venue)
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	vc, _ := cfg.Venue(rv.name)
	ex, err := rv.exchange(vc)
	if err != nil {
		t.Fatal(err)
	}
	ns := nodetest.NewServer(t, nodetest.WithConfig(cfg), nodetest.WithExchanges(map[string]server.Exchange{rv.name: ex}),
		nodetest.WithVenueTimeout(500*time.Millisecond), nodetest.WithMarkEvery(50*time.Millisecond))
	c := ns.Client()
	// The node reads the venue in the background: a bounded wait for it.
	for deadline := time.Now().Add(10 * time.Second); ; {
		info, err := c.Arming(context.Background(), rv.name)
		if err == nil && info.Refusal == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("venue %s never synced: %+v %v", rv.name, info, err)
		}
		time.Sleep(20 * time.Millisecond) // polling the node's background read of the venue, bounded, as node/server's waitFor does
	}
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
	_, err = r.Create(ctxT(t), spec)
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
	ch, err := r.Challenge(ActArm, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	req := node.ArmRequest{For: "1h", Confirm: d.ID, Challenge: ch}
	req.Signature = node.SignOperator(ns.OperatorKey, Statement(ActArm, d.ID, req))
	if _, err := r.Arm(d.ID, req); err != nil {
		t.Fatal(err)
	}
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
