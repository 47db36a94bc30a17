package deploy

import (
	"context"
	"crypto/ed25519"
	"io"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/nodetest"
	"wicket/node/server"
	"wicket/strategy"
	"wicket/strategy/backtest"
	"wicket/strategy/portfolio"
	"wicket/strategy/script"
	"wicket/strategy/ta"
	"wicket/strategy/worker"
)

// rotation holds the one asset of three with the strongest momentum,
// rebalanced when the pick changes or a holding drifts 5 % from its
// weight: windowed reads only (its decision does not depend on where its
// history began), and a rebalance every few dozen bars.
const rotation = `"""Top-1 momentum rotation over three assets."""
universe = ["BTC-USD@1m", "ETH-USD@1m", "SOL-USD@1m"]
rebalance = "drift:0.05"
lookback = param.int("lookback", 15, min=2, max=200, doc="momentum window")

def signals(u):
    mom = {a: ta.roc(u[a].close, lookback) for a in u.assets}
    top = u.top(mom, 1)
    return {a: top[a] * 0.9 for a in u.assets}
`

// marks is the market's last price of each symbol: the paper venue's
// mark feed.
type marks struct {
	mu sync.Mutex
	p  map[string]decimal.Decimal
}

func (m *marks) set(sym string, v decimal.Decimal) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.p == nil {
		m.p = map[string]decimal.Decimal{}
	}
	m.p[sym] = v
}

func (m *marks) Mark(sym string) (decimal.Decimal, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.p[sym]
	return p, p.IsPositive()
}

// multiTape is a BarSource over recorded bars of several series: handing
// over a series' next bar, it moves the clock to that bar's close (never
// back) and the series' market price to its close, the open of its next
// bar.
type multiTape struct {
	mu    sync.Mutex
	bars  map[string][]Bar
	clock *testkit.Clock
	marks *marks
	gran  time.Duration
}

func (f *multiTape) Next(ctx context.Context, series string, after time.Time) (Bar, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, b := range f.bars[series] {
		if b.Time.After(after) {
			if c := b.Time.Add(f.gran); c.After(f.clock.Now()) {
				f.clock.Set(c)
			}
			sym, _, _ := strategy.ParseSeries(series)
			f.marks.set(sym, decimal.NewFromFloat(b.Close))
			return b, nil
		}
	}
	return Bar{}, io.EOF
}

// walk is n 1m bars of series from start: a seeded walk whose every open
// is the series' previous close, prices in cents, with no bar at the
// indexes gaps says (the asset did not trade then).
func walk(series string, n int, seed uint64, p0 float64, start time.Time, gap func(i int) bool) strategy.Bars {
	b := strategy.Bars{Series: series}
	x := seed
	price := p0
	for i := range n {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		if gap != nil && gap(i) {
			continue
		}
		step := (float64(x%2001) - 1000) / 1000 * 0.004
		open := price
		cl := math.Round(open*(1+step)*100) / 100
		appendBar(&b, start.Add(time.Duration(i)*time.Minute).Unix(), open, math.Max(open, cl)+0.05, math.Min(open, cl)-0.05, cl, 1e9)
		price = cl
	}
	return b
}

// portfolioRig is a paper node with a mark per symbol and a runner whose
// history store holds bars, for portfolio deployments; restartable on
// the same journal.
type portfolioRig struct {
	t     testing.TB
	clk   *testkit.Clock
	marks *marks
	r     *Runner
	all   map[string]strategy.Bars
	cfg   Config
	dir   string
	store *Store
	ns    *nodetest.Server
}

func newPortfolioRig(t testing.TB, start time.Time, all map[string]strategy.Bars, src BarSource) *portfolioRig {
	t.Helper()
	// A multiTape moves the clock to the close of the latest bar it
	// handed over, a calendar gap ahead when a leg skips a bar, at once:
	// a quiet bound of a day never passes while its legs are read.
	return newPortfolioRigWith(t, testkit.NewClock(start), all, src, func(c *Config) { c.QuietBound = 24 * time.Hour })
}

