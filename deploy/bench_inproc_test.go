package deploy

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/node"
	"wicket/node/command"
	"wicket/node/nodetest"
	"wicket/strategy/worker"
)

// BenchmarkDeployConn measures bar close → order at the venue (the node's
// paper venue has filled it) for 1, 50 and 500 deployments on 1m bars,
// with the runner reaching its node over HTTP (node.Client, loopback,
// signed: how wicket node serve wired it before) and in process
// (server.Local: how it is wired now). The rig is
// BenchmarkDeployBarToOrder's (newRig, the flip strategy on a zigzag tape,
// two workers), with one change: the node takes one mark step per bar, as
// a node ticking on its clock does, not one more before every order
// (marketConn), so the node's work per order is the order's own. p50 and
// p99 are over every deployment-bar (each Step, from the bar handed over
// to the order filled and booked); node-cpu-ms/deployment-bar is this
// process's CPU (the node and the runner, which share wicket node serve)
// over the loop, the strategy workers' excluded; node-calls/order counts
// the runner's calls to its node per order sent.
//
//	go test ./deploy -run '^$' -bench DeployConn -benchtime 20x
func BenchmarkDeployConn(b *testing.B) {
	for _, n := range []int{1, 50, 500} {
		for _, via := range []string{"http", "inprocess"} {
			b.Run(fmt.Sprintf("deployments=%d/conn=%s", n, via), func(b *testing.B) {
				benchDeployConn(b, n, via)
			})
		}
	}
}

func benchDeployConn(b *testing.B, n int, via string) {
	// One venue holds every deployment's position: its limits are the
	// deployments' sum, as an operator running 500 would set them.
	cfg := venueConfig()
	cfg.Venues[0].Cash = decimal.NewFromInt(int64(n) * 10_000)
	cfg.Venues[0].Marks = "binance"
	cfg.Guardrail.MaxPositionNotional = decimal.NewFromInt(int64(n) * 10_000)
	g := newRig(b, nodetest.WithConfig(cfg))
	p, err := worker.NewPool(worker.Config{Size: 2})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { p.Close() })
	g.pool = p
	var c countingConn
	switch via {
	case "http":
		c.conn = g.ns.Client(node.WithClock(g.clk.Now))
	default:
		c.conn = g.ns.Local(node.KeyControl)
	}
	g.conn = &c
	g.restart()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = g.deploy(Spec{Strategy: "flip.star", Source: flip, Capital: decimal.NewFromInt(1000), Warmup: 60}).ID
	}
	cs := make([]float64, 0, b.N+1)
	for i := range b.N + 1 {
		cs = append(cs, 100+float64(i%2))
	}
	bars := path(cs...)
	lat := make([]time.Duration, 0, n*b.N)
	var mu sync.Mutex
	c.calls.Store(0)
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
	calls := c.calls.Load()
	orders, pending := 0, 0
	for _, id := range ids {
		for _, in := range g.intents(id) {
			switch in.Status {
			case IntentFilled:
				orders++
			case IntentPending: // the node took it and had not answered within node.TicketWait
				orders++
				pending++
			default:
				b.Logf("%s %s: %s", in.ClientOrderID, in.Status, in.Note)
			}
		}
	}
	if orders < n*b.N {
		b.Fatalf("%d orders sent over %d deployment-bars: the fixture should trade every bar", orders, n*b.N)
	}
	b.ReportMetric(float64(pending)/float64(orders), "pending/order")
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(n*b.N), "ms/deployment-bar")
	b.ReportMetric(float64(calls)/float64(n*b.N), "node-calls/order")
	if measured {
		b.ReportMetric(float64((self1-self0).Microseconds())/1000/float64(n*b.N), "node-cpu-ms/deployment-bar")
	}
}

// countingConn counts the runner's calls to its node.
type countingConn struct {
	conn interface {
		node.Conn
		Audit(ctx context.Context, q node.AuditQuery) (node.AuditPage, error)
	}
	calls atomic.Int64
}

func (c *countingConn) Snapshot(ctx context.Context, venue string, events int) (*node.Snapshot, error) {
	c.calls.Add(1)
	return c.conn.Snapshot(ctx, venue, events)
}

func (c *countingConn) DryRun(ctx context.Context, env command.Envelope) (node.Verdict, error) {
	c.calls.Add(1)
	return c.conn.DryRun(ctx, env)
}

func (c *countingConn) Submit(ctx context.Context, env command.Envelope) (string, error) {
	c.calls.Add(1)
	return c.conn.Submit(ctx, env)
}

func (c *countingConn) Ticket(ctx context.Context, id string, wait time.Duration) (node.Outcome, error) {
	c.calls.Add(1)
	return c.conn.Ticket(ctx, id, wait)
}

func (c *countingConn) Audit(ctx context.Context, q node.AuditQuery) (node.AuditPage, error) {
	c.calls.Add(1)
	return c.conn.Audit(ctx, q)
}
