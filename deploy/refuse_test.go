package deploy

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/node"
	"wicket/strategy"
)

// TestDeployRefusesSeriesWithoutBars: a series the history store holds no
// bar of has no warm-up and nothing to check with: refused, naming the
// command that records it; the series the store holds deploys.
func TestDeployRefusesSeriesWithoutBars(t *testing.T) {
	g := researchRig(t, 400)
	held := g.hist
	g.hist = func(ctx context.Context, series string, before time.Time, n int) (strategy.Bars, error) {
		if series == "ETH-USD@1m" { // as the node's store answers a series it holds no bar of: none
			return strategy.Bars{Series: series}, nil
		}
		return held(ctx, series, before, n)
	}
	g.restart()
	spec := Spec{Strategy: "sma_half.star", Source: smaHalf, Series: "ETH-USD@1m", Venue: "paper", Mode: ModeAuto, Capital: decimal.NewFromInt(10000), Warmup: 80}
	_, err := g.r.Check(ctxT(t), spec)
	wantErr(t, err, "ETH-USD@1m has no bars", "wicket data fetch ETH-USD@1m")
	if _, err := g.r.Create(ctxT(t), spec); err == nil {
		t.Fatal("a deployment over a series without bars was created")
	}
	spec.Series = symbol + "@1m"
	if _, err := g.r.Check(ctxT(t), spec); err != nil {
		t.Fatal(err)
	}
}

// TestDeployRefusesCapitalAboveVenue: a capital of 1e12 on a venue that
// holds a million is refused, naming what the venue holds.
func TestDeployRefusesCapitalAboveVenue(t *testing.T) {
	g := newRig(t)
	spec := Spec{Strategy: "sma_half.star", Source: smaHalf, Series: symbol + "@1m", Venue: "paper", Mode: ModeAuto,
		Capital: decimal.New(1, 12), Warmup: 40}
	_, err := g.r.Create(ctxT(t), spec)
	wantErr(t, err, "capital 1000000000000 is more than venue paper holds", "give at most 1000000.00")
	spec.Capital = decimal.NewFromInt(1_000_000)
	if _, err := g.r.Create(ctxT(t), spec); err != nil {
		t.Fatal(err)
	}
}

// TestDeployPreviewSinceIsFirstBar: the preview's backtest is dated from
// the first bar the store holds, not from a year before now.
func TestDeployPreviewSinceIsFirstBar(t *testing.T) {
	g := researchRig(t, 400)
	spec := Spec{Strategy: "sma_half.star", Source: smaHalf, Series: symbol + "@1m", Venue: "paper", Mode: ModeAuto, Capital: decimal.NewFromInt(10000), Warmup: 80}
	d, err := g.r.Check(ctxT(t), spec)
	if err != nil {
		t.Fatal(err)
	}
	first := g.clk.Now().Add(-400 * time.Minute).UTC().Format(time.RFC3339)
	if b := d.Preview.Backtest; b == nil || !strings.HasPrefix(b.From, first[:16]) || b.To == "" {
		t.Fatalf("backtest %+v: want it dated from the store's first bar %s", b, first)
	}
}

// TestDeployCountsBarsSkippedAfterWarmup: the bars between the warm-up's
// last bar and the first bar the deployment handles (the tape read after
// deploying) are recorded as missed, as a gap between two live bars is.
func TestDeployCountsBarsSkippedAfterWarmup(t *testing.T) {
	g := researchRig(t, 400) // the store's last bar closes at the rig's clock
	d := g.deploy(Spec{Warmup: 80})
	bars := path(100, 100.5, 101, 100.5, 100, 100.5)
	g.step(d.ID, bars, 4) // the first handled bar is the fifth after the warm-up's last
	got, _ := g.r.Get(d.ID)
	decs, err := g.store.Decisions(d.ID)
	if err != nil {
		t.Fatal(err)
	}
	missed := 0
	for _, dc := range decs {
		if dc.Status == DecisionMissed {
			missed++
		}
	}
	if got.Missed != 4 || missed != 4 {
		t.Fatalf("missed %d (journal %d), want the 4 bars between the warm-up and the first bar handled", got.Missed, missed)
	}
}

// TestDeployOrderWithoutMarkIsNotSent: an order decided before the venue
// has a mark for its symbol (the node just restarted) is not sent to be
// rejected no_mark: it is recorded not sent, with the node's reason, and
// the bar is not traded late.
func TestDeployOrderWithoutMarkIsNotSent(t *testing.T) {
	g := newRig(t)
	g.r.cfg.MarkWait = -1 // no wait: the mark never comes in this test
	d := g.deploy(Spec{Strategy: "flip.star", Source: flip})
	bars := path(100, 101) // an up bar: flip goes long
	g.clk.Set(bars[1].Time.Add(time.Minute))
	if err := g.r.Step(ctxT(t), d.ID, bars[1]); err != nil { // the market has given no price: no mark
		t.Fatal(err)
	}
	in := g.intents(d.ID)
	if len(in) != 1 || in[0].Status != IntentRefused || !strings.Contains(in[0].Note, "no fresh mark") ||
		!strings.Contains(in[0].Note, "not traded late") || !strings.Contains(in[0].Note, "no price of "+symbol) {
		t.Fatalf("an order without a mark: %+v", in)
	}
	page, err := g.ns.Client(node.WithClock(g.clk.Now)).Audit(context.Background(), node.AuditQuery{ClientOrderID: in[0].ClientOrderID, Limit: 10})
	if err != nil || len(page.Entries) != 0 {
		t.Fatalf("the node heard of it: %+v %v", page.Entries, err)
	}
}

// TestIntentIDTravelsOnAFuturesVenue: every order a deployment sends, a
// single series' or a portfolio leg's, goes out at a binance-futures
// venue under an id that leaves room for a split flip's -close and -open
// within Binance's 36 characters, distinct per leg and bar; elsewhere
// under the whole id.
func TestIntentIDTravelsOnAFuturesVenue(t *testing.T) {
	bar := time.Date(2026, 3, 2, 0, 1, 0, 0, time.UTC)
	fut := project.Venue{Name: "perps", Kind: project.KindBinanceFutures}
	seen := map[string]bool{}
	for k := range 3 {
		id := intentID(fut, "dep-1", bar, k)
		if len(id+node.FlipCloseSuffix) > 36 || seen[id] {
			t.Errorf("leg %d: %q (%d characters with -close, seen %v)", k, id, len(id+node.FlipCloseSuffix), seen[id])
		}
		seen[id] = true
	}
	if got, want := intentID(project.Venue{Name: "paper"}, "dep-1", bar, 1), ClientOrderID("dep-1", bar, 1); got != want {
		t.Errorf("paper: %q, want the whole id %q", got, want)
	}
}
