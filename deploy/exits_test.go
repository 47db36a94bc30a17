package deploy

import (
	"context"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/command"
	"wicket/node/nodetest"
	"wicket/strategy"
	"wicket/strategy/backtest"
	"wicket/strategy/script"
	"wicket/strategy/ta"
)

// smaBracket is smaHalf with a stop-loss and a take-profit on every
// position, tight enough for the tape to reach them often.
var smaBracket = strings.Replace(smaHalf, `"size": 0.5}`, `"size": 0.5, "stop_loss": 0.004, "take_profit": 0.006}`, 1)

// pathTape is a BarSource over recorded bars that moves the paper
// venue's mark along each bar's intrabar path before handing it over:
// open, the extreme nearer the open, the other extreme, close (the
// backtest's path rule), passing on the way through every price a
// resting order of the symbol waits at, as a continuous price would.
// The node takes a mark step at each, so resting exits fill where the
// backtest fills them.
type pathTape struct {
	t     testing.TB
	bars  []Bar
	i     int
	clock *testkit.Clock
	price *price
	ns    *nodetest.Server
	gran  time.Duration
}

func (f *pathTape) Next(ctx context.Context, series string, after time.Time) (Bar, error) {
	if f.i >= len(f.bars) {
		return Bar{}, io.EOF
	}
	b := f.bars[f.i]
	f.clock.Set(b.Time.Add(f.gran))
	var levels []float64
	snap, err := f.ns.Client(node.WithClock(f.clock.Now)).Snapshot(ctx, "paper", 0)
	if err != nil {
		return Bar{}, err
	}
	for _, o := range snap.Venues[0].OpenOrders {
		if o.Symbol != symbol {
			continue
		}
		for _, p := range []decimal.Decimal{o.Price, o.StopPrice} {
			if p.IsPositive() {
				v, _ := p.Float64()
				levels = append(levels, v)
			}
		}
	}
	if len(levels) == 0 { // nothing rests: the order at the close takes its own mark step
		f.price.set(decimal.NewFromFloat(b.Close))
		f.i++
		return b, nil
	}
	pts := []float64{b.Open, b.High, b.Low, b.Close}
	if b.Open-b.Low < b.High-b.Open || (b.Open-b.Low == b.High-b.Open && b.Close >= b.Open) {
		pts = []float64{b.Open, b.Low, b.High, b.Close}
	}
	f.mark(pts[0])
	for k := 1; k < 4; k++ {
		from, to := pts[k-1], pts[k]
		var on []float64
		for _, v := range levels {
			if (v > min(from, to) && v < max(from, to)) || v == to {
				on = append(on, v)
			}
		}
		sort.Float64s(on)
		if to < from {
			sort.Sort(sort.Reverse(sort.Float64Slice(on)))
		}
		for _, v := range on {
			f.mark(v)
		}
		f.mark(to)
	}
	f.i++
	return b, nil
}

func (f *pathTape) mark(p float64) {
	f.price.set(decimal.NewFromFloat(p))
	f.ns.Tick(f.t, 1)
}

// TestDeployBracketForwardTestEqualsBacktest: a strategy with a stop-loss
// and a take-profit, deployed auto on a paper venue over a 2,000-bar
// tape, sends each entry as one bracket; its exits fill at the venue as
// the price walks each bar's path, are booked into the deployment, and
// every decision, every fill (bar, side, price to the cent, quantity)
// and the equity at every close equal a backtest's of the same bars.
func TestDeployBracketForwardTestEqualsBacktest(t *testing.T) {
	longForward(t)
	bracketForward(t, 2000, "sma_bracket.star", smaBracket)
}

// onBarBracket decides in on_bar from its own account: half long with a
// stop-loss and a take-profit on the fast SMA above the slow one while
// flat, flat on the cross back while long.
const onBarBracket = `"""SMA trend in on_bar, bracketed."""
def setup(ctx):
    ctx.f = ta.sma(ctx.close, 5)
    ctx.s = ta.sma(ctx.close, 20)

def on_bar(ctx):
    if ctx.f[0] == None or ctx.s[0] == None:
        return
    if ctx.f[0] > ctx.s[0] and ctx.position <= 0 and ctx.cash > 0:
        ctx.target(0.5, stop_loss=0.004, take_profit=0.006)
    elif ctx.f[0] < ctx.s[0] and ctx.position > 0:
        ctx.flat()
`

