package server_test

import (
	"context"
	"testing"
	"time"

	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/command"
)

// BenchmarkKill is kill-to-last-cancel: the operator's kill from its
// request to its answer, which comes once every working order is
// canceled (at the venue fakes, once each venue confirmed), with 200
// working orders: all on paper, all at the Binance fake (its own
// cancel-all, one call), or 100 each at the Binance and Alpaca fakes
// (each venue on its own lane; Alpaca one order a call). Each
// iteration places the orders again and resumes trading, off the clock.
func BenchmarkKill(b *testing.B) {
	b.Run("paper-200", func(b *testing.B) {
		k := newKillRig(b)
		s, err := k.c.Snapshot(context.Background(), "paper", 0)
		if err != nil {
			b.Fatal(err)
		}
		limit := s.Venues[0].Marks["BTC-USD"].Mul(testkit.D("0.95")).Round(2).String()
		place := func() {
			for range 200 {
				benchAccepted(b, k.c, order("paper", "BTC-USD", command.Buy, command.Limit, "0.001", limit))
			}
		}
		benchKill(b, k, place)
	})
	b.Run("binance-200", func(b *testing.B) { // one cancel-all
		k := newKillRig(b)
		place := func() {
			for range 200 {
				benchAccepted(b, k.c, order("bn", "BTCUSDT", command.Buy, command.Limit, "0.001", "59000"))
			}
		}
		benchKill(b, k, place)
	})
	b.Run("binance-100+alpaca-100", func(b *testing.B) {
		k := newKillRig(b)
		place := func() {
			for range 100 {
				benchAccepted(b, k.c, order("bn", "BTCUSDT", command.Buy, command.Limit, "0.001", "59000"))
				benchAccepted(b, k.c, order("al", "BTC-USD", command.Buy, command.Limit, "0.001", "59000"))
			}
		}
		benchKill(b, k, place)
	})
}

func benchKill(b *testing.B, k *killRig, place func()) {
	ctx := context.Background()
	canceled := 0
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		place()
		b.StartTimer()
		rep, err := k.c.Kill(ctx, false, "bench", k.srv.OperatorKey)
		b.StopTimer()
		if err != nil || len(rep.Unconfirmed) > 0 {
			b.Fatalf("kill: %v %v", err, rep.Unconfirmed)
		}
		canceled += len(rep.Canceled)
		if _, err := k.c.ResumeTrading(ctx, "", k.srv.OperatorKey); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(canceled)/float64(b.N), "canceled/op")
}

func benchAccepted(b *testing.B, c *node.Client, cmd command.Command) {
	out, err := c.Submit(context.Background(), command.NewEnvelope(cmd, ""))
	if err != nil {
		b.Fatal(err)
	}
	o, err := c.Ticket(context.Background(), out, 5*time.Second)
	if err != nil || o.Status != node.Accepted {
		b.Fatalf("%s: %v %+v", cmd, err, o)
	}
}