// newPortfolioRigWith is newPortfolioRig on clock clk, with tweak
// applied to the runner's configuration.
func newPortfolioRigWith(t testing.TB, clk *testkit.Clock, all map[string]strategy.Bars, src BarSource, tweak func(*Config)) *portfolioRig {
	t.Helper()
	g := &portfolioRig{t: t, clk: clk, marks: &marks{}, all: all, dir: t.TempDir()}
	cfg := venueConfig()
	cfg.Venues[0].Marks = "binance"
	g.ns = nodetest.NewServer(t, nodetest.WithConfig(cfg), nodetest.WithMarks(map[string]server.MarkFeed{"paper": g.marks}), nodetest.WithClock(g.clk.Now))
	conn := marketConn{Client: g.ns.Client(node.WithClock(g.clk.Now)), t: t, node: g.ns}
	hist := func(_ context.Context, series string, before time.Time, n int) (strategy.Bars, error) {
		b := g.all[series]
		k := 0
		for k < b.Len() && !time.Unix(b.Time[k], 0).Add(time.Minute).After(before) {
			k++
		}
		return b.Slice(max(0, k-n), k), nil
	}
	g.cfg = Config{Project: cfg, Node: conn, Strategies: newPool(t), Now: g.clk.Now, NewID: seq(),
		History: hist, Bars: func(project.Venue, string) BarSource { return src }}
	if tweak != nil {
		tweak(&g.cfg)
	}
	g.start()
	return g
}

// start opens the journal and makes a runner over it (again after a
// restart).
func (g *portfolioRig) start() {
	g.t.Helper()
	s, err := OpenStore(filepath.Join(g.dir, "deployments.db"))
	if err != nil {
		g.t.Fatal(err)
	}
	g.t.Cleanup(func() { s.Close() })
	g.store = s
	cfg := g.cfg
	cfg.Store = s
	if g.r, err = New(ctxT(g.t), cfg); err != nil {
		g.t.Fatal(err)
	}
}

// restart drops the runner as a killed process would and starts another.
func (g *portfolioRig) restart() {
	g.t.Helper()
	g.store.Close()
	g.start()
}

// step hands the runner calendar bar t with the legs' bars there, at its
// close, each leg's market at its close.
func (g *portfolioRig) step(id string, t int64) {
	g.t.Helper()
	at := time.Unix(t, 0).UTC()
	set := map[string]Bar{}
	for s, b := range g.all {
		if k := index(b, t); k >= 0 {
			set[s] = Bars(b.Slice(k, k+1))[0]
			sym, _, _ := strategy.ParseSeries(s)
			g.marks.set(sym, decimal.NewFromFloat(b.Close[k]))
		}
	}
	g.clk.Set(at.Add(time.Minute))
	if err := g.r.StepPortfolio(ctxT(g.t), id, at, set); err != nil {
		g.t.Fatal(err)
	}
}

// TestDeployPortfolioForwardTestEqualsBacktest deploys a three-asset
// rotation on a paper venue over 2,000 recorded 1m bars per asset (one
// asset missing a bar now and then) and checks it against the portfolio
// backtest of the same bars: the weights decided at every calendar bar,
// every fill (asset, bar, side, quantity, price and fee to the cent) and
// the equity at every close to the cent.
//
// It holds by construction: the weights are the worker's
// signals(universe) over the legs' aligned bars (the backtest's decision
// function; windowed reads do not depend on where their history began),
// the schedule is portfolio.Schedule (the engine's own), and each
// asset's paper fill is at its mark, the close of its decision bar,
// which is the open of its next bar, where the backtest fills.
func TestDeployPortfolioForwardTestEqualsBacktest(t *testing.T) {
	longForward(t)
	const warm = 60
	forwardPortfolio(t, 2000, warm, rotation, "drift:0.05", func(i int) bool { return i > warm+5 && i%97 == 0 },
		func(ctx context.Context, s *script.Strategy, assets []strategy.Bars, reb portfolio.Rebalance, bc backtest.Config, opts portfolio.Options) (*portfolio.Result, [][]float64, error) {
			weights, err := s.Weights(ctx, assets)
			if err != nil {
				return nil, nil, err
			}
			res, err := portfolio.RunFrom(ctx, assets, weights, reb, bc, opts)
			return res, weights, err
		})
}

