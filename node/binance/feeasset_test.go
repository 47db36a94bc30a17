package binance_test

import (
	"testing"

	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/command"
)

// TestFeeInBNBIsReportedInBNB: a commission Binance charges in BNB is
// not in the account currency (Fee stays 0) but reported in its own
// asset (FeeAsset, AssetFee), by the FULL answer's fills and again by a
// lookup from another process (myTrades), cumulative over the order's
// trades.
func TestFeeInBNBIsReportedInBNB(t *testing.T) {
	f, another := startWith(t)
	a := another()
	f.Commission("0.001")
	f.CommissionInBNB("600")
	f.PartialFills(true) // two trades: half at once, the rest at Cross
	o, err := a.Submit(ctx(t), node.OrderRequest{ClientOrderID: cid, Symbol: "ETHUSDT", Side: command.Buy, Type: command.Market, Quantity: testkit.D("0.2")})
	if err != nil {
		t.Fatal(err)
	}
	if !o.Fee.IsZero() || o.FeeAsset != "BNB" || !o.AssetFee.Equal(testkit.D("0.0005")) { // 0.1 ETH at 3000 × 0.001 / 600
		t.Errorf("first trade: fee %s, %s %s; want 0, 0.0005 BNB", o.Fee, o.AssetFee, o.FeeAsset)
	}
	f.Cross()
	got, err := another().Lookup(ctx(t), o)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != node.VenueFilled || !got.Fee.IsZero() || got.FeeAsset != "BNB" || !got.AssetFee.Equal(testkit.D("0.001")) {
		t.Errorf("looked up by another process: %s, fee %s, %s %s; want filled, 0, 0.001 BNB", got.State, got.Fee, got.AssetFee, got.FeeAsset)
	}
}
