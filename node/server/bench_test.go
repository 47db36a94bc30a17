package server_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"wicket/node"
	"wicket/node/binance/binancefake"
	"wicket/node/command"
	"wicket/node/nodetest"
	"wicket/node/venuerig"
)

// BenchmarkConfirmedSubmit measures confirmed submit_order round trips: a
// signed POST /v1/commands, the fold applying the order, its events and
// audit entry committed to the journal (synchronous=FULL), and the
// ticket read back with a long-poll. One client, one order at a time.
func BenchmarkConfirmedSubmit(b *testing.B) {
	srv := nodetest.NewServer(b)
	benchSubmits(b, srv.Client(), "paper", "BTC-USD", "0.01", "node confirmed submit_order (HTTP + HMAC + journal commit)")
}

// BenchmarkConfirmedSubmitBinance is the same round trip through the
// binance adapter and its library to binancefake on loopback: the intent
// and the answer are each committed, so the adapter's and the second
// commit's cost show beside the paper figure.
func BenchmarkConfirmedSubmitBinance(b *testing.B) {
	vn := startVenueNode(b, func(f *binancefake.Fake) venuerig.Venue { return binanceVenue("bn", "testnet", true, f) })
	vn.arm(b, "bn", time.Hour)
	benchSubmits(b, vn.c, "bn", "BTCUSDT", "0.001", "node confirmed submit_order via binance adapter to a loopback fake")
}

// BenchmarkConfirmedSubmitAlpaca is the same through the alpaca adapter.
func BenchmarkConfirmedSubmitAlpaca(b *testing.B) {
	vn := startAlpacaVenue(b, venuerig.Alpaca(b, "100000000", "BTC/USD"), true, "BTC-USD")
	benchSubmits(b, vn.c, "al", "BTC-USD", "0.001", "node confirmed submit_order via alpaca adapter to a loopback fake")
}

// benchSubmits sends alternating market buys and sells one at a time and
// reports orders/s, p50 and p99.
func benchSubmits(b *testing.B, c *node.Client, venue, symbol, qty, label string) {
	ctx := context.Background()
	var lat []time.Duration
	i := 0
	for b.Loop() {
		side := command.Buy
		if i%2 == 1 {
			side = command.Sell
		}
		i++
		cmd := order(venue, symbol, side, command.Market, qty, "")
		start := time.Now()
		out, err := nodetest.Send(ctx, c, command.NewEnvelope(cmd, "benchmark"), 5*time.Second)
		lat = append(lat, time.Since(start))
		if err != nil || out.Status != node.Accepted {
			b.Fatalf("order %d: %+v, %v", i, out, err)
		}
	}
	slices.Sort(lat)
	ms := func(q float64) float64 {
		return float64(lat[min(len(lat)-1, int(q*float64(len(lat))))].Microseconds()) / 1000
	}
	perSec := float64(len(lat)) / b.Elapsed().Seconds()
	b.ReportMetric(perSec, "orders/s")
	b.ReportMetric(ms(0.50), "p50_ms")
	b.ReportMetric(ms(0.99), "p99_ms")
	fmt.Printf("ratio %s: %.0f orders/s, p50 %.2f ms, p99 %.2f ms\n", label, perSec, ms(0.50), ms(0.99))
}

// BenchmarkSnapshotWhileAVenueIsSlow measures GET /v1/snapshot (every
// venue) while one real venue holds its answer to an order: the fold
// answers it as if no venue were slow. The same snapshot with no venue
// held is measured first (untimed), for the ratio.
func BenchmarkSnapshotWhileAVenueIsSlow(b *testing.B) {
	tv := startTwoVenues(b, "")
	ctx := context.Background()
	snap := func() time.Duration {
		start := time.Now()
		if _, err := tv.c.Snapshot(ctx, "", 20); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	var idle []time.Duration
	for range 200 {
		idle = append(idle, snap())
	}
	held, _ := tv.hold(b)
	id, err := tv.c.Submit(ctx, command.NewEnvelope(order("slow", "BTCUSDT", command.Buy, command.Market, "0.01", ""), "benchmark"))
	if err != nil {
		b.Fatal(err)
	}
	waitHeld(b, held)
	var slow []time.Duration
	for b.Loop() {
		slow = append(slow, snap())
	}
	if out, err := tv.c.Ticket(ctx, id, 0); err != nil || out.Status != node.Pending {
		b.Fatalf("the slow venue's answer was not held throughout: %+v %v", out, err)
	}
	p := func(lat []time.Duration, q float64) float64 {
		slices.Sort(lat)
		return float64(lat[min(len(lat)-1, int(q*float64(len(lat))))].Microseconds()) / 1000
	}
	b.ReportMetric(p(slow, 0.50), "p50_ms")
	b.ReportMetric(p(slow, 0.99), "p99_ms")
	fmt.Printf("ratio node snapshot while another venue holds its answer: p50 %.2f ms, p99 %.2f ms (no venue slow: p50 %.2f ms, p99 %.2f ms; p99 ×%.2f)\n",
		p(slow, 0.50), p(slow, 0.99), p(idle, 0.50), p(idle, 0.99), p(slow, 0.99)/p(idle, 0.99))
}