// TestDeployOnBarForwardTestEqualsBacktest: an on_bar strategy whose ctx
// reads the deployment's own account (position, cash) deploys; over a
// 1,000-bar tape on paper its decisions, fills (its brackets' exits
// included) and equity at every close equal a backtest's of the same bars.
func TestDeployOnBarForwardTestEqualsBacktest(t *testing.T) {
	longForward(t)
	bracketForward(t, 1000, "onbar_bracket.star", onBarBracket)
}

// recorder is a backtest's stepper that keeps each bar's intent.
type recorder struct {
	st      backtest.Stepper
	intents map[int]strategy.Intent
}

func (r *recorder) Step(i int, a strategy.Account) (strategy.Intent, error) {
	in, err := r.st.Step(i, a)
	r.intents[i] = in
	return in, err
}

// TestDeployReportReplaysExits: the tracking report replays the live
// decisions through the backtest engine with the strategy's exits, filling
// them by its intrabar rule, and finds every live exit fill at the bar,
// kind and price the replay fills it, and the replay's final equity the
// live one.
func TestDeployReportReplaysExits(t *testing.T) {
	t.Parallel()  // long: it overlaps the forward tests in make test's plain step
	const n = 400 // within the report's 500 decisions: the replay starts where the deployment did
	r, d := bracketForward(t, n, "sma_bracket.star", smaBracket)
	rep, err := r.Report(ctxT(t), d.ID)
	if err != nil {
		t.Fatal(err)
	}
	x := rep.Exits
	if x == nil || x.Error != "" || x.Live < 5 || x.Equal != x.Live || x.Replayed != x.Live || len(x.MissedLive) != 0 {
		t.Fatalf("exit replay %+v", x)
	}
	final, _ := r.Get(d.ID)
	if x.FinalEquity != final.Equity.StringFixed(2) {
		t.Fatalf("replay's final equity %s, live %s", x.FinalEquity, final.Equity.StringFixed(2))
	}
	for _, f := range rep.Fills {
		if f.ClientOrderID == "" || len(f.ClientOrderID) > 35 {
			t.Fatalf("fill %+v", f)
		}
	}
	t.Logf("%d live exits, %d equal the replay's; replay final equity %s", x.Live, x.Equal, x.FinalEquity)
}