// backtestFunc runs the portfolio backtest of s over assets and gives
// the weights it decided at every calendar bar.
type backtestFunc func(ctx context.Context, s *script.Strategy, assets []strategy.Bars, reb portfolio.Rebalance, bc backtest.Config, opts portfolio.Options) (*portfolio.Result, [][]float64, error)

// forwardPortfolio deploys src (a universe of BTC, ETH and SOL at 1m,
// SOL without the bars gap says) on a paper venue over n recorded bars
// after a warm-up of warm, and checks it against run's backtest of the
// same bars: every calendar bar's weights, fills and equity.
func forwardPortfolio(t *testing.T, n, warm int, src, rebalance string, gap func(int) bool, run backtestFunc) {
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	series := []string{"BTC-USD@1m", "ETH-USD@1m", "SOL-USD@1m"}
	all := map[string]strategy.Bars{
		series[0]: walk(series[0], warm+n, 7, 100, start, nil),
		series[1]: walk(series[1], warm+n, 11, 40, start, nil),
		series[2]: walk(series[2], warm+n, 13, 20, start, gap),
	}
	live := time.Unix(all[series[0]].Time[warm], 0).UTC() // the first bar the deployment handles
	tape := &multiTape{bars: map[string][]Bar{}, marks: nil, gran: time.Minute}
	for _, s := range series {
		b := all[s]
		k := 0
		for k < b.Len() && b.Time[k] < live.Unix() {
			k++
		}
		tape.bars[s] = Bars(b.Slice(k, b.Len()))
	}
	g := newPortfolioRig(t, live, all, tape)
	tape.clock, tape.marks = g.clk, g.marks
	d, err := g.r.Create(ctxT(t), Spec{Strategy: "rotation.star", Source: src, Venue: "paper", Mode: ModeAuto,
		Capital: decimal.NewFromInt(10000), Warmup: warm})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Legs) != 3 || d.Series != strings.Join(series, ",") || d.Rebalance != rebalance {
		t.Fatalf("deployment %+v: want one deployment over the three legs", d)
	}
	g.r.Start(ctxT(t))
	g.r.Wait()

	// The portfolio backtest of the same bars, trading from the bar after
	// the first live one (whose decision fills at that bar's open).
	raw := []strategy.Bars{all[series[0]], all[series[1]], all[series[2]]}
	assets, err := portfolio.Align(raw)
	if err != nil {
		t.Fatal(err)
	}
	s, err := script.Load(ctxT(t), script.Source{Name: "rotation.star", Text: src}, script.Options{Memo: ta.NewMemo(0)})
	if err != nil {
		t.Fatal(err)
	}
	reb, _ := portfolio.ParseRebalance(s.Rebalance())
	vc := g.r.cfg.Project.Venues[0]
	bc := backtest.DefaultConfig()
	bc.Capital, bc.FeeBps, bc.SlippageBps = decimal.NewFromInt(10000), vc.FeeBps, vc.SlippageBps
	res, weights, err := run(ctxT(t), s, assets, reb, bc, portfolio.Options{TradeFrom: live.Add(time.Minute), RecordFills: true})
	if err != nil {
		t.Fatal(err)
	}
	cal := assets[0].Time
	first := 0
	for cal[first] < live.Unix() {
		first++
	}

	decs, err := g.r.cfg.Store.Decisions(d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(decs) != len(cal)-first {
		t.Fatalf("%d decisions live for %d calendar bars", len(decs), len(cal)-first)
	}
	for j, dc := range decs {
		i := first + j
		if dc.Status != DecisionDecided || dc.Bar.Unix() != cal[i] {
			t.Fatalf("calendar bar %d: live decision %+v", i, dc)
		}
		col := make([]float64, len(series))
		for a := range series {
			col[a] = weights[a][i]
		}
		if want := weightsNote(series, decisionOf(col)); dc.Note != want {
			t.Fatalf("bar %s: live %q, backtest %q", dc.Bar.Format(time.RFC3339), dc.Note, want)
		}
	}

	// Fills: each live order filled at its asset's mark, the open of the
	// asset's bar after the decision, where the backtest fills it.
	type fill struct {
		series           string
		at               int64
		side             string
		qty              float64
		price, fee       decimal.Decimal // to the cent
		exact            decimal.Decimal // the fill's fee and slippage, live
		cid, status, why string
	}
	next := func(s string, t int64) int64 {
		b := all[s]
		for k := range b.Time {
			if b.Time[k] > t {
				return b.Time[k]
			}
		}
		return 0
	}
	intents, err := g.r.cfg.Store.Intents(d.ID)
	if err != nil {
		t.Fatal(err)
	}
	var got, want []fill
	for _, in := range intents {
		q, _ := in.Filled.Float64()
		if in.Side == "sell" {
			q = -q
		}
		at := next(series[in.N], in.Bar.Unix())
		mark := decimal.NewFromFloat(all[series[in.N]].Close[index(all[series[in.N]], in.Bar.Unix())])
		cost := in.Fee.Add(in.Filled.Mul(in.Price.Sub(mark).Abs()))
		got = append(got, fill{series[in.N], at, in.Side, q, in.Price.Round(2), in.Fee.Round(2), cost, in.ClientOrderID, in.Status, in.Note})
	}
	for _, f := range res.Fills {
		side := "buy"
		if f.Qty < 0 {
			side = "sell"
		}
		want = append(want, fill{series: f.Series, at: f.Time.Unix(), side: side, qty: f.Qty,
			price: decimal.NewFromFloat(f.Price).Round(2), fee: decimal.NewFromFloat(f.Fee).Round(2)})
	}
	order := func(fs []fill) {
		sort.SliceStable(fs, func(i, j int) bool {
			if fs[i].at != fs[j].at {
				return fs[i].at < fs[j].at
			}
			return fs[i].series < fs[j].series
		})
	}
	order(got)
	order(want)
	if len(want) < 20 {
		t.Fatalf("the backtest made only %d fills: the fixture should rebalance often", len(want))
	}
	if len(got) != len(want) {
		t.Fatalf("%d orders live, %d fills in the backtest", len(got), len(want))
	}
	for k := range want {
		g, w := got[k], want[k]
		if g.status != IntentFilled || g.series != w.series || g.at != w.at || g.side != w.side || math.Abs(g.qty-w.qty) > 1e-6 ||
			!g.price.Equal(w.price) || !g.fee.Equal(w.fee) {
			t.Fatalf("fill %d: live %s %s %s at %s %v @ %s fee %s (%s); backtest %s at %s %v @ %s fee %s", k, g.status, g.series, g.side,
				time.Unix(g.at, 0).UTC().Format(time.RFC3339), g.qty, g.price, g.fee, g.why, w.series, time.Unix(w.at, 0).UTC().Format(time.RFC3339), w.qty, w.price, w.fee)
		}
	}
	// The equity at every close. An order of an asset whose next bar
	// is not the next calendar bar (the asset missed one) fills live at
	// once, at its mark, and in the backtest at that asset's next bar's
	// open, the same price: at the closes in between, live equity is
	// lower by exactly that fill's fee and slippage, which it has paid
	// and the backtest not yet.
	lagged := 0
	for j, dc := range decs {
		i := first + j
		want := decimal.NewFromInt(10000)
		if i > first {
			want = decimal.NewFromFloat(res.Curve.Equity[i-first-1])
		}
		for _, f := range got {
			if f.at > cal[i] && decidedBefore(intents, f.cid, cal[i]) { // decided before this close, filled after it in the backtest
				want = want.Sub(f.exact)
				lagged++
			}
		}
		if got := dc.Equity.Round(2); !got.Equal(want.Round(2)) {
			t.Fatalf("bar %s: live equity %s at the close, backtest %s", dc.Bar.Format(time.RFC3339), got, want.Round(2))
		}
	}
	final, _ := g.r.Get(d.ID)
	if got, want := final.Equity.Round(2), decimal.NewFromFloat(res.Curve.Equity[len(res.Curve.Equity)-1]).Round(2); !got.Equal(want) {
		t.Fatalf("final equity live %s, backtest %s", got, want)
	}
	// The tracking report replays the latest decisions: all equal.
	rep, err := g.r.Report(ctxT(t), d.ID)
	if err != nil {
		t.Fatal(err)
	}
	since, tracked := decs[len(decs)-MaxReportDecisions].Bar, 0 // the fills of the decisions replayed
	for _, in := range intents {
		if !in.Bar.Before(since) {
			tracked++
		}
	}
	if rep.Replayed != MaxReportDecisions || rep.Equal != rep.Replayed || len(rep.Diverged) != 0 || len(rep.Fills) != tracked || tracked == 0 {
		t.Fatalf("report: %d replayed, %d equal, %d diverged, %d fills tracked of %d", rep.Replayed, rep.Equal, len(rep.Diverged), len(rep.Fills), tracked)
	}
	// Its attribution over the replayed window (which starts with live's
	// positions held: under decisions) sums exactly, by part, day and asset.
	if a := rep.Attribution; a == nil || len(a.Assets) != len(series) || !sumParts(a.Total).Equal(a.Total.Gap.Money) || !a.Total.Gap.Money.Equal(a.Live.Sub(a.Replay)) {
		t.Fatalf("attribution %+v: want parts that sum to live less replay, per asset", a)
	} else {
		var assets decimal.Decimal
		for _, x := range a.Assets {
			assets = assets.Add(x.Total.Gap.Money)
		}
		if !assets.Equal(a.Total.Gap.Money) {
			t.Fatalf("assets sum to %s, the gap is %s", assets, a.Total.Gap.Money)
		}
	}
	if lagged == 0 && gap != nil {
		t.Fatal("no order waited for its asset's next bar: the fixture's gaps should make some")
	}
	t.Logf("%d calendar bars, %d fills (%d booked before the backtest's), %d rebalances; final equity %s", len(decs), len(got), lagged, res.Rebalances, final.Equity.StringFixed(2))
}

