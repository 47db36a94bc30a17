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
	"wicket/internal/tapeclock"
	"wicket/node"
	"wicket/node/command"
	"wicket/node/nodetest"
	"wicket/node/paper"
	"wicket/strategy"
	"wicket/strategy/backtest"
	"wicket/strategy/script"
	"wicket/strategy/ta"
)

// tapeRig is a node on a recorded tape's clock, in process: the tape run
// drives its clock and its paper venue's marks, and a runner over its
// local connection reads its deployments' bars from the run.
type tapeRig struct {
	all  strategy.Bars // warm-up and tape
	from int           // the tape's first bar in all
	run  *TapeRun
	ns   *nodetest.Server
	r    *Runner
	cfg  project.Config
}

// newTapeRig records all (the history store's bars of the series) and
// plays them from bar from on at speed (0: as fast as the deployments
// keep up).
func newTapeRig(t testing.TB, all strategy.Bars, from int, speed float64) *tapeRig {
	t.Helper()
	g := &tapeRig{all: all, from: from, cfg: venueConfig()}
	clk := tapeclock.New(time.Unix(all.Time[from], 0))
	tp := paper.NewTape()
	g.run = &TapeRun{Series: all.Series, Symbol: symbol, Bars: all.Slice(from, all.Len()), Clock: clk, Tape: tp, Speed: speed}
	if err := g.run.Start(); err != nil {
		t.Fatal(err)
	}
	g.ns = nodetest.NewServer(t, nodetest.WithConfig(g.cfg), nodetest.WithFeed(paper.Feed{Seed: 1, Tape: tp}), nodetest.WithClock(clk.Now))
	local := g.ns.Local(node.KeyControl)
	g.run.Step = func(context.Context) error { g.ns.Tick(t, 1); return nil } // Run is called on the test's goroutine
	// The history store's bars that closed before the tape's clock: a
	// deployment's warm-up (the rule of wicket node serve's historyWarmup).
	hist := func(_ context.Context, series string, before time.Time, n int) (strategy.Bars, error) {
		end := sort.Search(all.Len(), func(i int) bool { return all.Time[i] > before.Add(-time.Minute).Unix() })
		out := strategy.Bars{Series: series} // a copy, as the history store reads: a deployment appends to its own
		for i := max(0, end-n); i < end; i++ {
			appendBar(&out, all.Time[i], all.Open[i], all.High[i], all.Low[i], all.Close[i], all.Volume[i])
		}
		return out, nil
	}
	var err error
	g.r, err = New(ctxT(t), Config{Project: g.cfg, Store: openStore(t, t.TempDir()), Node: local, Strategies: newPool(t),
		Now: clk.Now, NewID: seq(), History: hist, NextOpen: g.run.NextOpen,
		Bars: func(_ project.Venue, _ string) BarSource { return g.run.Source() }})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// play runs the tape to its end with the deployments reading it.
func (g *tapeRig) play(t testing.TB) {
	t.Helper()
	// A guard against a hang, long enough for the race detector.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	g.r.Start(ctx)
	if err := g.run.Run(ctx); err != nil {
		t.Fatalf("the tape stopped after %d of %d bars: %v", g.run.Published(), g.run.Bars.Len(), err)
	}
	g.r.Wait()
}

// equalsBacktest checks deployment id against a backtest of the tape's
// bars with the signals its strategy computes over the warm-up and the
// tape (the indicators have their history at the tape's first bar, as the
// deployment's do). The backtest must exit by each of kinds often (none
// given: stop_loss, take_profit and the strategy's exit, "").
func (g *tapeRig) equalsBacktest(t *testing.T, id, source string, kinds ...string) {
	t.Helper()
	s, err := script.Load(ctxT(t), script.Source{Name: "s.star", Text: source}, script.Options{Memo: ta.NewMemo(0)})
	if err != nil {
		t.Fatal(err)
	}
	bars := g.run.Bars
	n := bars.Len()
	var decisions backtest.Decisions
	var targetAt func(i int) float64
	if s.Style() == script.StyleSignals {
		full, err := s.Signals(ctxT(t), g.all)
		if err != nil {
			t.Fatal(err)
		}
		sig := full.From(g.from)
		decisions.Signals, targetAt = &sig, sig.TargetAt
	} else {
		// on_bar over the warm-up and the tape, stepped from the tape's
		// first bar on: its indicators have their history, as live.
		st, err := s.Begin(ctxT(t), g.all)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		rec := &recorder{st: offsetStepper{st, g.from}, intents: map[int]strategy.Intent{}}
		decisions.Stepper = rec
		targetAt = func(i int) float64 {
			if in := rec.intents[i]; in.Kind == strategy.Target {
				return in.Value
			}
			return math.NaN()
		}
	}
	vc := g.cfg.Venues[0]
	bc := backtest.DefaultConfig()
	bc.Capital, bc.FeeBps, bc.SlippageBps = decimal.NewFromInt(10000), vc.FeeBps, vc.SlippageBps
	res, err := backtest.Run(ctxT(t), bars, bc, decisions)
	if err != nil {
		t.Fatal(err)
	}
	exits := map[string]int{}
	for _, tr := range res.AllTrades {
		exits[tr.Exit]++
	}
	if len(kinds) == 0 {
		kinds = []string{"stop_loss", "take_profit", ""}
	}
	for _, k := range kinds {
		if exits[k] < n/400 {
			t.Fatalf("the backtest's exits %v: the fixture should reach each of %q often", exits, kinds)
		}
	}
	decs, err := g.r.cfg.Store.Decisions(id)
	if err != nil {
		t.Fatal(err)
	}
	if len(decs) != n {
		t.Fatalf("%d decisions for %d bars of the tape", len(decs), n)
	}
	// Equal to the cent: the two differ by less than half a cent at every
	// close (so the difference rounds to 0.00; rounding each side alone
	// would split a value that sits on a half cent). The gap comes from
	// live quantities cut to the venue's 8 decimals.
	halfCent, worst := decimal.New(5, -3), decimal.Zero
	for i, dc := range decs {
		want := targetAt(i)
		if !dc.Bar.Equal(time.Unix(bars.Time[i], 0)) || dc.Status != DecisionDecided || dc.HasTarget != (want == want) || (dc.HasTarget && dc.Target != want) {
			t.Fatalf("bar %d: live decision %+v, backtest target %v", i, dc, want)
		}
		if gap := dc.Equity.Sub(decimal.NewFromFloat(res.Curve.Equity[i])).Abs(); !gap.LessThan(halfCent) {
			t.Fatalf("bar %d: live equity %s at the close, backtest %v", i, dc.Equity, res.Curve.Equity[i])
		} else if gap.GreaterThan(worst) {
			worst = gap
		}
	}
	index := map[int64]int{}
	for i, ts := range bars.Time {
		index[ts] = i
	}
	key := func(bar int, side string, price, qty float64, exit string) string {
		return fmt.Sprintf("%05d %s %s %s %s", bar, side, money(price), qty6(qty), exit)
	}
	var want, got []string
	for _, tr := range res.AllTrades {
		want = append(want, key(tr.EntryBar, "buy", tr.EntryPrice, tr.Quantity, ""), key(tr.ExitBar, "sell", tr.ExitPrice, tr.Quantity, tr.Exit))
	}
	if p := res.OpenPosition; p != nil {
		want = append(want, key(p.EntryBar, "buy", p.EntryPrice, p.Quantity, ""))
	}
	intents, err := g.r.cfg.Store.Intents(id)
	if err != nil {
		t.Fatal(err)
	}
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
		got = append(got, key(bar, in.Side, p, q, in.Exit))
	}
	sort.Strings(want)
	sort.Strings(got)
	same := len(got) == len(want)
	for k := 0; same && k < len(got); k++ {
		gf, wf := strings.Fields(got[k]), strings.Fields(want[k])
		gq, _ := decimal.NewFromString(gf[3])
		wq, _ := decimal.NewFromString(wf[3])
		gf[3], wf[3] = "", ""
		// Quantities agree to a millionth: live ones are cut to the
		// venue's 8 decimals, the backtest's are not.
		same = strings.Join(gf, " ") == strings.Join(wf, " ") && gq.Sub(wq).Abs().LessThanOrEqual(decimal.New(1, -6))
	}
	if !same {
		t.Fatalf("live fills differ from the backtest's:\nlive (%d):\n%s\nbacktest (%d):\n%s", len(got), strings.Join(got, "\n"), len(want), strings.Join(want, "\n"))
	}
	if brackets < exits["stop_loss"]+exits["take_profit"] {
		t.Fatalf("%d brackets sent for %d exits at a leg", brackets, exits["stop_loss"]+exits["take_profit"])
	}
	final, _ := g.r.Get(id)
	if gap := final.Equity.Sub(decimal.NewFromFloat(res.Curve.Equity[n-1])).Abs(); !gap.LessThan(halfCent) {
		t.Fatalf("final equity live %s, backtest %v", final.Equity, res.Curve.Equity[n-1])
	}
	t.Logf("%d bars on the tape, %d fills (%d brackets; exits %v); final equity %s; largest equity gap at a close %s",
		n, len(got), brackets, exits, final.Equity.StringFixed(2), worst.StringFixed(8))
}

