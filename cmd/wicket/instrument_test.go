package main

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wicket/deploy"
	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/nodetest"
	"wicket/node/server"
	"wicket/node/venuerig"
	"wicket/strategy/provider/providertest"
	"wicket/strategy/worker"
)

// TestFetchAndDeployOnBinanceWithNoBridge: one spelling from research to
// the venue. `wicket data fetch BTC-USD@1m` fills the series from the
// Binance provider's fake (which serves BTCUSDT), and `wicket deploy
// --series BTC-USD@1m --venue bn` on a node trading the Binance venue's
// fake warms up from those bars and sends its order as BTCUSDT; the
// venue's list may write the symbol either way (BTC-USD or BTCUSDT), and
// so may deploy's --series. The deployment's series is BTC-USD@1m, the snapshot shows both
// spellings, and the trade command takes Binance's spelling too.
func TestFetchAndDeployOnBinanceWithNoBridge(t *testing.T) {
	for _, listed := range []string{"BTC-USD", "BTCUSDT"} {
		t.Run(listed, func(t *testing.T) { fetchAndDeploy(t, listed) })
	}
}

func fetchAndDeploy(t *testing.T, listed string) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	f := venuerig.Binance(t, map[string]string{"USDT": "20000"}, "BTCUSDT")
	h := deploy.NewHandler()
	ns := venuerig.Start(t, []venuerig.Venue{venuerig.OnBinance(f, project.Venue{Name: "bn", Environment: "testnet", MayArm: true, Symbols: []string{listed}})},
		nodetest.WithDeployments(h))
	proj := tradeProject(t, ns)

	// The project: the same venue, and the Binance provider's fake with
	// two hours of BTCUSDT minutes up to now.
	now := time.Now().UTC().Truncate(time.Minute)
	prov := providertest.NewBinance(nil, map[string]providertest.Gen{"BTCUSDT": {Start: now.Add(-2 * time.Hour), End: now, Step: time.Minute}})
	t.Cleanup(prov.Close)
	appendFile(t, filepath.Join(proj, "wicket.toml"), fmt.Sprintf("\n[[venues]]\nname = \"bn\"\nkind = \"binance\"\nmay_arm = true\nbase_url = %q\nsymbols = [%q]\n\n[providers.binance]\nbase_url = %q\n",
		f.URL, listed, prov.URL))
	if err := os.WriteFile(filepath.Join(proj, "strategies", "flip.star"), []byte(deployFlip), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := wicket(t, "--project", proj, "data", "fetch", "BTC-USD@1m", "--from", now.Add(-2*time.Hour).Format(time.RFC3339))
	if code != 0 || !strings.HasPrefix(stdout, "BTC-USD@1m: added ") || !strings.Contains(stdout, " bars from binance BTCUSDT (") {
		t.Fatalf("data fetch: code %d\n%s\n%s", code, stdout, stderr)
	}

	// The node's deployments warm up from the project's history store.
	pool, err := worker.NewPool(worker.Config{Size: 1, Command: []string{builtWicket(t)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pool.Close() })
	store, err := deploy.OpenStore(filepath.Join(t.TempDir(), "deployments.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	p := project.Project{Root: proj}
	r, err := deploy.New(ctx, deploy.Config{Project: ns.Config, Store: store, Node: ns.Client(), Strategies: pool,
		History: historyWarmup(p.HistoryPath()), OperatorKey: ns.OperatorKey.Public().(ed25519.PublicKey)})
	if err != nil {
		t.Fatal(err)
	}
	h.Attach(r)
	if _, err := ns.Client().Arm(ctx, "bn", time.Hour, "bn", ns.OperatorKey); err != nil {
		t.Fatal(err)
	}

	series := "BTC-USD@1m"
	if listed == "BTCUSDT" {
		series = "BTCUSDT@1m" // binance's spelling names the same series
	}
	code, stdout, stderr = wicket(t, "--project", proj, "deploy", "flip", "--series", series, "--venue", "bn", "--capital", "1000",
		"--mode", "auto", "--warmup", "20", "--yes", "--addr", ns.Addr)
	if code != 0 || !strings.Contains(stdout, "deployed dep-") {
		t.Fatalf("deploy: code %d\n%s\n%s", code, stdout, stderr)
	}
	list := r.List()
	if len(list) != 1 || list[0].Series != "BTC-USD@1m" || list[0].Symbol != listed {
		t.Fatalf("deployments %+v: want series BTC-USD@1m trading %s", list, listed)
	}
	d := list[0]
	ch, err := r.Challenge(deploy.ActArm, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	req := node.ArmRequest{For: "1h", Confirm: d.ID, Challenge: ch}
	req.Signature = node.SignOperator(ns.OperatorKey, deploy.Statement(deploy.ActArm, d.ID, req))
	if _, err := r.Arm(d.ID, req); err != nil {
		t.Fatal(err)
	}
	if err := r.Step(ctx, d.ID, deploy.Bar{Time: now, Open: 60000, High: 60020, Low: 59980, Close: 60010, Volume: 1}); err != nil {
		t.Fatal(err)
	}
	orders := f.Orders()
	if len(orders) != 1 || orders[0].Symbol != "BTCUSDT" || orders[0].Side != "BUY" {
		t.Fatalf("orders at the venue %+v, want one BUY of BTCUSDT", orders)
	}

	// The snapshot shows both spellings; trade takes Binance's.
	code, stdout, stderr = wicketStdin(t, "snapshot\n", "--project", proj, "trade", "--node", ns.Addr)
	if code != 0 || !strings.Contains(stdout, "BTC-USD (BTCUSDT)") {
		t.Fatalf("trade snapshot: code %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = wicket(t, "--project", proj, "trade", "submit", "sell", "0.001", "BTCUSDT", "limit", "65000", "venue=bn", "--yes", "--node", ns.Addr)
	if code != 0 || len(f.Orders()) != 2 || f.Orders()[1].Symbol != "BTCUSDT" || !strings.Contains(stdout, "symbol           BTC-USD (BTCUSDT)") {
		t.Fatalf("trade submit BTCUSDT: code %d, %d orders\n%s\n%s", code, len(f.Orders()), stdout, stderr)
	}
}

// TestMisconfiguredBinanceSymbolNamesBinances: a node whose Binance venue
// lists BTC-USD where Binance does not list BTCUSDT refuses to start,
// naming BTCUSDT.
func TestMisconfiguredBinanceSymbolNamesBinances(t *testing.T) {
	f := venuerig.Binance(t, map[string]string{"USDT": "20000"}, "ETHUSDT")
	v := venuerig.OnBinance(f, project.Venue{Name: "bn", Environment: "testnet", Symbols: []string{"ETH-USD", "BTC-USD"}})
	cfg := project.Defaults()
	cfg.Venues = append(cfg.Venues, v.Table)
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	vc, _ := cfg.Venue("bn")
	ex, err := v.Adapter(vc)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Config{Project: cfg, JournalPath: filepath.Join(t.TempDir(), "node.db"), ObserveKey: testkit.Secret(t, 16),
		ControlKey: testkit.Secret(t, 16), Exchanges: map[string]server.Exchange{"bn": ex}, VenueTimeout: 2 * time.Second})
	if err == nil {
		srv.Close()
		t.Fatal("a node started with a symbol binance does not list")
	}
	if !strings.Contains(err.Error(), "binance does not list BTCUSDT (BTC-USD in wicket.toml)") {
		t.Fatalf("start error %q does not name BTCUSDT", err)
	}
}
