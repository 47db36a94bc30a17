package deploy

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node/venuerig"
)

// TestDeployFundingInBookAndReport: a deployment holding a long on a
// binance-futures venue (the fake of its API) pays the funding the
// venue settles: the node books it from the venue's income history, the
// deployment's book takes it into cash once (again at later bars and
// after a restart: never twice), and the tracking report shows the
// payment and its funding part.
func TestDeployFundingInBookAndReport(t *testing.T) {
	f := venuerig.BinanceFutures(t, "100000", "BTCUSDT")
	f.SetPrice("BTCUSDT", "60000")
	ns := venuerig.Start(t, []venuerig.Venue{venuerig.OnBinanceFutures(f, project.Venue{Name: "perps", MayArm: true, Symbols: []string{"BTCUSDT"},
		Futures: project.Futures{Contracts: map[string]project.Contract{"BTCUSDT": {Leverage: 3}}}})})
	c := ns.Client()
	ctx := context.Background()
	if _, err := c.Arm(ctx, "perps", time.Hour, "perps", ns.OperatorKey); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	start := func() (*Runner, *Store) {
		s := openStore(t, dir)
		r, err := New(ctxT(t), Config{Project: ns.Config, Store: s, Node: c, Strategies: newPool(t), OperatorKey: ns.OperatorKey.Public().(ed25519.PublicKey)})
		if err != nil {
			t.Fatal(err)
		}
		return r, s
	}
	r, store := start()
	d, err := r.Create(ctxT(t), Spec{Strategy: "hold.star", Source: hold, Series: "BTCUSDT@1m", Venue: "perps", Mode: ModeAuto, Capital: decimal.NewFromInt(1000), Warmup: 10})
	if err != nil {
		t.Fatal(err)
	}
	operatorArms(t, r, d.ID, ns.OperatorKey, "1h")
	now := time.Now().UTC().Truncate(time.Minute)
	bar := func(i int) Bar {
		return Bar{Time: now.Add(time.Duration(i-10) * time.Minute), Open: 60000, High: 60020, Low: 59980, Close: 60000, Volume: 1}
	}
	if err := r.Step(ctxT(t), d.ID, bar(0)); err != nil {
		t.Fatal(err)
	}
	if dep, _ := r.Get(d.ID); !dep.Position.IsPositive() {
		t.Fatalf("no position after the first bar: %+v %+v", dep, mustIntents(t, store, d.ID))
	}
	f.AddFunding("BTCUSDT", "-1.5", time.Now().Add(time.Second))
	testkit.WaitFor(t, "the node books the funding", 10*time.Second, func() (bool, string) { // its background income reads
		snap, err := c.Snapshot(ctx, "perps", 0)
		return err == nil && snap.Venues[0].Funding.Equal(decimal.NewFromFloat(-1.5)), fmt.Sprintf("%+v %v", snap, err)
	})
	before, _ := r.Get(d.ID)
	for i := 1; i <= 2; i++ {
		if err := r.Step(ctxT(t), d.ID, bar(i)); err != nil {
			t.Fatal(err)
		}
	}
	store.Close()
	r, _ = start()
	if err := r.Step(ctxT(t), d.ID, bar(3)); err != nil {
		t.Fatal(err)
	}
	dep, _ := r.Get(d.ID)
	paid := decimal.NewFromFloat(-1.5)
	if !dep.Funding.Equal(paid) || !dep.Cash.Sub(before.Cash).Equal(paid) {
		t.Fatalf("the deployment's funding %s, cash %s → %s: want -1.5 booked once", dep.Funding, before.Cash, dep.Cash)
	}
	rep, err := r.Report(ctxT(t), d.ID)
	if err != nil {
		t.Fatal(err)
	}
	// The replay pays the rate the payment implies on its own position
	// (its quantity is not cut to the venue's step: a little more); the
	// funding part is live's less the replay's.
	a := rep.Attribution
	if len(rep.Funding) != 1 || !rep.Funding[0].Amount.Equal(paid) || !rep.Funding[0].Position.Equal(dep.Position) || a == nil ||
		!a.Total.Funding.Money.Equal(paid.Sub(a.ReplayFunding)) || a.ReplayFunding.GreaterThan(paid) || a.ReplayFunding.LessThan(decimal.NewFromFloat(-1.6)) {
		t.Fatalf("report funding %+v, attribution %+v", rep.Funding, a)
	}
	if !a.Total.Timing.Money.IsZero() {
		t.Errorf("fill timing %s with every open at the close", a.Total.Timing.Money)
	}
	if sum := sumParts(rep.Attribution.Total); !sum.Equal(rep.Attribution.Total.Gap.Money) {
		t.Errorf("parts %s, gap %s", sum, rep.Attribution.Total.Gap.Money)
	}
}
