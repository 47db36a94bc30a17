package binance_test

import (
	"context"
	"testing"
	"time"

	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/binance"
	"wicket/node/command"
)

// TestMarketFillCarriesItsCommission: Binance charges a buy's commission
// in the base asset and a sell's in the quote asset, per trade; the
// adapter reports each order's fee in the account currency (USDT), the
// base asset's at the trade's price, as the FULL answer's fills tell it
// and as a later lookup (another process: myTrades) tells it again. One
// paid in BNB is not in the account currency: it is left out of the fee
// and named in the trade history, unconverted.
func TestMarketFillCarriesItsCommission(t *testing.T) {
	f, another := startWith(t)
	a := another()
	f.Commission("0.001")
	buy, err := a.Submit(ctx(t), node.OrderRequest{ClientOrderID: cid, Symbol: "BTCUSDT", Side: command.Buy, Type: command.Market, Quantity: testkit.D("0.01")})
	if err != nil {
		t.Fatal(err)
	}
	if buy.State != node.VenueFilled || !buy.Fee.Equal(testkit.D("0.6")) { // 0.00001 BTC at 60000
		t.Errorf("market buy: state %s, fee %s; want filled, 0.6 (0.001 × 0.01 BTC at 60000)", buy.State, buy.Fee)
	}
	if got := f.Balance("BTC"); !got.Equal(testkit.D("0.50999")) {
		t.Errorf("the fake's BTC after the buy %s, want 0.50999 (its commission paid)", got)
	}
	sell, err := a.Submit(ctx(t), node.OrderRequest{ClientOrderID: "sell-1", Symbol: "BTCUSDT", Side: command.Sell, Type: command.Market, Quantity: testkit.D("0.02")})
	if err != nil {
		t.Fatal(err)
	}
	if !sell.Fee.Equal(testkit.D("1.2")) { // 0.001 × 1200 USDT
		t.Errorf("market sell fee %s, want 1.2", sell.Fee)
	}
	b := another() // knows no trade: reads them
	for _, o := range []node.VenueOrder{buy, sell} {
		got, err := b.Lookup(ctx(t), o)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Fee.Equal(o.Fee) {
			t.Errorf("order %s looked up by another process: fee %s, want %s", o.ClientOrderID, got.Fee, o.Fee)
		}
	}

	f.CommissionInBNB("600")
	bnb, err := a.Submit(ctx(t), node.OrderRequest{ClientOrderID: "bnb-1", Symbol: "ETHUSDT", Side: command.Buy, Type: command.Market, Quantity: testkit.D("0.2")})
	if err != nil {
		t.Fatal(err)
	}
	if bnb.State != node.VenueFilled || !bnb.Fee.IsZero() {
		t.Errorf("a fill paid in BNB: state %s, fee %s in USDT; want filled, 0 (BNB is not converted)", bnb.State, bnb.Fee)
	}
	h, err := a.History(ctx(t), time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	fees := map[string]string{}
	for _, tr := range h.Trades {
		fees[tr.VenueOrderID] = tr.Fee.String() + " " + tr.FeeAsset
	}
	want := map[string]string{buy.VenueOrderID: "0.6 ", sell.VenueOrderID: "1.2 ", bnb.VenueOrderID: "0.001 BNB"} // 600 × 0.001 / 600
	for id, w := range want {
		if fees[id] != w {
			t.Errorf("history's fee of order %s: %q, want %q", id, fees[id], w)
		}
	}
}

// TestStreamFillCarriesItsFee: each executionReport of a trade carries
// that trade's commission (n, N); the order's fee the stream reports is
// cumulative, like its filled quantity. A process that starts between
// the trades, and so never saw the first one's report, reads it
// (myTrades) rather than reporting a fee short of the fills.
func TestStreamFillCarriesItsFee(t *testing.T) {
	f, another := startWith(t)
	a := another()
	f.Commission("0.001")
	f.PartialFills(true)
	sctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream := func(a interface {
		Stream(context.Context, func(node.VenueUpdate)) error
	}) chan node.VenueUpdate {
		updates := make(chan node.VenueUpdate, 64)
		go a.Stream(sctx, func(u node.VenueUpdate) { updates <- u }) //nolint:errcheck // ends with the test
		return updates
	}
	next := func(updates chan node.VenueUpdate) node.VenueUpdate {
		t.Helper()
		for {
			select {
			case u := <-updates:
				if u.Order != nil {
					return u
				}
			case <-time.After(5 * time.Second): // a bound on a hang
				t.Fatal("no stream update")
			}
		}
	}
	first := stream(a)
	if u := <-first; !u.Connected {
		t.Fatalf("first update %+v", u)
	}
	o, err := a.Submit(ctx(t), node.OrderRequest{ClientOrderID: "sell-1", Symbol: "BTCUSDT", Side: command.Sell, Type: command.Market, Quantity: testkit.D("0.01")})
	if err != nil || !o.Filled.Equal(testkit.D("0.005")) || !o.Fee.Equal(testkit.D("0.3")) {
		t.Fatalf("half filled: filled %s, fee %s, %v; want 0.005, 0.3", o.Filled, o.Fee, err)
	}
	if u := next(first); !u.Order.Filled.Equal(testkit.D("0.005")) || !u.Order.Fee.Equal(testkit.D("0.3")) {
		t.Errorf("the first trade's report: filled %s, fee %s; want 0.005, 0.3", u.Order.Filled, u.Order.Fee)
	}
	late := stream(another()) // a process started after the first trade
	if u := <-late; !u.Connected {
		t.Fatalf("first update %+v", u)
	}
	f.Cross()
	for name, ch := range map[string]chan node.VenueUpdate{"the process that saw both trades": first, "the process that saw the second only": late} {
		if u := next(ch); u.Order.State != node.VenueFilled || !u.Order.Fee.Equal(testkit.D("0.6")) {
			t.Errorf("%s: the last trade's report: state %s, fee %s; want filled, 0.6", name, u.Order.State, u.Order.Fee)
		}
	}
}

// TestReplacedOrderSumsItsFees: a modify (cancel-replace) makes a new
// incarnation; the order's fee, like its fills, is summed over all of
// them, for the process that replaced it and for one that walks the
// incarnations afresh.
func TestReplacedOrderSumsItsFees(t *testing.T) {
	f, another := startWith(t)
	a := another()
	f.Commission("0.001")
	o, err := a.Submit(ctx(t), node.OrderRequest{ClientOrderID: cid, Symbol: "BTCUSDT", Side: command.Sell, Type: command.Limit,
		TimeInForce: command.GTC, Quantity: testkit.D("0.02"), Price: testkit.D("61000.00")})
	if err != nil {
		t.Fatal(err)
	}
	f.FillPart(f.Orders()[0].ID, "0.01") // 610 USDT: 0.61
	rep, err := a.Replace(ctx(t), o, node.Replacement{Quantity: testkit.D("0.02"), Price: testkit.D("62000.00")})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Filled.Equal(testkit.D("0.01")) || !rep.Fee.Equal(testkit.D("0.61")) {
		t.Errorf("replaced: filled %s, fee %s; want 0.01, 0.61", rep.Filled, rep.Fee)
	}
	orders := f.Orders()
	f.FillPart(orders[len(orders)-1].ID, "0.005") // 310 USDT: 0.31
	for name, ad := range map[string]*binance.Adapter{"the replacing process": a, "another process": another()} {
		got, err := ad.Lookup(ctx(t), node.VenueOrder{Symbol: "BTCUSDT", ClientOrderID: cid})
		if err != nil {
			t.Fatal(err)
		}
		if !got.Filled.Equal(testkit.D("0.015")) || !got.Fee.Equal(testkit.D("0.92")) {
			t.Errorf("%s: filled %s, fee %s; want 0.015, 0.92 over both incarnations", name, got.Filled, got.Fee)
		}
	}
}