// gappedTape is n 1m bars of a seeded walk whose opens gap away from the
// previous close (up to 0.1 %), as a recorded market's do: a market order
// decided at a close must fill at the next open, not at the close.
func gappedTape(n int, seed uint64, start time.Time) strategy.Bars {
	b := strategy.Bars{Series: symbol + "@1m"}
	x := seed
	next := func() float64 { x ^= x << 13; x ^= x >> 7; x ^= x << 17; return (float64(x%2001) - 1000) / 1000 }
	price := 100.0
	for i := range n {
		open := math.Round(price*(1+next()*0.001)*100) / 100
		cl := math.Round(open*(1+next()*0.004)*100) / 100
		hi := math.Max(open, cl) + math.Round(math.Abs(next())*10)/100
		lo := math.Min(open, cl) - math.Round(math.Abs(next())*10)/100
		appendBar(&b, start.Add(time.Duration(i)*time.Minute).Unix(), open, hi, lo, cl, 1)
		price = cl
	}
	return b
}

// TestTapeForwardTestEqualsBacktest: a bracketed signals strategy deployed
// auto on paper on a node whose clock follows a recorded tape of 2,400 1m
// bars whose opens gap from the closes before them: it warms up from the
// bars before the tape's start, every bar closes on the tape's clock, it
// sizes and prices its brackets from the next open as the backtest does,
// and the paper venue fills at the tape's prices (market orders at the
// next open, exits where each bar's path, gaps included, meets them, by
// the backtest's intrabar rule). Its decisions, fills (bar, side, price to
// the cent, quantity, exit kind) and equity at every close equal a
// backtest of the same bars from the tape's start, fees included.
func TestTapeForwardTestEqualsBacktest(t *testing.T) {
	longForward(t)
	const warm, n = 100, 2400
	all := gappedTape(warm+n, 7, time.Date(2026, 3, 1, 22, 20, 0, 0, time.UTC))
	g := newTapeRig(t, all, warm, 0)
	d, err := g.r.Create(ctxT(t), Spec{Strategy: "sma_bracket.star", Source: smaBracket, Series: symbol + "@1m", Venue: "paper",
		Mode: ModeAuto, Capital: decimal.NewFromInt(10000), Warmup: 60})
	if err != nil {
		t.Fatal(err)
	}
	g.play(t)
	g.equalsBacktest(t, d.ID, smaBracket)
}

