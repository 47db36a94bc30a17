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
	up, down := mark.Mul(d("1.05")).Round(2), mark.Mul(d("0.95")).Round(2)
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
