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

// portfolioResearchRig is a portfolio rig whose node's history store
// holds all, with the research engine over it (the checks before a
// deployment trades).
func portfolioResearchRig(t *testing.T, start time.Time, all map[string]strategy.Bars) *portfolioRig {
	t.Helper()
	g := newPortfolioRig(t, start, all, &multiTape{})
	p := project.Project{Root: t.TempDir()}
	hs, err := history.Open(p.HistoryPath())
	if err != nil {
		t.Fatal(err)
	}
	for s, b := range all {
		if err := hs.Write(context.Background(), s, b, history.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	hs.Close()
	g.cfg.Research = research.NewLocal(research.Config{Project: p, Pool: g.cfg.Strategies.(*worker.Pool)})
	g.restart()
	return g
}

// emaTilt weighs each asset by its close over its EMA: an EMA seeded at
// the first bar, so its weights depend on where the history began for
// many bars after.
const emaTilt = `"""Each asset tilted by its close over its EMA."""
universe = ["BTC-USD@1m", "ETH-USD@1m", "SOL-USD@1m"]
rebalance = "bar"

def signals(u):
    return {a: 0.3 * u[a].close / ta.ema(u[a].close, 40) for a in u.assets}
`

// TestDeployPortfolioStartPointCheck: a portfolio deployment passes the
// start-point check a deployment of one series passes: a strategy whose
// weights at the warm-up's last bars depend on where its history began
// (an EMA seeded at the first bar) is refused in the check and at
// create, naming the bar, both weights and the fix; its windowed twin
// (an SMA) and the momentum rotation pass with the check in the answer.
// Before, a portfolio was not checked at all.
func TestDeployPortfolioStartPointCheck(t *testing.T) {
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	g := portfolioResearchRig(t, start, portfolioHistory(start, "BTC-USD@1m", "ETH-USD@1m", "SOL-USD@1m"))
	spec := Spec{Strategy: "ema_tilt.star", Source: emaTilt, Venue: "paper", Mode: ModeAuto, Capital: decimal.NewFromInt(10000), Warmup: 80}
	_, refused := g.r.Check(ctxT(t), spec)
	wantErr(t, refused, "start-point check of portfolio strategy ema_tilt.star", "differ from those decided over only the last", "--warmup 160", "windowed indicators")
	if _, err := g.r.Create(ctxT(t), spec); err == nil || len(g.r.List()) != 0 {
		t.Fatalf("a portfolio whose decisions depend on its start was deployed (%v)", err)
	}

	spec.Strategy, spec.Source = "sma_tilt.star", strings.Replace(emaTilt, "ta.ema(u[a].close, 40)", "ta.sma(u[a].close, 20)", 1)
	d, err := g.r.Check(ctxT(t), spec)
	if err != nil {
		t.Fatal(err)
	}
	sp := d.Preview.StartPoint
	if sp == nil || !sp.Passed || sp.Bars != 80 || sp.Warmup != 80 || sp.Outputs == nil || sp.Outputs.Name != "weights" || !strings.HasPrefix(sp.Verdict, "passed") {
		t.Fatalf("start point %+v: want passed over the 80-bar warm-up", sp)
	}
	spec.Strategy, spec.Source = "rotation.star", rotation
	if d, err = g.r.Check(ctxT(t), spec); err != nil || d.Preview.StartPoint == nil || !d.Preview.StartPoint.Passed {
		t.Fatalf("rotation: %v (%+v)", err, d.Preview)
	}
	t.Logf("refused: %v", refused)
	t.Logf("sma: %s", sp.Verdict)
}
