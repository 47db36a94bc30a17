package server_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/command"
	"wicket/node/nodetest"
)

// BenchmarkConfirmedBracket measures confirmed bracket round trips to a
// paper venue: one signed POST of a market-entry bracket, the fold placing
// its three legs (the entry fills, the two exits rest), the events and
// audit entry committed to the journal, the ticket read back. Each bracket
// is then canceled by its group id (not timed) and the next one is on the
// other side, so the book and the position stay flat.
func BenchmarkConfirmedBracket(b *testing.B) {
	srv := nodetest.NewServer(b)
	c := srv.Client()
	ctx := context.Background()
	mark := snapshotB(b, c).Venues[0].Marks["BTC-USD"] // the one venue of the default config
	up, down := mark.Mul(testkit.D("1.05")).Round(2), mark.Mul(testkit.D("0.95")).Round(2)
	var lat []time.Duration
	i := 0
	for b.Loop() {
		br := bracket(command.Buy, "0.01", "", up.String(), down.String())
		if i%2 == 1 {
			br = bracket(command.Sell, "0.01", "", down.String(), up.String())
		}
		i++
		start := time.Now()
		out, err := nodetest.Send(ctx, c, command.NewEnvelope(br, "benchmark"), 5*time.Second)
		lat = append(lat, time.Since(start))
		if err != nil || out.Status != node.Accepted || len(out.OrderIDs) != 3 {
			b.Fatalf("bracket %d: %+v, %v", i, out, err)
		}
		cx, err := nodetest.Send(ctx, c, command.NewEnvelope(command.Command{Verb: command.CancelOrder, Venue: "paper", OrderID: out.OrderID}, "benchmark"), 5*time.Second)
		if err != nil || len(cx.Canceled) != 2 {
			b.Fatalf("cancel of bracket %d: %+v, %v", i, cx, err)
		}
	}
	slices.Sort(lat)
	var total time.Duration
	for _, l := range lat {
		total += l
	}
	ms := func(q float64) float64 {
		return float64(lat[min(len(lat)-1, int(q*float64(len(lat))))].Microseconds()) / 1000
	}
	perSec := float64(len(lat)) / total.Seconds()
	b.ReportMetric(perSec, "brackets/s")
	b.ReportMetric(ms(0.50), "p50_ms")
	b.ReportMetric(ms(0.99), "p99_ms")
	fmt.Printf("ratio node confirmed bracket to paper (3 legs, HTTP + HMAC + journal commit): %.0f brackets/s, p50 %.2f ms, p99 %.2f ms\n", perSec, ms(0.50), ms(0.99))
}

func snapshotB(b *testing.B, c *node.Client) *node.Snapshot {
	b.Helper()
	s, err := c.Snapshot(context.Background(), "", 0)
	if err != nil {
		b.Fatalf("snapshot: %v", err)
	}
	return s
}

// BenchmarkConfirmedBracketAlpaca measures confirmed bracket round trips
// through the node to alpacafake: one signed POST of a market-entry
// bracket, its three legs journaled pending, one order_class bracket
// request, Alpaca's answer (the entry filled, its legs released) committed
// for each leg, the ticket read back. Each bracket is then canceled by its
// group (not timed); the next is on the other side.
func BenchmarkConfirmedBracketAlpaca(b *testing.B) {
	vn, _ := startAlpacaNode(b)
	benchVenueBrackets(b, vn, "al", "SPY", "1", "525", "475", nil,
		"node confirmed bracket via alpaca adapter (one order_class bracket) to a loopback fake")
}

// BenchmarkConfirmedBracketBinance is the round trip at binancefake until
// the position is protected: the entry (its intent and answer committed),
// then the node's one orderList/oco of the exits (their order_sent
// committed, the answer committed), timed until the node shows the
// stop-loss open at the venue.
func BenchmarkConfirmedBracketBinance(b *testing.B) {
	vn := startVenueNode(b, bnVenue)
	vn.arm(b, "bn", time.Hour)
	benchVenueBrackets(b, vn, "bn", "BTCUSDT", "0.001", "60600", "59400", func(out node.Outcome) bool {
		o, ok := openIn(vn.venue(b, "bn"), out.OrderIDs[2])
		return ok && o.Status == node.OrderOpen && o.VenueOrderID != ""
	}, "node confirmed bracket via binance adapter (entry, then one orderList) to a loopback fake")
}

// benchVenueBrackets sends market-entry brackets one at a time, buys and
// sells in turn (the sell's exits mirrored), each timed until its ticket
// is accepted and, when protected is given, until it says so.
func benchVenueBrackets(b *testing.B, vn *venueNode, venue, symbol, qty, up, down string, protected func(node.Outcome) bool, label string) {
	ctx := context.Background()
	var lat []time.Duration
	var spent time.Duration
	i := 0
	for b.Loop() {
		br := bracketCmd(venue, symbol, qty, "", up, down, "")
		if i%2 == 1 {
			br.Side, br.TakeProfit, br.StopPrice = command.Sell, testkit.D(down), testkit.D(up)
		}
		i++
		start := time.Now()
		out, err := nodetest.Send(ctx, vn.c, command.NewEnvelope(br, "benchmark"), 5*time.Second)
		if err != nil || out.Status != node.Accepted || len(out.OrderIDs) != 3 {
			b.Fatalf("bracket %d: %+v, %v", i, out, err)
		}
		for n := 0; protected != nil && !protected(out); n++ {
			if n > 10000 {
				b.Fatalf("bracket %d: its exits never placed", i)
			}
		}
		took := time.Since(start)
		lat, spent = append(lat, took), spent+took
		if _, err := nodetest.Send(ctx, vn.c, command.NewEnvelope(command.Command{Verb: command.CancelOrder, Venue: venue, OrderID: out.OrderIDs[1]}, "benchmark"), 5*time.Second); err != nil {
			b.Fatalf("cancel of bracket %d: %v", i, err)
		}
	}
	slices.Sort(lat)
	ms := func(q float64) float64 {
		return float64(lat[min(len(lat)-1, int(q*float64(len(lat))))].Microseconds()) / 1000
	}
	perSec := float64(len(lat)) / spent.Seconds()
	b.ReportMetric(perSec, "brackets/s")
	b.ReportMetric(ms(0.50), "p50_ms")
	b.ReportMetric(ms(0.99), "p99_ms")
	fmt.Printf("ratio %s: %.0f brackets/s, p50 %.2f ms, p99 %.2f ms\n", label, perSec, ms(0.50), ms(0.99))
}
