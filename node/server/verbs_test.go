package server_test

import (
	"context"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/command"
	"wicket/node/nodetest"
)

// TestEveryVerb drives each verb against the default paper venue (fee 10
// bps, slippage 5 bps) with marks the test dictates, and checks fills,
// fees, cash, positions and PnL by hand-computed numbers.
func TestEveryVerb(t *testing.T) {
	srv := nodetest.NewServer(t, replay(map[string][]decimal.Decimal{
		"BTC-USD": ds("100", "100", "95.5"),
		"ETH-USD": ds("100"),
	}))
	c := srv.Client()

	// submit_order, market: fills at once at mark + 5 bps, fee 10 bps.
	out := accepted(t, c, order("paper", "BTC-USD", command.Buy, command.Market, "10", ""))
	if out.Order == nil || out.Order.Status != node.OrderFilled || !strings.HasPrefix(out.ClientOrderID, "wk-") {
		t.Fatalf("market buy outcome = %+v", out)
	}
	eq(t, "market buy price", out.Order.AveragePrice, "100.05")
	v := venueOf(t, snapshot(t, c), "paper")
	eq(t, "cash after buy", v.Cash, "98998.4995") // 100000 − 10×100.05 − 1.0005
	eq(t, "fees", v.Fees, "1.0005")

	// submit_order, limit gtc below the mark: rests.
	rest := accepted(t, c, order("paper", "BTC-USD", command.Buy, command.Limit, "5", "95"))
	if rest.Order.Status != node.OrderOpen {
		t.Fatalf("limit below the mark did not rest: %+v", rest.Order)
	}

	// modify: quantity and price of the resting order.
	mod := accepted(t, c, command.Command{Verb: command.Modify, Venue: "paper", ClientOrderID: rest.ClientOrderID, Quantity: testkit.D("6"), Price: testkit.D("96")})
	if mod.OrderID != rest.OrderID || !mod.Order.Quantity.Equal(testkit.D("6")) || !mod.Order.Price.Equal(testkit.D("96")) || mod.Order.Status != node.OrderOpen {
		t.Fatalf("modify outcome = %+v", mod.Order)
	}

	// A mark step to 100 does not reach it; the step to 95.5 fills it at its limit.
	srv.Tick(t, 1)
	if o := openOrder(t, c, rest.OrderID); o == nil {
		t.Fatal("order filled before the mark reached it")
	}
	srv.Tick(t, 1)
	if o := openOrder(t, c, rest.OrderID); o != nil {
		t.Fatalf("order still open after the mark crossed it: %+v", o)
	}
	v = venueOf(t, snapshot(t, c), "paper")
	p, _ := position(v, "BTC-USD")
	eq(t, "position", p.Quantity, "16")
	eq(t, "average price", p.AveragePrice, "98.53125") // (10×100.05 + 6×96) / 16
	eq(t, "unrealized", p.UnrealizedPnL, "-48.5")      // 16 × (95.5 − 98.53125)

	// submit_order, limit ioc that cannot fill: accepted and canceled.
	ioc := order("paper", "BTC-USD", command.Sell, command.Limit, "4", "100")
	ioc.TimeInForce = command.IOC
	out = accepted(t, c, ioc)
	if out.Order.Status != node.OrderCanceled || !strings.Contains(out.Order.Note, "ioc: not marketable") {
		t.Fatalf("ioc outcome = %+v", out.Order)
	}

	// mass_cancel by symbol leaves other symbols' orders alone.
	s1 := accepted(t, c, order("paper", "BTC-USD", command.Sell, command.Limit, "1", "100"))
	s2 := accepted(t, c, order("paper", "BTC-USD", command.Sell, command.Limit, "1", "101"))
	eth := accepted(t, c, order("paper", "ETH-USD", command.Buy, command.Limit, "1", "95"))
	out = accepted(t, c, command.Command{Verb: command.MassCancel, Venue: "paper", Symbol: "BTC-USD"})
	if strings.Join(out.Canceled, ",") != s1.OrderID+","+s2.OrderID {
		t.Errorf("mass_cancel canceled %v, want %s and %s", out.Canceled, s1.OrderID, s2.OrderID)
	}

	// cancel_order by client order id; a second cancel is refused.
	out = accepted(t, c, command.Command{Verb: command.CancelOrder, Venue: "paper", ClientOrderID: eth.ClientOrderID})
	if out.Order.Status != node.OrderCanceled {
		t.Errorf("cancel outcome = %+v", out.Order)
	}
	rejected(t, c, command.Command{Verb: command.CancelOrder, Venue: "paper", OrderID: eth.OrderID}, "order_not_open")
	rejected(t, c, command.Command{Verb: command.CancelOrder, Venue: "paper", OrderID: "ord-99999999"}, "unknown_order")

	// flatten one symbol: a market sell at mark − 5 bps, realizing the loss.
	out = accepted(t, c, command.Command{Verb: command.Flatten, Venue: "paper", Symbol: "BTC-USD"})
	if len(out.OrderIDs) != 1 {
		t.Fatalf("flatten placed %v", out.OrderIDs)
	}
	v = venueOf(t, snapshot(t, c), "paper")
	p, _ = position(v, "BTC-USD")
	eq(t, "position after flatten", p.Quantity, "0")
	eq(t, "realized", p.RealizedPnL, "-49.3") // 16 × (95.45 − 98.53125)

	// market_exit: cancels every open order, then closes a short.
	accepted(t, c, order("paper", "ETH-USD", command.Sell, command.Market, "3", ""))
	left := accepted(t, c, order("paper", "ETH-USD", command.Buy, command.Limit, "1", "92"))
	out = accepted(t, c, command.Command{Verb: command.MarketExit})
	if len(out.Canceled) != 1 || out.Canceled[0] != left.OrderID || len(out.OrderIDs) != 1 {
		t.Fatalf("market_exit outcome = %+v", out)
	}
	v = venueOf(t, snapshot(t, c), "paper")
	if len(v.OpenOrders) != 0 {
		t.Errorf("open orders after market_exit: %+v", v.OpenOrders)
	}
	p, _ = position(v, "ETH-USD")
	eq(t, "ETH position", p.Quantity, "0")
	eq(t, "ETH realized", p.RealizedPnL, "-0.3") // 3 × (99.95 sold − 100.05 bought back)

	// set_trading_state.
	out = accepted(t, c, command.Command{Verb: command.SetTradingState, State: command.ReduceOnly})
	if out.TradingState != command.ReduceOnly {
		t.Errorf("trading state = %s", out.TradingState)
	}

	// Cash, fees and equity agree with the fills in the event log.
	checkBooks(t, snapshot(t, c), "paper", testkit.D("100000"))
}

