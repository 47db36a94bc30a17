package deploy

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/strategy/backtest"
	"wicket/strategy/script"
	"wicket/strategy/ta"
	"wicket/strategy/templates"
)

// TestTapeLongShortForwardTestEqualsBacktest: the ema_long_short template
// (always in the market after its first cross, long or short half the
// equity) deployed auto on paper on a node whose clock follows a recorded
// tape of 2,000 gapped 1m bars after a 300-bar warm-up: its decisions,
// its fills netted per bar (side, quantity, price to the cent; a flip is
// the exit and the next entry at one open) and its equity at every close,
// shorts marked as the backtest marks them, equal a backtest of the same
// bars from the tape's start, fees included.
func TestTapeLongShortForwardTestEqualsBacktest(t *testing.T) {
	longForward(t)
	const warm, n = 300, 2000
	src, err := templates.Source("ema_long_short")
	if err != nil {
		t.Fatal(err)
	}
	// Short EMAs: their values over the deployment's 250-bar window equal
	// those over the whole history (the seed's weight is below 1e-14).
	knobs := map[string]any{"fast": 5, "slow": 12}
	all := gappedTape(warm+n, 19, time.Date(2026, 3, 1, 22, 20, 0, 0, time.UTC))
	g := newTapeRig(t, all, warm, 0)
	d, err := g.r.Create(ctxT(t), Spec{Strategy: "ema_long_short.star", Source: src, Params: knobs, Series: symbol + "@1m", Venue: "paper",
		Mode: ModeAuto, Capital: decimal.NewFromInt(10000), Warmup: 250})
	if err != nil {
		t.Fatal(err)
	}
	g.play(t)

	s, err := script.Load(ctxT(t), script.Source{Name: "ema_long_short.star", Text: src}, script.Options{Memo: ta.NewMemo(0), Overrides: knobs})
	if err != nil {
		t.Fatal(err)
	}
	full, err := s.Signals(ctxT(t), g.all)
	if err != nil {
		t.Fatal(err)
	}
	sig := full.From(g.from)
	bars := g.run.Bars
	vc := g.cfg.Venues[0]
	bc := backtest.DefaultConfig()
	bc.Capital, bc.FeeBps, bc.SlippageBps = decimal.NewFromInt(10000), vc.FeeBps, vc.SlippageBps
	res, err := backtest.Run(ctxT(t), bars, bc, backtest.Decisions{Signals: &sig})
	if err != nil {
		t.Fatal(err)
	}
	shorts := 0
	for _, tr := range res.AllTrades {
		if tr.Side == "short" {
			shorts++
		}
	}
	if shorts < 10 || len(res.AllTrades)-shorts < 10 {
		t.Fatalf("the backtest's %d trades hold %d shorts: the fixture should go long and short often", len(res.AllTrades), shorts)
	}

	decs, err := g.r.cfg.Store.Decisions(d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(decs) != n {
		t.Fatalf("%d decisions for %d bars of the tape", len(decs), n)
	}
	halfCent, worst := decimal.New(5, -3), decimal.Zero
	for i, dc := range decs {
		want := sig.TargetAt(i)
		if !dc.Bar.Equal(time.Unix(bars.Time[i], 0)) || dc.Status != DecisionDecided || dc.HasTarget != (want == want) || (dc.HasTarget && dc.Target != want) {
			t.Fatalf("bar %d: live decision %+v, backtest target %v", i, dc, want)
		}
		if gap := dc.Equity.Sub(decimal.NewFromFloat(res.Curve.Equity[i])).Abs(); !gap.LessThan(halfCent) {
			t.Fatalf("bar %d: live equity %s at the close, backtest %v", i, dc.Equity, res.Curve.Equity[i])
		} else if gap.GreaterThan(worst) {
			worst = gap
		}
	}

	// Fills netted per bar: signed quantity and price (every fill of a bar
	// is at its open, on one side).
	type net struct {
		qty   float64
		price string
	}
	want := map[int]*net{}
	add := func(m map[int]*net, bar int, qty, price float64) {
		if m[bar] == nil {
			m[bar] = &net{}
		}
		m[bar].qty += qty
		if p := money(price); m[bar].price == "" || m[bar].price == p {
			m[bar].price = p
		} else {
			m[bar].price += "|" + p
		}
	}
	for _, tr := range res.AllTrades {
		sign := 1.0
		if tr.Side == "short" {
			sign = -1
		}
		add(want, tr.EntryBar, sign*tr.Quantity, tr.EntryPrice)
		add(want, tr.ExitBar, -sign*tr.Quantity, tr.ExitPrice)
	}
	if p := res.OpenPosition; p != nil {
		add(want, p.EntryBar, p.Quantity, p.EntryPrice)
	}
	index := map[int64]int{}
	for i, ts := range bars.Time {
		index[ts] = i
	}
	intents, err := g.r.cfg.Store.Intents(d.ID)
	if err != nil {
		t.Fatal(err)
	}
	got := map[int]*net{}
	filled, sells := 0, 0
	for _, in := range intents {
		if !in.Filled.IsPositive() {
			continue
		}
		filled++
		q, _ := in.Filled.Float64()
		if in.Side == "sell" {
			q, sells = -q, sells+1
		}
		p, _ := in.Price.Float64()
		add(got, index[in.Bar.Unix()]+1, q, p) // decided at bar i's close, filled at bar i+1's open
	}
	show := func(m map[int]*net) string {
		var out []string
		for bar, f := range m {
			out = append(out, fmt.Sprintf("%05d %+.6f @ %s", bar, f.qty, f.price))
		}
		sort.Strings(out)
		return strings.Join(out, "\n")
	}
	same := len(got) == len(want)
	for bar, w := range want {
		gf := got[bar]
		same = same && gf != nil && gf.price == w.price && math.Abs(gf.qty-w.qty) <= 1e-6
	}
	if !same {
		t.Fatalf("live fills differ from the backtest's:\nlive (%d bars):\n%s\nbacktest (%d bars):\n%s", len(got), show(got), len(want), show(want))
	}
	final, _ := g.r.Get(d.ID)
	if gap := final.Equity.Sub(decimal.NewFromFloat(res.Curve.Equity[n-1])).Abs(); !gap.LessThan(halfCent) {
		t.Fatalf("final equity live %s, backtest %v", final.Equity, res.Curve.Equity[n-1])
	}
	t.Logf("%d bars on the tape, %d trades (%d short), %d filled orders (%d sells) on %d bars; final equity %s, position %s; largest equity gap at a close %s",
		n, len(res.AllTrades), shorts, filled, sells, len(got), final.Equity.StringFixed(2), final.Position, worst.StringFixed(8))
}