// BenchmarkTapeReplay measures how fast one deployment (the bracketed
// strategy, auto on paper) plays a recorded tape at --speed max through
// the node in process: bars/s.
func BenchmarkTapeReplay(b *testing.B) {
	const warm, n = 100, 1000
	all := gappedTape(warm+n, 7, time.Date(2026, 3, 1, 22, 20, 0, 0, time.UTC))
	var played time.Duration
	for range b.N {
		g := newTapeRig(b, all, warm, 0)
		if _, err := g.r.Create(ctxT(b), Spec{Strategy: "sma_bracket.star", Source: smaBracket, Series: symbol + "@1m", Venue: "paper",
			Mode: ModeAuto, Capital: decimal.NewFromInt(10000), Warmup: 60}); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		g.play(b)
		played += time.Since(start)
	}
	b.ReportMetric(float64(n*b.N)/played.Seconds(), "bars/s")
}

// stepCount is a node mark step that counts.
type stepCount struct{ n int }

func (s *stepCount) step(context.Context) error { s.n++; return nil }

// TestTapeRunPacesWaitsAndEnds: the run waits for a deployment before its
// first bar and at every bar until each reader asked for the next (a
// source made and never read holds nothing up); at
// --speed 60 it waits a second of wall time per 1m bar (asked of the
// injected wall clock); the clock reads each bar's close as it is handed
// over; a closed reader is no longer waited for; the tape's end is io.EOF.
func TestTapeRunPacesWaitsAndEnds(t *testing.T) {
	bars := gappedTape(5, 3, time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC))
	var waits []time.Duration
	fire := func(d time.Duration) <-chan time.Time {
		waits = append(waits, d)
		c := make(chan time.Time, 1)
		c <- time.Time{}
		return c
	}
	steps := &stepCount{}
	clk := tapeclock.New(time.Unix(bars.Time[0], 0))
	run := &TapeRun{Series: bars.Series, Symbol: symbol, Bars: bars, Clock: clk, Tape: paper.NewTape(), Step: steps.step, Speed: 60, After: fire}
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)

	// Two deployments read the tape, each on its own loop; b stops after
	// two bars. While a reader holds bar i, the run has handed over no
	// bar after it and the clock reads bar i's close.
	read := func(src BarSource, stopAfter int, out chan<- []float64, errs chan<- error) {
		var after time.Time
		var got []float64
		defer func() { out <- got }()
		for i := 0; ; i++ {
			if i == stopAfter {
				src.(interface{ Close() }).Close()
				return
			}
			bar, err := src.Next(ctx, bars.Series, after)
			if err == io.EOF {
				return
			}
			if err != nil {
				errs <- err
				return
			}
			if p, now := run.Published(), clk.Now(); p != i+1 || !now.Equal(bar.Time.Add(time.Minute)) {
				errs <- fmt.Errorf("holding bar %d: %d bars handed over, clock %v", i, p, now)
				return
			}
			got = append(got, bar.Close)
			after = bar.Time
		}
	}
	outA, outB, errs := make(chan []float64, 1), make(chan []float64, 1), make(chan error, 2)
	a, b := run.Source(), run.Source()
	_ = run.Source() // a source made before the runner started, never read
	go read(a, -1, outA, errs)
	go read(b, 2, outB, errs)
	for { // both wait for the first bar before the run starts: neither joins late
		run.mu.Lock()
		ch, n := run.wait(), len(run.readers)
		run.mu.Unlock()
		if n == 2 {
			break
		}
		<-ch
	}
	done := make(chan error, 1)
	go func() { done <- run.Run(ctx) }()
	gotA, gotB := <-outA, <-outB
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	if len(gotA) != bars.Len() || gotA[4] != bars.Close[4] || len(gotB) != 2 {
		t.Fatalf("a read closes %v, b %v: want every bar's, and b's first two", gotA, gotB)
	}
	if steps.n != 1+bars.Len() { // the mark at the start, then one per bar
		t.Fatalf("%d node steps for %d bars", steps.n, bars.Len())
	}
	if len(waits) != bars.Len() || waits[0] != time.Second {
		t.Fatalf("paced by %v: want a second per 1m bar at speed 60", waits)
	}
}

