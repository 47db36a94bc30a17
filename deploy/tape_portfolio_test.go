package deploy

import (
	"context"
	"math"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/internal/tapeclock"
	"wicket/node"
	"wicket/node/nodetest"
	"wicket/node/paper"
	"wicket/strategy"
	"wicket/strategy/backtest"
	"wicket/strategy/portfolio"
	"wicket/strategy/script"
	"wicket/strategy/ta"
)

// gappedWalk is n 1m bars of series from start: a seeded walk whose
// opens gap from the previous close (up to 0.1 %), prices in cents, with
// no bar at the indexes gap says (the asset did not trade then).
func gappedWalk(series string, n int, seed uint64, p0 float64, start time.Time, gap func(i int) bool) strategy.Bars {
	b := strategy.Bars{Series: series}
	x := seed
	next := func() float64 { x ^= x << 13; x ^= x >> 7; x ^= x << 17; return (float64(x%2001) - 1000) / 1000 }
	price := p0
	for i := range n {
		open := math.Round(price*(1+next()*0.001)*100) / 100
		cl := math.Round(open*(1+next()*0.004)*100) / 100
		hi := math.Max(open, cl) + math.Round(math.Abs(next())*10)/100
		lo := math.Min(open, cl) - math.Round(math.Abs(next())*10)/100
		if gap != nil && gap(i) {
			continue
		}
		appendBar(&b, start.Add(time.Duration(i)*time.Minute).Unix(), open, hi, lo, cl, 1e9)
		price = cl
	}
	return b
}

