package deploy

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/project"
	"wicket/strategy"
	"wicket/strategy/history"
	"wicket/strategy/research"
	"wicket/strategy/worker"
)

// emaCross seeds its EMAs at the first bar: its values depend on where the
// history began for many bars after.
const emaCross = `"""EMA crossover."""
def signals(bars):
    f = ta.ema(bars.close, 10)
    s = ta.ema(bars.close, 60)
    return {"long": ta.cross_above(f, s), "exit": ta.cross_below(f, s), "size": 0.5}
`

// researchRig is a rig whose node has a history store holding n bars of
// the tape before the rig's clock, read for warm-up, and the research
// engine over it on the rig's worker pool.
func researchRig(t *testing.T, n int) *rig {
	t.Helper()
	g := newRig(t)
	p := project.Project{Root: t.TempDir()}
	bars := tape(n, 11, g.clk.Now().Add(-time.Duration(n)*time.Minute))
	s, err := history.Open(p.HistoryPath())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Write(context.Background(), bars.Series, bars, history.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	g.hist = func(ctx context.Context, series string, before time.Time, n int) (strategy.Bars, error) {
		s, err := history.OpenReadOnly(p.HistoryPath())
		if err != nil {
			return strategy.Bars{}, err
		}
		defer s.Close()
		b, err := s.Load(series, time.Time{}, before.Add(-time.Minute))
		if err != nil {
			return strategy.Bars{}, err
		}
		return b.Slice(max(0, b.Len()-n), b.Len()), nil
	}
	g.res = research.NewLocal(research.Config{Project: p, Pool: g.pool.(*worker.Pool)})
	g.restart()
	return g
}

// TestDeployStartPointCheck: the start-point check runs over the warm-up
// at deploy; an EMA-seeded strategy is refused at a short warm-up, naming
// the bars it needs and the fix, and a windowed SMA passes with the
// check's report in the check's answer.
func TestDeployStartPointCheck(t *testing.T) {
	g := researchRig(t, 400)
	spec := Spec{Strategy: "ema_cross.star", Source: emaCross, Series: symbol + "@1m", Venue: "paper", Mode: ModeAuto, Capital: decimal.NewFromInt(10000), Warmup: 80}
	_, err := g.r.Check(ctxT(t), spec)
	wantErr(t, err, "ta.ema(10)", "start-point check", "--warmup 160", "windowed indicators")
	// The seed never washes out within the 80 bars checked: the refusal
	// says so, never that 80 bars are shorter than a smaller figure or that
	// no warm-up is enough while naming one.
	for _, bad := range []string{"is shorter than the", "no warm-up is enough"} {
		if strings.Contains(err.Error(), bad) {
			t.Fatalf("refusal contradicts itself (%q): %v", bad, err)
		}
	}
	if _, err := g.r.Create(ctxT(t), spec); err == nil {
		t.Fatal("an EMA-seeded strategy was deployed on a short warm-up")
	}

	spec.Strategy, spec.Source = "sma_half.star", smaHalf
	d, err := g.r.Check(ctxT(t), spec)
	if err != nil {
		t.Fatal(err)
	}
	sp := d.Preview.StartPoint
	if sp == nil || !sp.Passed || sp.Needed > 80 || sp.Needed < 19 || sp.Warmup != 80 || sp.Bars != 80 {
		t.Fatalf("start point %+v: want passed, needing the slow SMA's 20 bars or so of the 80", sp)
	}
	t.Logf("sma: %s", sp.Verdict)
}

// TestDeployPreviewBacktest: the check's answer carries the lookahead
// verdict and a backtest over what the store holds of the last year, run
// with the deployment's allowance, so a breaker the deployment would trip
// shows before it trades.
func TestDeployPreviewBacktest(t *testing.T) {
	g := researchRig(t, 400)
	spec := Spec{Strategy: "sma_half.star", Source: smaHalf, Series: symbol + "@1m", Venue: "paper", Mode: ModeAuto, Capital: decimal.NewFromInt(10000), Warmup: 80}
	d, err := g.r.Check(ctxT(t), spec)
	if err != nil {
		t.Fatal(err)
	}
	pv := d.Preview
	if pv == nil || !strings.HasPrefix(pv.Lookahead, "passed") || pv.Backtest == nil || pv.Backtest.Error != "" {
		t.Fatalf("preview %+v: want the lookahead verdict and a backtest", pv)
	}
	b := pv.Backtest
	if b.Trades < 3 || b.TotalReturn == nil || b.MaxDrawdown == nil || b.Breaker != nil {
		t.Fatalf("backtest %+v: want the tape's trades and figures, no breaker without an allowance", b)
	}
	spec.Allowance = Allowance{MaxOrdersPerDay: 2}
	if d, err = g.r.Check(ctxT(t), spec); err != nil {
		t.Fatal(err)
	}
	if br := d.Preview.Backtest.Breaker; br == nil || br.Name != "max_orders_per_day" {
		t.Fatalf("backtest under 2 orders a day: breaker %+v, want max_orders_per_day", br)
	}
	t.Logf("%d trades, total return %.4f; %s", b.Trades, *b.TotalReturn, pv.Lookahead)
}

// TestDeployExitsTheVenueCannotCarry: a strategy with a stop-loss and a
// take-profit passes the check (its entries go out as brackets); one
// whose trailing stop rides with a stop-loss, which no venue command
// carries in one group, is refused at the check and at creation, naming
// the leg; the trailing stop alone deploys.
func TestDeployExitsTheVenueCannotCarry(t *testing.T) {
	g := researchRig(t, 400)
	spec := Spec{Strategy: "sma_stops.star", Source: smaBracket, Series: symbol + "@1m", Venue: "paper", Mode: ModeAuto, Capital: decimal.NewFromInt(10000), Warmup: 80}
	d, err := g.r.Check(ctxT(t), spec)
	if err != nil {
		t.Fatal(err)
	}
	if d.Exits != (Exits{StopLoss: 0.004, TakeProfit: 0.006}) {
		t.Fatalf("check's exits %+v", d.Exits)
	}
	spec.Source = strings.Replace(smaHalf, `"size": 0.5}`, `"size": 0.5, "stop_loss": 0.02, "trailing_stop": 0.01}`, 1)
	_, err = g.r.Check(ctxT(t), spec)
	wantErr(t, err, "trailing_stop together with a stop_loss", "the trailing_stop leg cannot be placed")
	if _, err := g.r.Create(ctxT(t), spec); err == nil {
		t.Fatal("a strategy whose exits no venue carries was deployed")
	}
	spec.Source = strings.Replace(smaHalf, `"size": 0.5}`, `"size": 0.5, "trailing_stop": 0.01}`, 1)
	if _, err := g.r.Check(ctxT(t), spec); err != nil {
		t.Fatal(err)
	}
}

// TestDeployOnBarChecks: an on_bar strategy is checked as a signals one
// is: the start-point check over its warm-up and the lookahead proof of
// the preview's backtest both run and pass, and it deploys as on_bar.
func TestDeployOnBarChecks(t *testing.T) {
	g := researchRig(t, 400)
	spec := Spec{Strategy: "onbar_bracket.star", Source: onBarBracket, Series: symbol + "@1m", Venue: "paper", Mode: ModeAuto, Capital: decimal.NewFromInt(10000), Warmup: 80}
	d, err := g.r.Check(ctxT(t), spec)
	if err != nil {
		t.Fatal(err)
	}
	pv := d.Preview
	if d.Style != "on_bar" || pv == nil || pv.StartPoint == nil || !pv.StartPoint.Passed || !strings.HasPrefix(pv.Lookahead, "passed") || pv.Backtest == nil || pv.Backtest.Trades == 0 {
		t.Fatalf("on_bar check: style %q preview %+v", d.Style, pv)
	}
	t.Logf("%s; %s; %d trades", pv.StartPoint.Verdict, pv.Lookahead, pv.Backtest.Trades)
}
