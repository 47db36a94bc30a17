package deploy

import (
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// TestDeployRejectedOrdersAreNotCounted: an order the node rejects does
// not count toward max_orders_per_day, as a backtest counts none (issue
// 41 item 10). The market has no price until the first order is rejected
// for it; then two orders fill before the third pauses the deployment.
func TestDeployRejectedOrdersAreNotCounted(t *testing.T) {
	g := newRig(t)
	g.r.cfg.MarkWait = -1 // the missing mark never comes: no wait for it
	d := g.deploy(Spec{Allowance: Allowance{MaxOrdersPerDay: 2}})
	var cs []float64
	for range 4 {
		cs = append(cs, vee()...)
	}
	bars := path(cs...)
	for _, b := range bars {
		g.clk.Set(b.Time.Add(time.Minute))
		if len(g.intents(d.ID)) == 0 {
			g.mkt.set(decimal.Zero) // no mark: the order is not sent (the node would reject it)
		} else {
			g.mkt.set(decimal.NewFromFloat(b.Close))
		}
		if err := g.r.Step(ctxT(t), d.ID, b); err != nil {
			t.Fatal(err)
		}
	}
	dep, _ := g.r.Get(d.ID)
	if dep.State != StatePaused || !strings.Contains(dep.Reason, "max_orders_per_day") {
		t.Fatalf("state %s (%s), want paused by max_orders_per_day", dep.State, dep.Reason)
	}
	var rejected, sent int
	for _, in := range g.intents(d.ID) {
		if in.Status == IntentRejected || in.Status == IntentRefused {
			rejected++
		} else {
			sent++
		}
	}
	if rejected == 0 {
		t.Fatal("no order was rejected: the fixture no longer tests what it says")
	}
	if sent != 2 {
		t.Fatalf("%d orders sent after %d rejected, want 2 (the allowance; a rejected order is not counted)", sent, rejected)
	}
}
