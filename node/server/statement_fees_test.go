package server_test

import (
	"context"
	"testing"
	"time"

	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/command"
	"wicket/node/nodetest"
	"wicket/node/venuerig"
)

// TestStatementBinanceCommissionsMatch: a Binance day whose trades are
// charged commissions (a buy's in the base asset, a sell's in USDT) has
// each fill booked with its fee in the node's journal (the snapshot's
// events), and the day's statement finds no fee mismatch:
// the node's fees are the venue's, to the unit.
func TestStatementBinanceCommissionsMatch(t *testing.T) {
	clock := testkit.NewClock(time.Now().UTC())
	f := venuerig.Binance(t, map[string]string{"USDT": "20000", "BTC": "0.1"}, "BTCUSDT", "ETHUSDT")
	f.Commission("0.001")
	srv := startWith(t, binanceVenue("bn", "testnet", true, f), nodetest.WithClock(clock.Now))
	vn := &venueNode{srv: srv, fake: f, c: srv.Client()}
	vn.waitSynced(t, "bn")
	vn.arm(t, "bn", time.Hour)

	buy := accepted(t, vn.c, order("bn", "ETHUSDT", command.Buy, command.Market, "0.1", ""))
	sell := accepted(t, vn.c, order("bn", "BTCUSDT", command.Sell, command.Market, "0.01", ""))
	fees := map[string]string{}
	waitFor(t, "both fills", func() bool {
		snap, err := vn.c.Snapshot(context.Background(), "bn", 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range snap.Events {
			if ev.Kind == node.EventFilled {
				fees[ev.OrderID] = ev.Fee.String()
			}
		}
		return len(fees) == 2
	})
	// 0.0001 ETH at 3000; 0.001 × 600 USDT
	if fees[buy.OrderID] != "0.3" || fees[sell.OrderID] != "0.6" {
		t.Errorf("fills' fees %v (buy %s, sell %s); want 0.3 and 0.6", fees, buy.OrderID, sell.OrderID)
	}

	f.DateTrades(clock.Now())
	sts, err := vn.c.Statement(context.Background(), clock.Now().Format(time.DateOnly), "bn")
	if err != nil {
		t.Fatal(err)
	}
	st := sts[0]
	if !st.Independent || st.NodeFills != 2 || st.VenueFills != 2 {
		t.Fatalf("statement: independent %v, node fills %d, venue fills %d; want true, 2, 2", st.Independent, st.NodeFills, st.VenueFills)
	}
	if len(st.Mismatches) != 0 || !st.NodeFees.Equal(testkit.D("0.9")) || !st.VenueFees.Equal(st.NodeFees) {
		t.Errorf("statement: node fees %s, venue fees %s, mismatches %+v; want 0.9 each and none", st.NodeFees, st.VenueFees, st.Mismatches)
	}
}
