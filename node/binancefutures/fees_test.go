package binancefutures_test

import (
	"testing"

	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/command"
	"wicket/node/venuetest"
)

// TestFeesFromTheVenuesTrades: a fill's commission (4 bps, USDT) comes
// with the order wherever the node learns of the fill: the order's
// answer, the stream's ORDER_TRADE_UPDATE (n, t), and a lookup by another
// process that never saw either (GET /fapi/v1/userTrades?orderId=); each
// trade counts once, and the wallet paid it.
func TestFeesFromTheVenuesTrades(t *testing.T) {
	f, another := startWith(t)
	f.SetTakerCommission("0.0004")
	a := another()
	s := startStream(t, a)
	if u := s.next(t); !u.Connected {
		t.Fatalf("first update %+v", u)
	}
	mkt, err := a.Submit(ctx(t), node.OrderRequest{ClientOrderID: venuetest.ClientID(), Symbol: "BTCUSDT", Side: command.Buy, Type: command.Market, Quantity: testkit.D("0.02")})
	if err != nil {
		t.Fatal(err)
	}
	want := testkit.D("0.48") // 0.02 × 60000 × 0.0004
	if !mkt.Fee.Equal(want) || mkt.FeeAsset != "" {
		t.Errorf("the answer's fee %s %s, want %s", mkt.Fee, mkt.FeeAsset, want)
	}
	for {
		u := s.next(t)
		if u.Order != nil && u.Order.VenueOrderID == mkt.VenueOrderID && u.Order.Filled.IsPositive() {
			if !u.Order.Fee.Equal(want) {
				t.Errorf("the stream's fee %s, want %s", u.Order.Fee, want)
			}
			break
		}
	}
	lim, err := a.Submit(ctx(t), node.OrderRequest{ClientOrderID: venuetest.ClientID(), Symbol: "BTCUSDT", Side: command.Sell, Type: command.Limit, TimeInForce: command.GTC, Quantity: testkit.D("0.03"), Price: testkit.D("61000")})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{f: f}
	h.FillPart(t, lim.VenueOrderID, testkit.D("0.01"))
	h.FillPart(t, lim.VenueOrderID, testkit.D("0.01"))
	fresh := another() // knows nothing of either trade: reads them
	got, err := fresh.Lookup(ctx(t), lim)
	if err != nil {
		t.Fatal(err)
	}
	if want := testkit.D("0.488"); !got.Filled.Equal(testkit.D("0.02")) || !got.Fee.Equal(want) { // 2 × 0.01 × 61000 × 0.0004
		t.Errorf("a lookup's fee %s for %s filled, want %s", got.Fee, got.Filled, want)
	}
	if again, _ := fresh.Lookup(ctx(t), lim); !again.Fee.Equal(got.Fee) {
		t.Errorf("a second lookup's fee %s, the first's %s", again.Fee, got.Fee)
	}
	if paid := f.Commissions("BTCUSDT"); !paid.Equal(testkit.D("0.968")) {
		t.Errorf("the venue charged %s", paid)
	}
}
