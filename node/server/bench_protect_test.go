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

// BenchmarkConfirmedOCOBinance measures confirmed oco round trips through
// the node to binancefake: a signed POST /v1/commands, both legs journaled
// pending, one orderList/oco to the fake, the answer committed, the ticket
// read back. Each oco is then canceled (not timed) so the book stays the
// same size.
func BenchmarkConfirmedOCOBinance(b *testing.B) {
	vn := startVenueNode(b, bnVenue)
	vn.arm(b, "bn", time.Hour)
	benchOCOs(b, vn.c, ocoCmd("0.001", "60600", "59400", "59300"), "bn", "node confirmed oco via binance adapter (one orderList) to a loopback fake")
}

// BenchmarkConfirmedOCOAlpaca is the same through the alpaca adapter (one
// order with order_class oco).
func BenchmarkConfirmedOCOAlpaca(b *testing.B) {
	vn, _ := startAlpacaNode(b)
	c := order("al", "SPY", command.Sell, command.OCO, "1", "505")
	c.StopPrice = testkit.D("495")
	benchOCOs(b, vn.c, c, "al", "node confirmed oco via alpaca adapter (order_class oco) to a loopback fake")
}

func benchOCOs(b *testing.B, c *node.Client, oco command.Command, venue, label string) {
	ctx := context.Background()
	var lat []time.Duration
	var spent time.Duration
	for b.Loop() {
		start := time.Now()
		out, err := nodetest.Send(ctx, c, command.NewEnvelope(oco, "benchmark"), 5*time.Second)
		took := time.Since(start)
		lat, spent = append(lat, took), spent+took
		if err != nil || out.Status != node.Accepted || len(out.OrderIDs) != 2 {
			b.Fatalf("oco %d: %+v, %v", len(lat), out, err)
		}
		if _, err := nodetest.Send(ctx, c, command.NewEnvelope(command.Command{Verb: command.CancelOrder, Venue: venue, OrderID: out.OrderID}, "benchmark"), 5*time.Second); err != nil {
			b.Fatalf("cancel %d: %v", len(lat), err)
		}
	}
	slices.Sort(lat)
	ms := func(q float64) float64 {
		return float64(lat[min(len(lat)-1, int(q*float64(len(lat))))].Microseconds()) / 1000
	}
	perSec := float64(len(lat)) / spent.Seconds()
	b.ReportMetric(perSec, "ocos/s")
	b.ReportMetric(ms(0.50), "p50_ms")
	b.ReportMetric(ms(0.99), "p99_ms")
	fmt.Printf("ratio %s: %.0f ocos/s, p50 %.2f ms, p99 %.2f ms\n", label, perSec, ms(0.50), ms(0.99))
}
