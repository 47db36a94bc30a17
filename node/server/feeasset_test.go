package server_test

import (
	"context"
	"testing"
	"time"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/command"
	"wicket/node/nodetest"
	"wicket/node/venuerig"
)

// TestBinanceFeeInBNBIsKeptInBNB: a Binance account that pays its
// commissions in BNB has each fill journaled with its fee in BNB (the
// fill event's fee_asset and asset_fee) and its worth in USDT at BNB's
// mark (BNB-USD listed at the venue), none of it off the USDT cash; the
// snapshot shows the BNB paid, its value, and the BNB holding less the
// fee; a restart rebuilds the same from the journal. The day's statement
// holds the BNB against the venue's trade list, asset by asset: equal, no
// mismatch; charged otherwise at the venue, a fee mismatch in BNB.
func TestBinanceFeeInBNBIsKeptInBNB(t *testing.T) {
	clock := testkit.NewClock(time.Now().UTC())
	f := venuerig.Binance(t, map[string]string{"USDT": "20000", "BNB": "1"}, "BTCUSDT", "BNBUSDT")
	f.Commission("0.001")
	f.CommissionInBNB("600") // BNB's price in USDT, as BNBUSDT's
	srv := startWith(t, venuerig.OnBinance(f, project.Venue{Name: "bn", Environment: "testnet", MayArm: true, Symbols: []string{"BTCUSDT", "BNBUSDT"}}),
		nodetest.WithClock(clock.Now))
	vn := &venueNode{srv: srv, fake: f, c: srv.Client()}
	vn.waitSynced(t, "bn")
	vn.arm(t, "bn", time.Hour)

	buy := accepted(t, vn.c, order("bn", "BTCUSDT", command.Buy, command.Market, "0.01", "")) // 600 USDT: 0.6 USDT of fee, 0.001 BNB
	var fill node.Event
	waitFor(t, "the fill", func() bool {
		snap, err := vn.c.Snapshot(context.Background(), "bn", 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range snap.Events {
			if ev.Kind == node.EventFilled && ev.OrderID == buy.OrderID {
				fill = ev
				return true
			}
		}
		return false
	})
	if !fill.Fee.IsZero() || fill.FeeAsset != "BNB" || !fill.AssetFee.Equal(testkit.D("0.001")) || !fill.FeeValue.Equal(testkit.D("0.6")) {
		t.Fatalf("the fill's fee: %s in USDT, %s %s worth %s; want 0, 0.001 BNB worth 0.6", fill.Fee, fill.AssetFee, fill.FeeAsset, fill.FeeValue)
	}
	check := func(when string) {
		t.Helper()
		v := vn.venue(t, "bn")
		if len(v.AssetFees) != 1 || v.AssetFees[0].Asset != "BNB" || !v.AssetFees[0].Paid.Equal(testkit.D("0.001")) ||
			!v.AssetFees[0].Value.Equal(testkit.D("0.6")) || v.AssetFees[0].Note != "" {
			t.Errorf("%s: the snapshot's fees in other assets %+v; want BNB 0.001 worth 0.6", when, v.AssetFees)
		}
		if !v.Cash.Equal(testkit.D("19400")) {
			t.Errorf("%s: cash %s, want 19400 (600 spent, the fee not in USDT)", when, v.Cash)
		}
		for _, p := range v.Positions {
			if p.Symbol == "BNBUSDT" && !p.Quantity.Equal(testkit.D("0.999")) {
				t.Errorf("%s: BNB held %s, want 0.999 (1 less the fee)", when, p.Quantity)
			}
		}
	}
	check("live")
	srv.Restart(t)
	vn.c = srv.Client()
	vn.waitSynced(t, "bn")
	check("after a restart")

	f.DateTrades(clock.Now())
	statement := func() node.Statement {
		t.Helper()
		sts, err := vn.c.Statement(context.Background(), clock.Now().Format(time.DateOnly), "bn")
		if err != nil {
			t.Fatal(err)
		}
		return sts[0]
	}
	if st := statement(); !st.Independent || st.NodeFills != 1 || len(st.Mismatches) != 0 {
		t.Fatalf("statement: independent %v, %d node fill(s), mismatches %+v; want true, 1, none", st.Independent, st.NodeFills, st.Mismatches)
	}
	orders := f.Orders()
	f.ChargeCommission(orders[len(orders)-1].ID, "0.002", "BNB")
	st := statement()
	if len(st.Mismatches) != 1 || st.Mismatches[0].What != "fee" || st.Mismatches[0].Node != "0.001 BNB" || st.Mismatches[0].Venue != "0.002 BNB" {
		t.Errorf("statement with the venue charging 0.002 BNB: %+v", st.Mismatches)
	}
}
