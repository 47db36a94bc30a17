package deploy

import (
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/strategy/worker"
)

// flip goes long on an up bar and flat on a down bar: on a zigzag tape
// every bar changes the target, so every bar sends an order.
const flip = `"""Long on up bars."""
def signals(bars):
    return {"long": bars.close > bars.open, "exit": bars.close < bars.open, "size": 0.5}
`

// BenchmarkDeployBarToOrder measures bar close → order at the venue (the
// node's paper venue has filled it) for 1 and 50 deployments on 1m bars:
// every deployment's Step for a bar runs at once, each evaluating in the
// pool's workers (two) over its 60-bar warm-up and sending through the
// node's write path. p50 and p99 are over every deployment-bar, and
// ms/deployment-bar is the wall time of a bar over the deployments.
// node-cpu-ms/deployment-bar is the CPU time (user and system, getrusage)
// of this process around the loop: the node and the runner, which share
// the wicket node serve process in production; worker-cpu-ms/deployment-bar
// is the strategy workers' (child processes, counted once the pool has
// closed and reaped them), their start and the deploy-time checks
// included.
func BenchmarkDeployBarToOrder(b *testing.B) {
	for _, n := range []int{1, 50} {
		b.Run(fmt.Sprintf("deployments=%d", n), func(b *testing.B) {
			g := newRig(b)
			p, err := worker.NewPool(worker.Config{Size: 2})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { p.Close() })
			g.pool = p
			g.restart()
			children0, _ := cpuTime(true)
			ids := make([]string, n)
			for i := range ids {
				ids[i] = g.deploy(Spec{Strategy: "flip.star", Source: flip, Capital: decimal.NewFromInt(1000), Warmup: 60}).ID
			}
			cs := make([]float64, 0, b.N+1)
			for i := range b.N + 1 {
				cs = append(cs, 100+float64(i%2))
			}
			bars := path(cs...)
			var lat []time.Duration
			var mu sync.Mutex
			b.ResetTimer()
			self0, _ := cpuTime(false)
			for i := 1; i <= b.N; i++ {
				g.clk.Set(bars[i].Time.Add(time.Minute))
				g.mkt.set(decimal.NewFromFloat(bars[i].Close))
				g.ns.Tick(b, 1)
				var wg sync.WaitGroup
				for _, id := range ids {
					wg.Add(1)
					go func() {
						defer wg.Done()
						t0 := time.Now()
						if err := g.r.Step(ctxT(b), id, bars[i]); err != nil {
							b.Error(err)
						}
						d := time.Since(t0)
						mu.Lock()
						lat = append(lat, d)
						mu.Unlock()
					}()
				}
				wg.Wait()
			}
			self1, measured := cpuTime(false)
			b.StopTimer()
			p.Close()
			children1, _ := cpuTime(true)
			orders := 0
			for _, id := range ids {
				for _, in := range g.intents(id) {
					if in.Status == IntentFilled || in.Status == IntentPending {
						orders++ // pending: the node took it and had not answered within node.TicketWait
					} else {
						b.Logf("%s %s: %s", in.ClientOrderID, in.Status, in.Note)
					}
				}
			}
			if orders < n*b.N {
				b.Fatalf("%d orders sent over %d deployment-bars: the fixture should trade every bar", orders, n*b.N)
			}
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(n*b.N), "ms/deployment-bar")
			if measured {
				b.ReportMetric(float64((self1-self0).Microseconds())/1000/float64(n*b.N), "node-cpu-ms/deployment-bar")
				b.ReportMetric(float64((children1-children0).Microseconds())/1000/float64(n*b.N), "worker-cpu-ms/deployment-bar")
			}
		})
	}
}
