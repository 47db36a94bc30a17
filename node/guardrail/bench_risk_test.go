package guardrail

import (
	"slices"
	"testing"
	"time"

	"wicket/internal/testkit"
	"wicket/node/command"
)

// BenchmarkCheckEveryRiskCheck is the node's cost per order with every
// [guardrail] and [risk] check on (a limit order checked against the
// mark, the position, a resting order for self-trade, the ledger's
// message windows, daily notional and identical orders), then recorded;
// one order a millisecond, so about a thousand messages stay in the 1s
// window. It reports the p99 of one check beside the mean.
// "every" is the node's Admit (details of failed checks only);
// "every-preview" is CheckWith, which writes every check's detail for a
// preview; "guardrail" is the [guardrail] checks alone, for comparison.
func BenchmarkCheckEveryRiskCheck(b *testing.B) {
	every := riskConfig()
	every.Risk.MaxMessages, every.Risk.MaxDeploymentMessages, every.Risk.MaxIdenticalOrders = 100000, 100000, 100000
	b.Run("guardrail", func(b *testing.B) { g := New(config()); benchCheck(b, g, g.Admit) })
	b.Run("every", func(b *testing.B) { g := New(every); benchCheck(b, g, g.Admit) })
	b.Run("every-preview", func(b *testing.B) { g := New(every); benchCheck(b, g, g.CheckWith) })
}

func benchCheck(b *testing.B, g *Guardrail, check func(command.Command, View, *Activity) Report) {
	l := NewLedger()
	v := restingView{view}
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	prices := []string{"39500", "39600", "39700", "39800"}
	cmds := make([]command.Command, len(prices))
	for i, p := range prices {
		cmds[i] = submit(command.Buy, command.Limit, "0.1", p)
	}
	l.Filled("paper", now, testkit.D("1000"))
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		now = now.Add(time.Millisecond)
		c := cmds[i%len(cmds)]
		t0 := time.Now()
		rep := check(c, v, &Activity{Ledger: l, Deployment: "dep-a", Now: now})
		if rep.OK {
			g.Record(l, c, "dep-a", now)
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns/op")
	}
}
