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

// TestDeployAutoOnRealVenueNeedsBothArmed: on a Binance venue (the fake
// of its API), auto is refused while the venue is disarmed; once the
// venue is armed it deploys, but sends nothing while the deployment is
// disarmed; armed by the operator it sends one order; after a restart
// its arming has lapsed and it sends nothing.
func TestDeployAutoOnRealVenueNeedsBothArmed(t *testing.T) {
	key, secret := hexKey(t), hexKey(t)
	f := binancefake.New(key, secret, []binancefake.Symbol{
		{Name: "BTCUSDT", Base: "BTC", Quote: "USDT", Tick: "0.01", Step: "0.00001", MinQty: "0.00001", MinNo: "5", Price: "60000.00"},
	}, map[string]string{"USDT": "20000"})
	t.Cleanup(f.Close)
	cfg := project.Defaults()
	cfg.Venues = append(cfg.Venues, project.Venue{Name: "bn", Kind: project.KindBinance, Environment: "testnet", MayArm: true, BaseURL: f.URL, Symbols: []string{"BTCUSDT"}})
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	vc, _ := cfg.Venue("bn")
	ex, err := binance.New(binance.Config{Venue: vc, APIKey: key, APISecret: secret, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ns := nodetest.NewServer(t, nodetest.WithConfig(cfg), nodetest.WithExchanges(map[string]server.Exchange{"bn": ex}),
		nodetest.WithVenueTimeout(500*time.Millisecond), nodetest.WithMarkEvery(50*time.Millisecond))
	c := ns.Client()
	// The node reads the venue in the background: a bounded wait for it.
	for deadline := time.Now().Add(10 * time.Second); ; {
		info, err := c.Arming(context.Background(), "bn")
		if err == nil && info.Refusal == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("venue bn never synced: %+v %v", info, err)
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
	spec := Spec{Strategy: "flip.star", Source: flip, Series: "BTCUSDT@1m", Venue: "bn", Mode: ModeAuto, Capital: decimal.NewFromInt(1000), Warmup: 10}
	_, err = r.Create(ctxT(t), spec)
	wantErr(t, err, "disarmed", "wicket node arm bn", "--mode propose")
	if _, err := c.Arm(context.Background(), "bn", time.Hour, "bn", ns.OperatorKey); err != nil {
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
	if len(in) != 1 || in[0].Status != IntentRefused || !strings.Contains(in[0].Note, "wicket node arm "+d.ID) || len(f.Orders()) != 0 {
		t.Fatalf("a disarmed deployment: %+v, %d orders at the venue", in, len(f.Orders()))
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
	if n := len(f.Orders()); n != 1 {
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
	if last := in[len(in)-1]; last.Status != IntentRefused || len(f.Orders()) != 1 {
		t.Fatalf("after the restart: %+v, %d orders at the venue", last, len(f.Orders()))
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