// index is the index of the bar at unix time t in b (-1: none).
func index(b strategy.Bars, t int64) int {
	for k := range b.Time {
		if b.Time[k] == t {
			return k
		}
	}
	return -1
}

// decidedBefore reports whether the intent cid was decided at a bar
// before t (its fill is booked live by t's close).
func decidedBefore(intents []Intent, cid string, t int64) bool {
	for _, in := range intents {
		if in.ClientOrderID == cid {
			return in.Bar.Unix() < t
		}
	}
	return false
}

// decisionOf is a column of weights as the worker answers it.
func decisionOf(col []float64) (d worker.PortfolioDecision) {
	d.Weights, d.Has = make([]float64, len(col)), make([]bool, len(col))
	for k, w := range col {
		if !math.IsNaN(w) {
			d.Weights[k], d.Has[k] = w, true
		}
	}
	return d
}

// TestDeployPortfolioRestart: a portfolio deployment stopped as a killed
// node would be, halfway through 300 bars, and started again on its
// journal (the legs' bars, positions and the schedule's state) trades
// the rest exactly as one that ran through: the same orders with the
// same client order ids, fills and final equity; the bar handled again
// after the restart sends nothing twice.
func TestDeployPortfolioRestart(t *testing.T) {
	t.Parallel() // long: it overlaps the forward tests in make test's plain step
	const n, warm = 300, 40
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	series := []string{"BTC-USD@1m", "ETH-USD@1m", "SOL-USD@1m"}
	all := map[string]strategy.Bars{
		series[0]: walk(series[0], warm+n, 7, 100, start, nil),
		series[1]: walk(series[1], warm+n, 11, 40, start, nil),
		series[2]: walk(series[2], warm+n, 13, 20, start, func(i int) bool { return i > warm+5 && i%29 == 0 }),
	}
	assets, err := portfolioAlign(all, series)
	if err != nil {
		t.Fatal(err)
	}
	cal := assets[0].Time
	live := time.Unix(cal[warm], 0).UTC()
	run := func(restartAt int) (Deployment, []Intent, *portfolioRig) {
		g := newPortfolioRig(t, live, all, &multiTape{})
		d, err := g.r.Create(ctxT(t), Spec{Strategy: "rotation.star", Source: rotation, Venue: "paper", Mode: ModeAuto, Capital: decimal.NewFromInt(10000), Warmup: warm})
		if err != nil {
			t.Fatal(err)
		}
		for i := warm; i < len(cal); i++ {
			g.step(d.ID, cal[i])
			if i == restartAt {
				g.restart()
				g.step(d.ID, cal[i]) // handled again: nothing new
			}
		}
		final, err := g.r.Get(d.ID)
		if err != nil {
			t.Fatal(err)
		}
		in, err := g.store.Intents(d.ID)
		if err != nil {
			t.Fatal(err)
		}
		return final, in, g
	}
	through, want, _ := run(-1)
	restarted, got, g := run(warm + n/2)
	if len(want) < 10 {
		t.Fatalf("only %d orders: the fixture should rebalance often", len(want))
	}
	if len(got) != len(want) {
		t.Fatalf("%d orders with a restart, %d without", len(got), len(want))
	}
	for k := range want {
		w, o := want[k], got[k]
		if o.N != w.N || !o.Bar.Equal(w.Bar) || o.Status != w.Status || !o.Filled.Equal(w.Filled) || !o.Price.Equal(w.Price) {
			t.Fatalf("order %d: with a restart %+v, without %+v", k, o, w)
		}
		if c := g.nodeOrders(o.ClientOrderID); c != 1 {
			t.Fatalf("order %s reached the node %d times", o.ClientOrderID, c)
		}
	}
	if !restarted.Equity.Equal(through.Equity) || !restarted.Cash.Equal(through.Cash) {
		t.Fatalf("with a restart equity %s cash %s, without %s %s", restarted.Equity, restarted.Cash, through.Equity, through.Cash)
	}
	for k := range through.Legs {
		if !restarted.Legs[k].Position.Equal(through.Legs[k].Position) {
			t.Fatalf("leg %s: position %s with a restart, %s without", through.Legs[k].Series, restarted.Legs[k].Position, through.Legs[k].Position)
		}
	}
}