// offsetStepper steps a backtest over the tape with a stepper begun over
// the warm-up and the tape: the tape's bar i is its bar from+i.
type offsetStepper struct {
	st   backtest.Stepper
	from int
}

func (o offsetStepper) Step(i int, a strategy.Account) (strategy.Intent, error) {
	return o.st.Step(o.from+i, a)
}

// TestTapeOnBarForwardTestEqualsBacktest: an on_bar strategy whose ctx
// reads the deployment's own account, bracketed, over 2,000 gapped bars
// of a tape after a 100-bar warm-up: decisions, fills and equity at every
// close equal the backtest's of the same bars from the tape's start.
func TestTapeOnBarForwardTestEqualsBacktest(t *testing.T) {
	longForward(t)
	const warm, n = 100, 2000
	all := gappedTape(warm+n, 7, time.Date(2026, 3, 1, 22, 20, 0, 0, time.UTC))
	g := newTapeRig(t, all, warm, 0)
	d, err := g.r.Create(ctxT(t), Spec{Strategy: "onbar_bracket.star", Source: onBarBracket, Series: symbol + "@1m", Venue: "paper",
		Mode: ModeAuto, Capital: decimal.NewFromInt(10000), Warmup: 60})
	if err != nil {
		t.Fatal(err)
	}
	g.play(t)
	g.equalsBacktest(t, d.ID, onBarBracket)
}

// TestTapeRunHandsAGappedSeriesOnTheCalendar: on a tape of two series
// whose second misses the calendar bar just handed over, a deployment of
// that series alone waits for its next bar until the calendar reaches it
// (handed it now, it would decide on a bar that has not closed, at a
// mark that is that bar's open), while a portfolio's reader of it is
// handed it at once, to hold until its calendar bar.
func TestTapeRunHandsAGappedSeriesOnTheCalendar(t *testing.T) {
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	full := gappedTape(6, 3, start)
	full.Series = "BTC-USD@1m"
	gapped := gappedWalk("ETH-USD@1m", 6, 5, 40, start, func(i int) bool { return i == 2 })
	run := &TapeRun{Series: full.Series, Symbol: "BTC-USD", Bars: full, Clock: tapeclock.New(start), Tape: paper.NewTape(),
		More: []TapeSeries{{Series: gapped.Series, Symbol: "ETH-USD", Bars: gapped}}}
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	run.published = 3 // the calendar bars of minutes 0, 1 and 2, which ETH missed
	run.Clock.Set(start.Add(3 * time.Minute))
	now, cancel := context.WithCancel(ctxT(t))
	cancel() // what is not handed over at once is waited for: here, not at all
	after := time.Unix(gapped.Time[1], 0)
	if b, err := run.Source().Next(now, gapped.Series, after); err == nil {
		t.Fatalf("a deployment of ETH alone was handed its bar of %s with the clock at %s", b.Time.Format(time.RFC3339), run.Clock.Now().Format(time.RFC3339))
	}
	b, err := run.Group().Source().Next(now, gapped.Series, after)
	if err != nil || b.Time.Unix() != gapped.Time[2] {
		t.Fatalf("a portfolio's reader of ETH: %v %v, want its next bar ahead of the calendar", b.Time, err)
	}
}