// bracketForward runs strategy src over an n-bar tape auto on paper and
// checks it against a backtest of the same bars.
func bracketForward(t *testing.T, n int, name, source string) (*Runner, Deployment) {
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	bars := tape(n, 7, start)
	clk := testkit.NewClock(start)
	cfg := venueConfig()
	mkt := &price{}
	ns := paperNode(t, cfg, mkt, clk.Now)
	src := &pathTape{t: t, bars: Bars(bars), clock: clk, price: mkt, ns: ns, gran: time.Minute}
	conn := marketConn{Client: ns.Client(node.WithClock(clk.Now)), t: t, node: ns}
	r, err := New(ctxT(t), Config{Project: cfg, Store: openStore(t, t.TempDir()), Node: conn,
		Strategies: newPool(t), Now: clk.Now, NewID: seq(),
		Bars: func(_ project.Venue, _ string) BarSource { return src }})
	if err != nil {
		t.Fatal(err)
	}
	d, err := r.Create(ctxT(t), Spec{Strategy: name, Source: source, Series: symbol + "@1m", Venue: "paper",
		Mode: ModeAuto, Capital: decimal.NewFromInt(10000), Warmup: 60})
	if err != nil {
		t.Fatal(err)
	}
	// A guard against a hang, long enough for a thousand on_bar steps
	// under the race detector.
	run, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	r.Start(run)
	r.Wait()
	if run.Err() != nil {
		t.Fatal("the tape did not run to its end before the guard's deadline")
	}

	s, err := script.Load(ctxT(t), script.Source{Name: name, Text: source}, script.Options{Memo: ta.NewMemo(0)})
	if err != nil {
		t.Fatal(err)
	}
	bc := backtest.DefaultConfig()
	bc.Capital, bc.FeeBps, bc.SlippageBps = decimal.NewFromInt(10000), cfg.Venues[0].FeeBps, cfg.Venues[0].SlippageBps
	var decisions backtest.Decisions
	var targetAt func(i int) float64
	if s.Style() == script.StyleSignals {
		sig, err := s.Signals(ctxT(t), bars)
		if err != nil {
			t.Fatal(err)
		}
		decisions.Signals, targetAt = &sig, sig.TargetAt
	} else {
		st, err := s.Begin(ctxT(t), bars)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		rec := &recorder{st: st, intents: map[int]strategy.Intent{}}
		decisions.Stepper = rec
		targetAt = func(i int) float64 {
			if in := rec.intents[i]; in.Kind == strategy.Target {
				return in.Value
			}
			return math.NaN()
		}
	}
	res, err := backtest.Run(ctxT(t), bars, bc, decisions)
	if err != nil {
		t.Fatal(err)
	}
	exits := map[string]int{}
	for _, tr := range res.AllTrades {
		exits[tr.Exit]++
	}
	if min(exits["stop_loss"], exits["take_profit"], exits[""]) < n/400 {
		t.Fatalf("the backtest's exits %v: the fixture should reach stops, take-profits and exit signals often", exits)
	}

	decs, err := r.cfg.Store.Decisions(d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(decs) != n {
		t.Fatalf("%d decisions for %d bars", len(decs), n)
	}
	for i, dc := range decs {
		want := targetAt(i)
		if dc.Status != DecisionDecided || dc.HasTarget != (want == want) || (dc.HasTarget && dc.Target != want) {
			t.Fatalf("bar %d: live decision %+v, backtest target %v", i, dc, want)
		}
		if got, want := dc.Equity.Round(2), decimal.NewFromFloat(res.Curve.Equity[i]).Round(2); !got.Equal(want) {
			t.Fatalf("bar %d: live equity %s at the close, backtest %s", i, got, want)
		}
	}

	// Every fill, live and in the backtest: the bar it filled in, side,
	// price and quantity.
	index := map[int64]int{}
	for i, ts := range bars.Time {
		index[ts] = i
	}
	type fill struct {
		bar   int
		side  string
		price string
		qty   string
		exit  string
	}
	// Quantities agree to a millionth: live ones are cut to the venue's 8
	// decimals, the backtest's are not.
	key := func(f fill) string { return fmt.Sprintf("%05d %s %s %s %s", f.bar, f.side, f.price, f.qty, f.exit) }
	var want []string
	for _, tr := range res.AllTrades {
		want = append(want, key(fill{tr.EntryBar, "buy", money(tr.EntryPrice), qty6(tr.Quantity), ""}),
			key(fill{tr.ExitBar, "sell", money(tr.ExitPrice), qty6(tr.Quantity), tr.Exit}))
	}
	if p := res.OpenPosition; p != nil {
		want = append(want, key(fill{p.EntryBar, "buy", money(p.EntryPrice), qty6(p.Quantity), ""}))
	}
	intents, err := r.cfg.Store.Intents(d.ID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	brackets := 0
	for _, in := range intents {
		if in.Type == string(command.Bracket) {
			brackets++
		}
		if !in.Filled.IsPositive() {
			continue
		}
		bar := index[in.Bar.Unix()] + 1 // decided at bar i's close, filled at bar i+1's open
		if in.Exit != "" {
			bar = index[in.Updated.Add(-time.Minute).Unix()] // filled on the path of the bar whose close booked it
		}
		p, _ := in.Price.Float64()
		q, _ := in.Filled.Float64()
		got = append(got, key(fill{bar, in.Side, money(p), qty6(q), in.Exit}))
	}
	sort.Strings(want)
	sort.Strings(got)
	same := len(got) == len(want)
	for k := 0; same && k < len(got); k++ {
		g, w := strings.Fields(got[k]), strings.Fields(want[k])
		gq, _ := decimal.NewFromString(g[3])
		wq, _ := decimal.NewFromString(w[3])
		g[3], w[3] = "", ""
		same = strings.Join(g, " ") == strings.Join(w, " ") && gq.Sub(wq).Abs().LessThanOrEqual(decimal.New(1, -6))
	}
	if !same {
		t.Fatalf("live fills differ from the backtest's:\nlive (%d):\n%s\nbacktest (%d):\n%s", len(got), strings.Join(got, "\n"), len(want), strings.Join(want, "\n"))
	}
	if brackets < exits["stop_loss"]+exits["take_profit"] {
		t.Fatalf("%d brackets sent for %d exits at a leg", brackets, exits["stop_loss"]+exits["take_profit"])
	}
	final, _ := r.Get(d.ID)
	if got, want := final.Equity.Round(2), decimal.NewFromFloat(res.Curve.Equity[n-1]).Round(2); !got.Equal(want) {
		t.Fatalf("final equity live %s, backtest %s", got, want)
	}
	t.Logf("%d bars, %d fills (%d brackets; exits %v); final equity %s", n, len(got), brackets, exits, final.Equity.StringFixed(2))
	return r, d
}

func money(v float64) string { return decimal.NewFromFloat(v).StringFixed(2) }
func qty6(v float64) string  { return decimal.NewFromFloat(v).StringFixed(6) }

// TestDeployExitsSurviveRestartAndAreRepaired: a bracket's legs rest at
// the node across a restart of the runner, and a stop-loss that fills
// after it is booked; a stop-only strategy's stop placed after its entry,
// canceled at the node by someone else, is placed again at the next bar
// (a position is not left without its exits), and nothing is sent twice.
func TestDeployExitsSurviveRestartAndAreRepaired(t *testing.T) {
	g := newRig(t)
	d := g.deploy(Spec{Strategy: "flip_bracket.star", Source: flipBracket})
	bars := path(99.5, 100, 100.5)
	g.step(d.ID, bars, 1) // up: the bracket goes out and its entry fills
	dep, _ := g.r.Get(d.ID)
	if dep.Guard == "" || !dep.Position.IsPositive() {
		t.Fatalf("after the entry: %+v", dep)
	}
	g.restart()
	g.mkt.set(decimal.NewFromFloat(99)) // through the stop (100.05 × 0.996 ≈ 99.65)
	g.ns.Tick(t, 1)
	g.step(d.ID, bars, 2) // up again: the stop filled, so flip enters again with a new bracket
	var stops, brackets int
	for _, in := range g.intents(d.ID) {
		if in.Exit == "stop_loss" && in.Status == IntentFilled {
			stops++
		}
		if in.Type == "bracket" {
			brackets++
			if n := g.nodeOrders(in.ClientOrderID); n != 1 {
				t.Fatalf("bracket %s taken %d times by the node", in.ClientOrderID, n)
			}
		}
	}
	if stops != 1 || brackets != 2 {
		t.Fatalf("after the restart: %d stop-losses filled, %d brackets: %+v", stops, brackets, g.intents(d.ID))
	}

	// A stop-only strategy: its stop follows the entry's fill; canceled
	// by someone else, it is placed again at the next bar.
	stopOnly := strings.Replace(flip, `"size": 0.5}`, `"size": 0.5, "stop_loss": 0.01}`, 1)
	d2 := g.deploy(Spec{Strategy: "flip_stop.star", Source: stopOnly})
	up := path(99.5, 100, 100.5, 101)
	g.step(d2.ID, up, 1)
	dep2, _ := g.r.Get(d2.ID)
	if dep2.Guard == "" || !dep2.Position.IsPositive() {
		t.Fatalf("stop-only after the entry: %+v %+v", dep2, g.intents(d2.ID))
	}
	first := dep2.Guard
	c := g.ns.Client(node.WithClock(g.clk.Now))
	if _, err := nodetest.Send(context.Background(), c, command.NewEnvelope(command.Command{Verb: command.CancelOrder, Venue: "paper", ClientOrderID: first}, "someone else"), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	g.step(d2.ID, up, 2) // the same long: no order, but the position gets its stop again
	dep2, _ = g.r.Get(d2.ID)
	lost, _, _ := g.store.Intent(first)
	if dep2.Guard == "" || dep2.Guard == first || lost.Status != IntentCanceled {
		t.Fatalf("the canceled stop: guard %q (was %q), its intent %+v", dep2.Guard, first, lost)
	}
	if n := g.nodeOrders(dep2.Guard); n != 1 {
		t.Fatalf("the new stop was taken %d times", n)
	}
}
