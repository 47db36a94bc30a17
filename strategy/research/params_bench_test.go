package research

import (
	"context"
	"slices"
	"testing"
	"time"

	"wicket/internal/project"
	"wicket/strategy/history"
)

// BenchmarkSweepParamsCold1M is the serial part of a cold million-bar
// sweep on two workers: the plan (SweepTiming.Plan, which holds the
// params request, Params, in which a worker reads the bars from the
// store, writes the shared bars file and names it by their digest)
// before any chunk starts. Each op sweeps once on a fresh warm pool, so
// its workers have not seen the bars. "written" is a series written
// whole, whose digest the store keeps; "appended" the same bars with the
// last thousand appended since by a handle still open, whose shared file
// is hashed. It reports
// the median and the fastest plan and params request over the ops.
func BenchmarkSweepParamsCold1M(b *testing.B) {
	bars := sineBars(1_000_000)
	appended := func(b *testing.B) project.Project {
		p := project.Project{Root: b.TempDir()}
		s, err := history.Open(p.HistoryPath())
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() }) // closed, it would store the digest
		n := bars.Len()
		if err := s.Write(context.Background(), "BENCH@1h", bars.Slice(0, n-1000), history.WriteOptions{}); err != nil {
			b.Fatal(err)
		}
		if err := s.Append(context.Background(), "BENCH@1h", bars.Slice(n-1000, n), history.AppendOptions{Source: history.SourceImport}); err != nil {
			b.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name    string
		project func(*testing.B) project.Project
	}{
		{"written", func(b *testing.B) project.Project { return benchProject(b, b.TempDir(), bars) }},
		{"appended", appended},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.StopTimer()
			p := tc.project(b)
			req := SweepRequest{StrategyRef: templateRef(b, "sma_cross"), Series: "BENCH@1h", Grid: refGrid, Costs: refCosts}
			var plans, params []time.Duration
			for range b.N {
				pool, _ := warmPool(b, 2)
				var tm SweepTiming
				l := NewLocal(Config{ProofSeed: fixedSeed, Project: p, Pool: pool, Timing: func(t SweepTiming) { tm = t }})
				b.StartTimer()
				_, err := l.Sweep(ctxT(b), req, nil)
				b.StopTimer()
				pool.Close()
				if err != nil {
					b.Fatal(err)
				}
				plans, params = append(plans, tm.Plan), append(params, tm.Params)
			}
			slices.Sort(plans)
			slices.Sort(params)
			b.ReportMetric(ms(plans[len(plans)/2]), "plan-ms")
			b.ReportMetric(ms(plans[0]), "plan-min-ms")
			b.ReportMetric(ms(params[len(params)/2]), "params-ms")
			b.ReportMetric(ms(params[0]), "params-min-ms")
		})
	}
}
