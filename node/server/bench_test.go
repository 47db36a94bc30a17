package server_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"wicket/node"
	"wicket/node/command"
	"wicket/node/nodetest"
)

// BenchmarkConfirmedSubmit measures confirmed submit_order round trips: a
// signed POST /v1/commands, the fold applying the order, its events and
// audit entry committed to the journal (WAL, synchronous=FULL), and the
// ticket read back with a long-poll. One client, one order at a time.
func BenchmarkConfirmedSubmit(b *testing.B) {
	srv := nodetest.NewServer(b)
	c := srv.Client()
	ctx := context.Background()
	var lat []time.Duration
	i := 0
	for b.Loop() {
		side := command.Buy
		if i%2 == 1 {
			side = command.Sell
		}
		i++
		cmd := order("paper", "BTC-USD", side, command.Market, "0.01", "")
		start := time.Now()
		out, err := c.Send(ctx, command.NewEnvelope(cmd, "benchmark"), 5*time.Second)
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
	fmt.Printf("ratio node confirmed submit_order (HTTP + HMAC + journal commit): %.0f orders/s, p50 %.2f ms, p99 %.2f ms\n", perSec, ms(0.50), ms(0.99))
}