// portfolioAlign aligns the bars of series in all on one calendar.
func portfolioAlign(all map[string]strategy.Bars, series []string) ([]strategy.Bars, error) {
	raw := make([]strategy.Bars, len(series))
	for k, s := range series {
		raw[k] = all[s]
	}
	return portfolio.Align(raw)
}

// nodeOrders counts the node's accepted commands with client order id
// cid.
func (g *portfolioRig) nodeOrders(cid string) int {
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

// TestDeployPortfolioAllowance: the allowance's sizing limits hold per
// symbol (no leg's position is worth more than max_position_notional at
// the price it was sized at, though the weight asks for 90 % of 10,000)
// and its order count covers the whole deployment: the order past
// max_orders_per_day, whichever asset it is for, is not sent and pauses
// the deployment, naming the limit.
func TestDeployPortfolioAllowance(t *testing.T) {
	const n, warm = 200, 40
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	series := []string{"BTC-USD@1m", "ETH-USD@1m", "SOL-USD@1m"}
	all := map[string]strategy.Bars{
		series[0]: walk(series[0], warm+n, 7, 100, start, nil),
		series[1]: walk(series[1], warm+n, 11, 40, start, nil),
		series[2]: walk(series[2], warm+n, 13, 20, start, nil),
	}
	cal := all[series[0]].Time
	g := newPortfolioRig(t, time.Unix(cal[warm], 0).UTC(), all, &multiTape{})
	d, err := g.r.Create(ctxT(t), Spec{Strategy: "rotation.star", Source: rotation, Venue: "paper", Mode: ModeAuto, Capital: decimal.NewFromInt(10000), Warmup: warm,
		Allowance: Allowance{MaxPositionNotional: dp(2000), MaxOrdersPerDay: 7}})
	if err != nil {
		t.Fatal(err)
	}
	limit := decimal.NewFromInt(2000)
	for i := warm; i < len(cal); i++ {
		g.step(d.ID, cal[i])
		cur, _ := g.r.Get(d.ID)
		traded := map[int]bool{}
		for _, in := range g.intentsOf(d.ID) {
			if in.Bar.Unix() == cal[i] && in.Status == IntentFilled {
				traded[in.N] = true
			}
		}
		for k, leg := range cur.Legs {
			if traded[k] && leg.Position.Abs().Mul(leg.Mark).GreaterThan(limit) { // sized at this close, its mark
				t.Fatalf("bar %d: leg %s holds %s at %s, over the allowance's 2000", i, leg.Series, leg.Position, leg.Mark)
			}
		}
		if cur.State == StatePaused {
			break
		}
	}
	cur, _ := g.r.Get(d.ID)
	sent := 0
	for _, in := range g.intentsOf(d.ID) {
		if in.Status == IntentFilled {
			sent++
		}
	}
	if cur.State != StatePaused || !strings.Contains(cur.Reason, "max_orders_per_day: 7 orders sent") || sent != 7 {
		t.Fatalf("state %s (%s) after %d orders; want paused by max_orders_per_day after 7", cur.State, cur.Reason, sent)
	}
}

func (g *portfolioRig) intentsOf(id string) []Intent {
	g.t.Helper()
	in, err := g.store.Intents(id)
	if err != nil {
		g.t.Fatal(err)
	}
	return in
}

// TestDeployPortfolioPropose: in propose mode each asset's order waits
// as a proposal naming its symbol, and stands while the asset keeps that
// weight; an operator's approval after the asset's price moved sizes it
// again at the price then and sends it for that asset only.
func TestDeployPortfolioPropose(t *testing.T) {
	const n, warm = 120, 40
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	series := []string{"BTC-USD@1m", "ETH-USD@1m", "SOL-USD@1m"}
	all := map[string]strategy.Bars{
		series[0]: walk(series[0], warm+n, 7, 100, start, nil),
		series[1]: walk(series[1], warm+n, 11, 40, start, nil),
		series[2]: walk(series[2], warm+n, 13, 20, start, nil),
	}
	cal := all[series[0]].Time
	g := newPortfolioRig(t, time.Unix(cal[warm], 0).UTC(), all, &multiTape{})
	g.cfg.OperatorKey = g.ns.OperatorKey.Public().(ed25519.PublicKey)
	g.restart()
	d, err := g.r.Create(ctxT(t), Spec{Strategy: "rotation.star", Source: rotation, Venue: "paper", Capital: decimal.NewFromInt(10000), Warmup: warm})
	if err != nil {
		t.Fatal(err)
	}
	if d.Mode != ModePropose {
		t.Fatalf("mode %s, want propose by default", d.Mode)
	}
	var p Proposal
	for i := warm; i < len(cal) && p.ClientOrderID == ""; i++ {
		g.step(d.ID, cal[i])
		cur, _ := g.r.Get(d.ID)
		if len(cur.Proposals) > 0 {
			p = cur.Proposals[0]
			g.step(d.ID, cal[i+1]) // the next bar: the asset keeps its weight, the proposal stands
			if cur, _ = g.r.Get(d.ID); len(cur.Proposals) == 0 || cur.Proposals[0].ClientOrderID != p.ClientOrderID {
				t.Fatalf("proposal %s did not stand at the next bar: %+v", p.ClientOrderID, cur.Proposals)
			}
		}
	}
	if p.ClientOrderID == "" || p.Symbol == "" {
		t.Fatalf("no proposal naming a symbol in %d bars", n)
	}
	for _, in := range g.intentsOf(d.ID) {
		if in.Status != IntentProposed {
			t.Fatalf("intent %s is %s before any approval", in.ClientOrderID, in.Status)
		}
	}
	moved := p.BarClose.Mul(decimal.RequireFromString("1.1")).Round(2) // the market moves 10% before the operator approves
	g.marks.set(p.Symbol, moved)
	g.ns.Tick(t, 1)
	c, err := g.r.Challenge(ActApprove, p.ClientOrderID)
	if err != nil {
		t.Fatal(err)
	}
	req := node.ArmRequest{Confirm: p.ClientOrderID, Challenge: c}
	req.Signature = node.SignOperator(g.ns.OperatorKey, Statement(ActApprove, p.ClientOrderID, req))
	in, err := g.r.Approve(ctxT(t), p.ClientOrderID, req, "test")
	if err != nil {
		t.Fatal(err)
	}
	cur, _ := g.r.Get(d.ID)
	leg := cur.Legs[in.N]
	if in.Status != IntentFilled || !strings.Contains(in.Note, "re-sized at approval") || !in.Quantity.LessThan(p.Quantity) || leg.Symbol != p.Symbol || !leg.Position.Equal(in.Filled) {
		t.Fatalf("approved after +10%%: %+v; leg %+v; proposed %s", in, leg, p.Quantity)
	}
	if g.nodeOrders(p.ClientOrderID) != 1 {
		t.Fatalf("the approved order reached the node %d times", g.nodeOrders(p.ClientOrderID))
	}
}

// rotationOnBar is the rotation as an on_bar portfolio strategy that
// reads its account: it moves into the asset with the best 15-bar
// momentum only when it does not hold it already, and out of the others
// it holds.
const rotationOnBar = `"""Top-1 momentum rotation, bar by bar, from the account."""
universe = ["BTC-USD@1m", "ETH-USD@1m", "SOL-USD@1m"]

def setup(ctx):
    pass

def on_bar(ctx):
    best, score = None, 0.0
    for a in ctx.assets:
        c = ctx[a].close
        if c[0] != None and c[15] != None and c[0] / c[15] - 1 > score:
            best, score = a, c[0] / c[15] - 1
    for a in ctx.assets:
        held = ctx.positions[a] != 0
        if a == best and not held:
            ctx.target(a, 0.9)
        elif a != best and held:
            ctx.target(a, 0)
`

// weightRecorder is a portfolio.Stepper that keeps the weights st returned at
// every bar.
type weightRecorder struct {
	st      portfolio.Stepper
	weights [][]float64
}

func (r *weightRecorder) Step(i int, acct script.PortfolioAccount) ([]float64, error) {
	w, err := r.st.Step(i, acct)
	for a := range w {
		r.weights[a][i] = w[a]
	}
	return w, err
}

// TestDeployPortfolioOnBarForwardTestEqualsBacktest: the on_bar
// rotation, whose ctx reads the deployment's own account (cash, equity,
// each leg's position, journaled at every close), deployed on paper over
// 1,000 bars equals portfolio.RunStepperFrom over the same bars: every
// bar's targets, every fill and the equity at every close to the cent.
func TestDeployPortfolioOnBarForwardTestEqualsBacktest(t *testing.T) {
	longForward(t)
	forwardPortfolio(t, 1000, 40, rotationOnBar, "bar", nil,
		func(ctx context.Context, s *script.Strategy, assets []strategy.Bars, reb portfolio.Rebalance, bc backtest.Config, opts portfolio.Options) (*portfolio.Result, [][]float64, error) {
			st, err := s.BeginPortfolio(ctx, assets)
			if err != nil {
				return nil, nil, err
			}
			defer st.Close()
			rec := &weightRecorder{st: st, weights: make([][]float64, len(assets))}
			for a := range assets {
				rec.weights[a] = make([]float64, assets[0].Len())
			}
			res, err := portfolio.RunStepperFrom(ctx, assets, rec, reb, bc, opts)
			return res, rec.weights, err
		})
}
