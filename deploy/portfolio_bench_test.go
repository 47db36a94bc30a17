package deploy

import (
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/strategy"
)

// BenchmarkDeployPortfolioStep measures one calendar bar of the
// three-asset rotation deployed on a paper venue (the forward test's
// rig, the node over loopback HTTP): the legs' bars journaled, the
// worker's decision over 61 bars of each leg, the schedule, and the
// orders of the assets that take a weight sent and booked. ns/op is per
// calendar bar; orders/bar how many of them sent an order.
//
//	go test ./deploy -run '^$' -bench DeployPortfolioStep -benchtime 300x
func BenchmarkDeployPortfolioStep(b *testing.B) {
	const warm = 60
	n := b.N
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	series := []string{"BTC-USD@1m", "ETH-USD@1m", "SOL-USD@1m"}
	all := map[string]strategy.Bars{
		series[0]: walk(series[0], warm+n, 7, 100, start, nil),
		series[1]: walk(series[1], warm+n, 11, 40, start, nil),
		series[2]: walk(series[2], warm+n, 13, 20, start, nil),
	}
	cal := all[series[0]].Time
	g := newPortfolioRig(b, time.Unix(cal[warm], 0).UTC(), all, &multiTape{})
	d, err := g.r.Create(ctxT(b), Spec{Strategy: "rotation.star", Source: rotation, Venue: "paper", Mode: ModeAuto, Capital: decimal.NewFromInt(10000), Warmup: warm})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := warm; i < warm+n; i++ {
		g.step(d.ID, cal[i])
	}
	b.StopTimer()
	b.ReportMetric(float64(len(g.intentsOf(d.ID)))/float64(n), "orders/bar")
}