// checkBooks recomputes a venue's cash from its fill events.
func checkBooks(t *testing.T, s *node.Snapshot, venue string, start decimal.Decimal) {
	t.Helper()
	cash, fees := start, decimal.Zero
	for _, ev := range s.Events {
		if ev.Kind != node.EventFilled || ev.Venue != venue {
			continue
		}
		n := ev.Quantity.Mul(ev.Price)
		if ev.Side == command.Buy {
			n = n.Neg()
		}
		cash = cash.Add(n).Sub(ev.Fee)
		fees = fees.Add(ev.Fee)
	}
	v := venueOf(t, s, venue)
	eq(t, "cash from fills", v.Cash, cash.String())
	eq(t, "fees from fills", v.Fees, fees.String())
	equity := v.Cash
	for _, p := range v.Positions {
		equity = equity.Add(p.Quantity.Mul(p.Mark))
	}
	eq(t, "equity", v.Equity, equity.String())
}

func openOrder(t *testing.T, c *node.Client, id string) *node.Order {
	t.Helper()
	for _, v := range snapshot(t, c).Venues {
		for _, o := range v.OpenOrders {
			if o.ID == id {
				return &o
			}
		}
	}
	return nil
}

// TestSnapshotEventCounts: the client asks for exactly the events it
// names, none for 0, and the node's default for a negative count.
func TestSnapshotEventCounts(t *testing.T) {
	srv := nodetest.NewServer(t)
	c := srv.Client()
	for range 3 {
		accepted(t, c, order("paper", "BTC-USD", command.Buy, command.Market, "1", ""))
	}
	all := snapshot(t, c).Events // venue_opened, then accepted and filled per order
	if len(all) != 7 {
		t.Fatalf("%d events, want 7", len(all))
	}
	for _, tt := range []struct{ ask, want int }{{0, 0}, {2, 2}, {-1, 7}} {
		s, err := c.Snapshot(context.Background(), "", tt.ask)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Events) != tt.want || (tt.want > 0 && s.Events[len(s.Events)-1].Seq != all[len(all)-1].Seq) {
			t.Errorf("Snapshot(events=%d) gave %d events, want the newest %d", tt.ask, len(s.Events), tt.want)
		}
	}
}
