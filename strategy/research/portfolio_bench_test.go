package research

import (
	"context"
	"fmt"
	"testing"
	"time"

	"wicket/internal/project"
	"wicket/strategy/history"
	"wicket/strategy/script"
)

// tenAssetProject is a project whose store holds ten daily series of ten
// years (3,650 bars each, from 2010-01-01 on one calendar), each a
// different stretch of the smoke walk.
func tenAssetProject(b *testing.B) project.Project {
	b.Helper()
	p := project.Project{Root: b.TempDir()}
	s, err := history.Open(p.HistoryPath())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const n, shift = 3650, 211
	walk := script.SmokeBars(n + 10*shift)
	for k := range 10 {
		bars := walk.Slice(k*shift, k*shift+n)
		bars.Series = fmt.Sprintf("A%d-USD@1d", k)
		bars.Time = make([]int64, n)
		for i := range bars.Time {
			bars.Time[i] = 1262304000 + int64(i)*86400
		}
		if err := s.Write(context.Background(), bars.Series, bars, history.WriteOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	return p
}

// The same rule both ways, with one knob: hold an asset while its close
// is above its SMA. As a portfolio, a tenth of equity each on one account,
// rebalanced weekly; as a series-set sweep, each asset alone on all of equity.
const (
	benchPortfolioSweep = `universe = ["*-USD@1d"]
rebalance = "weekly"
length = param.int("length", 200, min=10, max=400, step=10)
def signals(u):
    return {a: (u[a].close > ta.sma(u[a].close, length)) * 0.1 for a in u.assets}
`
	benchSingleSweep = `length = param.int("length", 200, min=10, max=400, step=10)
def signals(bars):
    up = bars.close > ta.sma(bars.close, length)
    return {"long": up, "exit": ~up}
`
)

// BenchmarkPortfolioSweep10Assets10Years sweeps 20 lengths of one rule
// over ten daily assets of ten years with two warm workers, as one
// portfolio strategy and as a series-set sweep of the ten assets run alone,
// and reports each one's combinations/s (a series-set combination is ten
// backtests, a portfolio combination one over all ten assets).
func BenchmarkPortfolioSweep10Assets10Years(b *testing.B) {
	pool, _ := warmPool(b, 2)
	l := NewLocal(Config{ProofSeed: fixedSeed, Project: tenAssetProject(b), Pool: pool})
	grid := Grid{"length": {From: fp(10), To: fp(200), Step: fp(10)}}
	var portfolio, set time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		res, err := l.Sweep(ctxT(b), SweepRequest{StrategyRef: StrategyRef{Source: benchPortfolioSweep, Label: "bench_portfolio.star"}, Grid: grid}, nil)
		portfolio += time.Since(start)
		if err != nil || res.Evaluated != 20 || res.Failed != 0 {
			b.Fatalf("portfolio sweep: %v (%+v)", err, res)
		}
		start = time.Now()
		res, err = l.Sweep(ctxT(b), SweepRequest{StrategyRef: StrategyRef{Source: benchSingleSweep, Label: "bench_single.star"}, Series: "*-USD@1d", Grid: grid}, nil)
		set += time.Since(start)
		if err != nil || res.Evaluated != 20 || res.Failed != 0 || len(res.SeriesSet) != 10 {
			b.Fatalf("series-set sweep: %v (%+v)", err, res)
		}
	}
	b.StopTimer()
	pps := 20 * float64(b.N) / portfolio.Seconds()
	sps := 20 * float64(b.N) / set.Seconds()
	b.ReportMetric(pps, "portfolio-combinations/s")
	b.ReportMetric(sps, "series-set-combinations/s")
	fmt.Printf("ratio portfolio sweep / 10 single runs, combinations/s: %.2f\n", pps/sps)
}
