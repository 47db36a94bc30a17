package deploy

import (
	"context"
	"crypto/ed25519"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node/venuerig"
)

// TestDeployFeeInBNBBookedAtItsMark: a deployment on a Binance venue whose
// account pays commissions in BNB (the fake of its API charging 0.1% in
// BNB at 600 USDT, BNB-USD listed so the node has its mark) books the
// fill's fee at its worth in USDT: the intent keeps the BNB amount and
// asset beside the fee, the deployment's cash pays the valued fee once
// (not again at a later bar), and the tracking report shows both.
func TestDeployFeeInBNBBookedAtItsMark(t *testing.T) {
	f := venuerig.Binance(t, map[string]string{"USDT": "20000", "BNB": "1"}, "BTCUSDT", "BNBUSDT")
	f.Commission("0.001")
	f.CommissionInBNB("600")
	ns := venuerig.Start(t, []venuerig.Venue{venuerig.OnBinance(f, project.Venue{Name: "bn", Environment: "testnet", MayArm: true,
		Symbols: []string{"BTCUSDT", "BNBUSDT"}})})
	c := ns.Client()
	if _, err := c.Arm(context.Background(), "bn", time.Hour, "bn", ns.OperatorKey); err != nil {
		t.Fatal(err)
	}
	store := openStore(t, t.TempDir())
	r, err := New(ctxT(t), Config{Project: ns.Config, Store: store, Node: c, Strategies: newPool(t), OperatorKey: ns.OperatorKey.Public().(ed25519.PublicKey)})
	if err != nil {
		t.Fatal(err)
	}
	capital := decimal.NewFromInt(1000)
	d, err := r.Create(ctxT(t), Spec{Strategy: "hold.star", Source: hold, Series: "BTCUSDT@1m", Venue: "bn", Mode: ModeAuto, Capital: capital, Warmup: 10})
	if err != nil {
		t.Fatal(err)
	}
	operatorArms(t, r, d.ID, ns.OperatorKey, "1h")
	now := time.Now().UTC().Truncate(time.Minute)
	bar := func(i int) Bar {
		return Bar{Time: now.Add(time.Duration(i-10) * time.Minute), Open: 60000, High: 60020, Low: 59980, Close: 60000, Volume: 1}
	}
	for i := range 2 {
		if err := r.Step(ctxT(t), d.ID, bar(i)); err != nil {
			t.Fatal(err)
		}
	}
	in := mustIntents(t, store, d.ID)
	if len(in) != 1 || !in[0].Filled.IsPositive() {
		t.Fatalf("intents %+v: want one filled", in)
	}
	fill := in[0]
	bnb := fill.Filled.Mul(fill.Price).Mul(testkit.D("0.001")).Div(testkit.D("600")).Round(8) // the fake's charge
	if fill.FeeAsset != "BNB" || !fill.AssetFee.Equal(bnb) || !fill.Fee.Equal(bnb.Mul(testkit.D("600"))) {
		t.Fatalf("the intent's fee %s, %s %s; want %s BNB worth %s", fill.Fee, fill.AssetFee, fill.FeeAsset, bnb, bnb.Mul(testkit.D("600")))
	}
	dep, _ := r.Get(d.ID)
	if want := capital.Sub(fill.Filled.Mul(fill.Price)).Sub(fill.Fee); !dep.Cash.Equal(want) {
		t.Errorf("the deployment's cash %s, want %s (capital less the fill and its fee valued in USDT, once)", dep.Cash, want)
	}
	rep, err := r.Report(ctxT(t), d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Fills) != 1 || !rep.Fills[0].Fee.Equal(fill.Fee) || rep.Fills[0].FeeAsset != "BNB" || !rep.Fills[0].AssetFee.Equal(bnb) {
		t.Errorf("the report's fills %+v: want the fee %s and %s BNB", rep.Fills, fill.Fee, bnb)
	}
}
