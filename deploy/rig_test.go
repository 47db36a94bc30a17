package deploy

import (
	"context"
	"crypto/ed25519"
	"path/filepath"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/nodetest"
	"wicket/strategy"
)

// rig is a paper node, a deployments journal and a worker pool, and the
// runner over them, restartable on the same journal.
type rig struct {
	t     testing.TB
	clk   *testkit.Clock
	mkt   *price
	ns    *nodetest.Server
	conn  node.Conn
	pool  Strategies
	dir   string
	store *Store
	r     *Runner
	hist  History
	res   Research
	plans Plans
}

func newRig(t testing.TB, opts ...nodetest.Option) *rig {
	g := &rig{t: t, clk: testkit.NewClock(time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)), mkt: &price{}, pool: newPool(t), dir: t.TempDir()}
	g.ns = paperNode(t, venueConfig(), g.mkt, g.clk.Now, opts...)
	g.conn = marketConn{Client: g.ns.Client(node.WithClock(g.clk.Now)), t: t, node: g.ns}
	g.start()
	return g
}

// start opens the journal and makes a runner over it (again after a
// restart).
func (g *rig) start() {
	g.t.Helper()
	s, err := OpenStore(filepath.Join(g.dir, "deployments.db"))
	if err != nil {
		g.t.Fatal(err)
	}
	g.store = s
	g.t.Cleanup(func() { s.Close() })
	cfg := g.ns.Config
	cfg.Venues = append(cfg.Venues[:0:0], cfg.Venues...)
	g.r, err = New(ctxT(g.t), Config{Project: cfg, Store: s, Node: g.conn, Strategies: g.pool, Now: g.clk.Now, NewID: seq(), History: g.hist, Research: g.res, Plans: g.plans,
		OperatorKey: g.ns.OperatorKey.Public().(ed25519.PublicKey)})
	if err != nil {
		g.t.Fatal(err)
	}
}

// restart drops the runner as a killed process would and starts another.
func (g *rig) restart() {
	g.t.Helper()
	g.store.Close()
	g.start()
}

func (g *rig) deploy(spec Spec) Deployment {
	g.t.Helper()
	if spec.Strategy == "" {
		spec.Strategy, spec.Source = "sma_half.star", smaHalf
	}
	spec.Series, spec.Venue = symbol+"@1m", "paper"
	if spec.Mode == "" {
		spec.Mode = ModeAuto
	}
	if spec.Capital.IsZero() {
		spec.Capital = decimal.NewFromInt(10000)
	}
	if spec.Warmup == 0 {
		spec.Warmup = 40
	}
	d, err := g.r.Create(ctxT(g.t), spec)
	if err != nil {
		g.t.Fatal(err)
	}
	return d
}

// step hands bar b of bars to the runner at its close, the market at its
// close.
func (g *rig) step(id string, bars []Bar, i int) {
	g.t.Helper()
	g.clk.Set(bars[i].Time.Add(time.Minute))
	g.mkt.set(decimal.NewFromFloat(bars[i].Close))
	if err := g.r.Step(ctxT(g.t), id, bars[i]); err != nil {
		g.t.Fatal(err)
	}
}

func (g *rig) intents(id string) []Intent {
	g.t.Helper()
	in, err := g.store.Intents(id)
	if err != nil {
		g.t.Fatal(err)
	}
	return in
}

// nodeOrders counts the node's orders (fills) with client order id cid.
func (g *rig) nodeOrders(cid string) int {
	g.t.Helper()
	page, err := g.ns.Client(node.WithClock(g.clk.Now)).Audit(context.Background(), node.AuditQuery{ClientOrderID: cid, Limit: 100})
	if err != nil {
		g.t.Fatal(err)
	}
	n := 0
	for _, e := range page.Entries {
		if e.Outcome.Status == node.Accepted {
			n++
		}
	}
	return n
}

// path makes 1m bars whose closes are cs, each open the previous close.
func path(cs ...float64) []Bar {
	b := strategy.Bars{Series: symbol + "@1m"}
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	prev := cs[0]
	for i, c := range cs {
		appendBar(&b, start.Add(time.Duration(i)*time.Minute).Unix(), prev, max(prev, c)+0.01, min(prev, c)-0.01, c, 1)
		prev = c
	}
	return Bars(b)
}
