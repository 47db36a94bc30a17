package deploy

import (
	"testing"

	"github.com/shopspring/decimal"
)

// TestDeployReportReplaysDecisionsAndTracksFills: the tracking report
// replays every live decision over the journaled bars and finds them
// equal, and tracks each fill against its bar's close: on paper the
// difference is the venue's slippage, 5 bps against the trader.
func TestDeployReportReplaysDecisionsAndTracksFills(t *testing.T) {
	g := newRig(t)
	d := g.deploy(Spec{})
	var cs []float64
	for range 2 {
		cs = append(cs, vee()...)
	}
	bars := path(cs...)
	for i := range bars {
		g.step(d.ID, bars, i)
	}
	rep, err := g.r.Report(ctxT(t), d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Replayed != len(bars) || rep.Equal != rep.Replayed || len(rep.Diverged) != 0 {
		t.Fatalf("replayed %d of %d bars, %d equal, diverged %+v", rep.Replayed, len(bars), rep.Equal, rep.Diverged)
	}
	if len(rep.Fills) < 2 {
		t.Fatalf("%d fills tracked", len(rep.Fills))
	}
	for _, f := range rep.Fills {
		if !f.SlippageBps.Round(2).Equal(decimal.NewFromInt(5)) || f.Latency < 0 {
			t.Fatalf("fill %+v: want 5 bps against the trader", f)
		}
	}
}