// TestTapePortfolioForwardTestEqualsBacktest: the three-asset rotation
// deployed auto on paper on a node whose clock follows a recorded tape of
// its three series (2,000 gapped 1m bars each after a 60-bar warm-up, SOL
// missing a bar now and then), played by TapeRun over their calendar.
// Every calendar bar's weights, every fill (asset, bar, side, quantity,
// price and fee to the cent) and the equity at every close equal the
// portfolio backtest of the same bars. Its orders fill at their asset's
// next open, which gaps from the decision's close, so a fill at the close
// would show.
func TestTapePortfolioForwardTestEqualsBacktest(t *testing.T) {
	longForward(t)
	const warm, n = 60, 2000
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	series := []string{"BTC-USD@1m", "ETH-USD@1m", "SOL-USD@1m"}
	// SOL misses a bar now and then: at those calendar bars it does not
	// trade, and an order for it decided at the bar before one fills at
	// its next bar's open, a calendar bar later, as the backtest fills it.
	s, err := script.Load(ctxT(t), script.Source{Name: "rotation.star", Text: rotation}, script.Options{Memo: ta.NewMemo(0)})
	if err != nil {
		t.Fatal(err)
	}
	reb, _ := portfolio.ParseRebalance(s.Rebalance())
	cfg := venueConfig()
	vc := cfg.Venues[0]
	bc := backtest.DefaultConfig()
	bc.Capital, bc.FeeBps, bc.SlippageBps = decimal.NewFromInt(10000), vc.FeeBps, vc.SlippageBps
	tradeFrom := time.Unix(start.Unix(), 0).Add(time.Duration(warm+1) * time.Minute)
	backtestOf := func(all map[string]strategy.Bars) ([]strategy.Bars, [][]float64, *portfolio.Result) {
		assets, err := portfolio.Align([]strategy.Bars{all[series[0]], all[series[1]], all[series[2]]})
		if err != nil {
			t.Fatal(err)
		}
		weights, err := s.Weights(ctxT(t), assets)
		if err != nil {
			t.Fatal(err)
		}
		res, err := portfolio.RunFrom(ctxT(t), assets, weights, reb, bc, portfolio.Options{TradeFrom: tradeFrom, RecordFills: true})
		if err != nil {
			t.Fatal(err)
		}
		return assets, weights, res
	}
	gaps := map[int]bool{}
	for i := warm + 6; i < warm+n; i++ {
		if i%31 == 0 || i%97 == 0 || i%151 == 0 || i%233 == 0 {
			gaps[i] = true
		}
	}
	all := map[string]strategy.Bars{
		series[0]: gappedWalk(series[0], warm+n, 7, 100, start, nil),
		series[1]: gappedWalk(series[1], warm+n, 11, 40, start, nil),
		series[2]: gappedWalk(series[2], warm+n, 13, 20, start, func(i int) bool { return gaps[i] }),
	}
	assets, weights, res := backtestOf(all)
	across := 0 // SOL fills decided before a bar it missed
	for _, f := range res.Fills {
		if i := int(f.Time.Sub(start) / time.Minute); f.Series == series[2] && gaps[i-1] {
			across++
		}
	}
	if len(gaps) < 15 || across < 3 {
		t.Fatalf("SOL misses %d bars, %d of its fills across one: the fixture should miss more", len(gaps), across)
	}
	live := time.Unix(all[series[0]].Time[warm], 0).UTC() // the tape's first bar
	from := func(b strategy.Bars) strategy.Bars {
		k := sort.Search(b.Len(), func(i int) bool { return b.Time[i] >= live.Unix() })
		return b.Slice(k, b.Len())
	}
	clk := tapeclock.New(live)
	tp := paper.NewTape()
	run := &TapeRun{Series: series[0], Symbol: "BTC-USD", Bars: from(all[series[0]]), Clock: clk, Tape: tp,
		More: []TapeSeries{{Series: series[1], Symbol: "ETH-USD", Bars: from(all[series[1]])}, {Series: series[2], Symbol: "SOL-USD", Bars: from(all[series[2]])}}}
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	ns := nodetest.NewServer(t, nodetest.WithConfig(cfg), nodetest.WithFeed(paper.Feed{Seed: 1, Tape: tp}), nodetest.WithClock(clk.Now))
	run.Step = func(context.Context) error { ns.Tick(t, 1); return nil } // Run is called on the test's goroutine
	hist := func(_ context.Context, s string, before time.Time, k int) (strategy.Bars, error) {
		b := all[s]
		end := sort.Search(b.Len(), func(i int) bool { return b.Time[i] > before.Add(-time.Minute).Unix() })
		out := strategy.Bars{Series: s} // a copy, as the history store reads: the legs append to theirs
		for i := max(0, end-k); i < end; i++ {
			appendBar(&out, b.Time[i], b.Open[i], b.High[i], b.Low[i], b.Close[i], b.Volume[i])
		}
		return out, nil
	}
	r, err := New(ctxT(t), Config{Project: cfg, Store: openStore(t, t.TempDir()), Node: ns.Local(node.KeyControl), Strategies: newPool(t),
		Now: clk.Now, NewID: seq(), History: hist, NextOpen: run.NextOpen,
		Bars: func(project.Venue, string) BarSource { return run.Source() }}) // as the node does: its legs become one group
	if err != nil {
		t.Fatal(err)
	}
	d, err := r.Create(ctxT(t), Spec{Strategy: "rotation.star", Source: rotation, Venue: "paper", Mode: ModeAuto,
		Capital: decimal.NewFromInt(10000), Warmup: warm})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Legs) != 3 || d.Series != strings.Join(series, ",") {
		t.Fatalf("deployment %+v: want one deployment over the three legs", d)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // a guard against a hang
	defer cancel()
	r.Start(ctx)
	if err := run.Run(ctx); err != nil {
		t.Fatalf("the tape stopped after %d calendar bars: %v", run.Published(), err)
	}
	r.Wait()

	cal := assets[0].Time
	first := sort.Search(len(cal), func(i int) bool { return cal[i] >= live.Unix() })

	// Every calendar bar of the tape decided, with the backtest's weights.
	decs, err := r.cfg.Store.Decisions(d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(decs) != len(cal)-first || len(decs) != n {
		t.Fatalf("%d decisions live for %d calendar bars of the tape", len(decs), len(cal)-first)
	}
	for j, dc := range decs {
		i := first + j
		col := make([]float64, len(series))
		for a := range series {
			col[a] = weights[a][i]
		}
		if dc.Status != DecisionDecided || dc.Bar.Unix() != cal[i] {
			t.Fatalf("calendar bar %d: live decision %+v", i, dc)
		}
		if want := weightsNote(series, decisionOf(col)); dc.Note != want {
			t.Fatalf("bar %s: live %q, backtest %q", dc.Bar.Format(time.RFC3339), dc.Note, want)
		}
	}

	// Fills: each live order filled at its asset's next open after the
	// decision, where the backtest fills it.
	type fill struct {
		series      string
		at          int64 // the bar whose open it filled at
		side        string
		qty         float64
		price, fee  decimal.Decimal // to the cent
		decided     int64
		status, why string
	}
	nextBar := func(s string, ts int64) int64 {
		b := all[s]
		if k := sort.Search(b.Len(), func(i int) bool { return b.Time[i] > ts }); k < b.Len() {
			return b.Time[k]
		}
		return 0
	}
	intents, err := r.cfg.Store.Intents(d.ID)
	if err != nil {
		t.Fatal(err)
	}
	var got, want []fill
	for _, in := range intents {
		dq := in.Filled
		if in.Side == "sell" {
			dq = dq.Neg()
		}
		q, _ := dq.Float64()
		got = append(got, fill{series[in.N], nextBar(series[in.N], in.Bar.Unix()), in.Side, q, in.Price.Round(2), in.Fee.Round(2), in.Bar.Unix(), in.Status, in.Note})
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
	offOpen := 0
	for k := range want {
		g, w := got[k], want[k]
		if g.status != IntentFilled || g.series != w.series || g.at != w.at || g.side != w.side || math.Abs(g.qty-w.qty) > 1e-6 ||
			!g.price.Equal(w.price) || !g.fee.Equal(w.fee) {
			t.Fatalf("fill %d: live %s %s %s at %s %v @ %s fee %s (%s); backtest %s at %s %v @ %s fee %s", k, g.status, g.series, g.side,
				time.Unix(g.at, 0).UTC().Format(time.RFC3339), g.qty, g.price, g.fee, g.why, w.series, time.Unix(w.at, 0).UTC().Format(time.RFC3339), w.qty, w.price, w.fee)
		}
		b := all[g.series]
		if !decimal.NewFromFloat(b.Close[index(b, g.decided)]).Round(2).Equal(decimal.NewFromFloat(b.Open[index(b, g.at)]).Round(2)) {
			offOpen++
		}
	}
	if offOpen < len(got)/2 {
		t.Fatalf("%d of %d fills at an open away from the decision's close: the fixture's opens should gap", offOpen, len(got))
	}

	// The equity at every close, to the cent.
	halfCent, worst := decimal.New(5, -3), decimal.Zero
	for j, dc := range decs {
		i := first + j
		want := decimal.NewFromInt(10000)
		if i > first {
			want = decimal.NewFromFloat(res.Curve.Equity[i-first-1])
		}
		if gap := dc.Equity.Sub(want).Abs(); !gap.LessThan(halfCent) {
			t.Fatalf("bar %s: live equity %s at the close, backtest %s", dc.Bar.Format(time.RFC3339), dc.Equity, want)
		} else if gap.GreaterThan(worst) {
			worst = gap
		}
	}
	final, _ := r.Get(d.ID)
	if got, want := final.Equity.Round(2), decimal.NewFromFloat(res.Curve.Equity[len(res.Curve.Equity)-1]).Round(2); !got.Equal(want) {
		t.Fatalf("final equity live %s, backtest %s", got, want)
	}
	t.Logf("%d calendar bars (SOL missing %d), %d fills (%d of SOL across a bar it missed; %d at an open away from the decision's close), %d rebalances; final equity %s; largest equity gap at a close %s",
		len(decs), len(gaps), len(got), across, offOpen, res.Rebalances, final.Equity.StringFixed(2), worst.StringFixed(8))
}
