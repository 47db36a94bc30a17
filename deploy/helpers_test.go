package deploy

import (
	"context"
	"crypto/ed25519"
	"io"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/command"
	"wicket/node/nodetest"
	"wicket/node/server"
	"wicket/strategy"
	"wicket/strategy/ta"
	"wicket/strategy/worker"
	"wicket/strategy/worker/handlers"
)

func TestMain(m *testing.M) {
	worker.ServeIfWorker(handlers.New(ta.NewMemo(worker.MemoBytes)))
	os.Exit(m.Run())
}

const symbol = "BTC-USD"

// smaHalf goes half long on a fast SMA crossing above a slow one and
// exits on the cross below: windowed indicators, many trades.
const smaHalf = `"""SMA crossover, half the equity."""
fast = param.int("fast", 5, min=2, max=200, doc="fast SMA length")
slow = param.int("slow", 20, min=3, max=400, doc="slow SMA length")

def signals(bars):
    f = ta.sma(bars.close, fast)
    s = ta.sma(bars.close, slow)
    return {"long": ta.cross_above(f, s), "exit": ta.cross_below(f, s), "size": 0.5}
`

// tape is n 1m bars of a seeded walk whose every open is the previous
// close (a 24/7 market: the first mark after bar t's close is bar t+1's
// open), prices in cents.
func tape(n int, seed uint64, start time.Time) strategy.Bars {
	b := strategy.Bars{Series: symbol + "@1m"}
	x := seed
	price := 100.0
	for i := range n {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		step := (float64(x%2001) - 1000) / 1000 * 0.004 // up to 0.4% a bar
		open := price
		cl := math.Round(open*(1+step)*100) / 100
		hi, lo := math.Max(open, cl)+0.05, math.Min(open, cl)-0.05
		appendBar(&b, start.Add(time.Duration(i)*time.Minute).Unix(), open, hi, lo, cl, 1)
		price = cl
	}
	return b
}

// venueConfig is a paper venue whose prices and quantities carry 8
// decimals, so mark × (1 ± slippage) and the fills are exact.
func venueConfig() project.Config {
	cfg := project.Defaults()
	v := &cfg.Venues[0]
	v.Cash = decimal.NewFromInt(1_000_000)
	v.PriceDecimals, v.QuantityDecimals = 8, 8
	cfg.Guardrail.PriceCollarPct = 50
	return cfg
}

// fakeTape is a BarSource over recorded bars: before it hands over bar
// i it moves the clock to the bar's close and the market's price (the
// paper venue's mark feed) to the bar's close, which is the next bar's
// open.
type fakeTape struct {
	bars  []Bar
	i     int
	clock *testkit.Clock
	price *price
	gran  time.Duration
	// stop, when set, ends the tape before bar stop (io.EOF).
	stop int
}

func (f *fakeTape) Next(ctx context.Context, series string, after time.Time) (Bar, error) {
	if f.i >= len(f.bars) || (f.stop > 0 && f.i >= f.stop) {
		return Bar{}, io.EOF
	}
	b := f.bars[f.i]
	f.clock.Set(b.Time.Add(f.gran))
	f.price.set(decimal.NewFromFloat(b.Close))
	f.i++
	return b, nil
}

// price is the market's last price: the paper venue's mark feed.
type price struct {
	mu sync.Mutex
	p  decimal.Decimal
}

func (p *price) set(v decimal.Decimal) { p.mu.Lock(); p.p = v; p.mu.Unlock() }

func (p *price) Mark(string) (decimal.Decimal, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.p, p.p.IsPositive()
}

// marketConn is the runner's client of the node, with the node taking
// its mark step (reading the market's price) just before each order
// reaches it: the first mark after a bar's close is the price then.
type marketConn struct {
	*node.Client
	t    testing.TB
	node *nodetest.Server
}

func (c marketConn) Submit(ctx context.Context, env command.Envelope) (string, error) {
	c.node.Tick(c.t, 1)
	return c.Client.Submit(ctx, env)
}

// DryRun takes the same mark step first: the node's answer about an
// order is about the price then, as it would be live.
func (c marketConn) DryRun(ctx context.Context, env command.Envelope) (node.Verdict, error) {
	c.node.Tick(c.t, 1)
	return c.Client.DryRun(ctx, env)
}

func newPool(t testing.TB) *worker.Pool {
	t.Helper()
	p, err := worker.NewPool(worker.Config{Size: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func openStore(t testing.TB, dir string) *Store {
	t.Helper()
	s, err := OpenStore(filepath.Join(dir, "deployments.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func ctxT(t testing.TB) context.Context {
	// A guard against a hang, not a timing assertion.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// paperNode is a node whose paper venue takes its marks from p.
func paperNode(t testing.TB, cfg project.Config, p *price, now func() time.Time, opts ...nodetest.Option) *nodetest.Server {
	cfg.Venues[0].Marks = "binance"
	opts = append([]nodetest.Option{nodetest.WithConfig(cfg), nodetest.WithMarks(map[string]server.MarkFeed{"paper": p}),
		nodetest.WithClock(now)}, opts...)
	return nodetest.NewServer(t, opts...)
}

func seq() func() string {
	var mu sync.Mutex
	n := 0
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		n++
		return "0000000000" + string(rune('a'+n%26)) + decimal.NewFromInt(int64(n)).String()
	}
}

// dp is a decimal limit of an allowance.
func dp(v int64) *decimal.Decimal {
	d := decimal.NewFromInt(v)
	return &d
}

// operatorArms arms auto deployment id on r for span as an operator at a
// terminal does: a challenge, signed with key.
func operatorArms(t *testing.T, r *Runner, id string, key ed25519.PrivateKey, span string) {
	t.Helper()
	ch, err := r.Challenge(ActArm, id)
	if err != nil {
		t.Fatal(err)
	}
	req := node.ArmRequest{For: span, Confirm: id, Challenge: ch}
	req.Signature = node.SignOperator(key, Statement(ActArm, id, req))
	if _, err := r.Arm(id, req); err != nil {
		t.Fatal(err)
	}
}
