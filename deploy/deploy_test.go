package deploy

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/node"
	"wicket/node/command"
	"wicket/strategy"
)

// vee is closes falling 0.2% a bar for 25 bars, then rising 0.3% a bar
// for 20: the fast SMA crosses above the slow one on the way up.
func vee(then ...float64) []float64 {
	var out []float64
	p := 100.0
	for range 25 {
		out = append(out, p)
		p *= 0.998
	}
	for range 20 {
		out = append(out, p)
		p *= 1.003
	}
	for i := range out {
		out[i] = float64(int(out[i]*100)) / 100
	}
	return append(out, then...)
}

func wantErr(t *testing.T, err error, words ...string) {
	t.Helper()
	var de *Error
	if !errors.As(err, &de) {
		t.Fatalf("got %v, want a deploy.Error", err)
	}
	for _, w := range words {
		if !strings.Contains(de.Msg, w) {
			t.Fatalf("error %q does not say %q", de.Msg, w)
		}
	}
}

// TestDeployRefusesBadInputNamingTheFix: an unknown series, an unknown
// venue, a strategy that fails validation, an allowance above the
// guardrail's limits and a warm-up too short are refused, each with its
// fix, and nothing is journaled.
func TestDeployRefusesBadInputNamingTheFix(t *testing.T) {
	g := newRig(t)
	ok := Spec{Strategy: "sma_half.star", Source: smaHalf, Series: symbol + "@1m", Venue: "paper", Capital: decimal.NewFromInt(1000)}
	cases := []struct {
		name  string
		edit  func(*Spec)
		words []string
	}{
		{"unknown series", func(s *Spec) { s.Series = "DOGE-USD@1m" }, []string{"unknown to venue paper", "BTC-USD"}},
		{"bad series", func(s *Spec) { s.Series = "BTC-USD@7m" }, []string{"granularity"}},
		{"unknown venue", func(s *Spec) { s.Venue = "kraken" }, []string{`no venue "kraken"`, "paper"}},
		{"invalid strategy", func(s *Spec) { s.Source = "def signals(bars):\n    return {\"long\": undefined_name}\n" }, []string{"fails validation", "wicket strategy validate"}},
		{"order allowance", func(s *Spec) { s.Allowance.MaxOrderNotional = dp(30000) }, []string{"above the node's guardrail limit of 25000", "at most 25000"}},
		{"position allowance", func(s *Spec) { s.Allowance.MaxPositionNotional = dp(60000) }, []string{"max_position_notional", "at most 50000"}},
		{"negative", func(s *Spec) { s.Allowance.MaxDailyLoss = dp(-1) }, []string{"max_daily_loss", "must be above 0"}},
		{"no capital", func(s *Spec) { s.Capital = decimal.Zero }, []string{"--capital"}},
		{"short warm-up", func(s *Spec) { s.Warmup = 5 }, []string{"shorter than the", "--warmup"}},
		{"mode", func(s *Spec) { s.Mode = "yolo" }, []string{"propose", "auto"}},
	}
	for _, c := range cases {
		s := ok
		c.edit(&s)
		_, err := g.r.Create(ctxT(t), s)
		if err == nil {
			t.Fatalf("%s: accepted", c.name)
		}
		wantErr(t, err, c.words...)
	}
	if ds, _ := g.store.Deployments(); len(ds) != 0 || len(g.r.List()) != 0 {
		t.Fatalf("refused specs left %d deployments", len(ds))
	}
	if _, err := g.r.Create(ctxT(t), ok); err != nil {
		t.Fatal(err)
	}
}

// crashConn is the runner's node client with a crash at the first
// submit: the goroutine sending dies (runtime.Goexit, as a killed
// process stops) either before the node hears of the order or after the
// node took it and before its answer came back.
type crashConn struct {
	marketConn
	afterSend bool
	once      *sync.Once
}

func (c crashConn) Submit(ctx context.Context, env command.Envelope) (string, error) {
	crash := false
	c.once.Do(func() { crash = true })
	if crash && !c.afterSend {
		runtime.Goexit()
	}
	id, err := c.marketConn.Submit(ctx, env)
	if crash {
		runtime.Goexit()
	}
	return id, err
}

// TestDeployRestartBetweenEvaluationAndSendNoDuplicate: a runner killed
// between journaling an intent and the node's answer, before or after
// the node took the order, is restarted and handed the same (latest)
// bar: the order exists exactly once at the node, and the deployment
// holds its fill once. Then bars missed while it was down are recorded
// as missed and only the latest closed bar is evaluated.
func TestDeployRestartBetweenEvaluationAndSendNoDuplicate(t *testing.T) {
	for _, afterSend := range []bool{false, true} {
		name := "before the node heard"
		if afterSend {
			name = "after the node took it"
		}
		t.Run(name, func(t *testing.T) {
			g := newRig(t)
			g.conn = crashConn{marketConn: g.conn.(marketConn), afterSend: afterSend, once: &sync.Once{}}
			g.restart()
			d := g.deploy(Spec{})
			bars := path(vee()...)
			entry := -1
			for i := range bars {
				done := make(chan struct{})
				go func() { defer close(done); g.step(d.ID, bars, i) }()
				<-done
				if in := g.intents(d.ID); len(in) > 0 {
					entry = i
					break
				}
			}
			if entry < 0 {
				t.Fatal("the fixture never traded")
			}
			in := g.intents(d.ID)[0]
			if in.Status != IntentSending {
				t.Fatalf("after the crash the intent is %s, want sending (journaled before the send)", in.Status)
			}
			g.conn = g.conn.(crashConn).marketConn
			g.restart()
			g.step(d.ID, bars, entry) // the same bar, still the latest closed
			if n := g.nodeOrders(in.ClientOrderID); n != 1 {
				t.Fatalf("the node took %s %d times", in.ClientOrderID, n)
			}
			got := g.intents(d.ID)
			if len(got) != 1 || got[0].Status != IntentFilled || got[0].ClientOrderID != in.ClientOrderID {
				t.Fatalf("intents after the restart: %+v", got)
			}
			dep, _ := g.r.Get(d.ID)
			if !dep.Position.Equal(got[0].Filled) {
				t.Fatalf("position %s, filled %s", dep.Position, got[0].Filled)
			}
			// Down for four bars: the fifth is the latest closed.
			more := path(vee(bars[len(bars)-1].Close, 101, 102, 103, 104, 105)...)
			g.step(d.ID, more, len(more)-1)
			decs, _ := g.store.Decisions(d.ID)
			missed := 0
			for _, dc := range decs {
				if dc.Status == DecisionMissed {
					missed++
				}
			}
			if dep, _ := g.r.Get(d.ID); missed != len(more)-2-entry || dep.Missed != missed {
				t.Fatalf("%d missed decisions recorded (deployment says %d), want %d", missed, dep.Missed, len(more)-2-entry)
			}
		})
	}
}

// TestDeployBreakersPauseBeforeTheNextOrder: a loss burst trips
// max_daily_loss and a churning tape trips max_orders_per_day; each
// pauses the deployment with the breaker named, the next order is never
// sent, and only an operator-signed resume resumes it.
func TestDeployBreakersPauseBeforeTheNextOrder(t *testing.T) {
	t.Run("loss burst", func(t *testing.T) {
		g := newRig(t)
		d := g.deploy(Spec{Allowance: Allowance{MaxDailyLoss: dp(150)}})
		last := vee()[44]
		bars := path(vee(last*0.97, last*0.94, last*0.91, last*0.88, last*0.85, last*0.82, last*0.8, last*0.78)...)
		for i := range bars {
			g.step(d.ID, bars, i)
		}
		dep, _ := g.r.Get(d.ID)
		if dep.State != StatePaused || !strings.Contains(dep.Reason, "max_daily_loss") {
			t.Fatalf("state %s (%s), want paused by max_daily_loss", dep.State, dep.Reason)
		}
		in := g.intents(d.ID)
		if len(in) != 1 || in[0].Side != "buy" {
			t.Fatalf("orders %+v: want the entry only (the exit comes after the pause)", in)
		}
		if dep.Position.IsZero() {
			t.Fatal("the open position is kept for the operator")
		}
		// The control key alone does not resume.
		_, err := g.r.Resume(d.ID, node.ArmRequest{Confirm: d.ID})
		wantErr(t, err, "operator key's signature")
		resume(t, g, d.ID)
		if dep, _ := g.r.Get(d.ID); dep.State != StateRunning {
			t.Fatalf("after resume: %s", dep.State)
		}
	})
	t.Run("drawdown", func(t *testing.T) {
		g := newRig(t)
		d := g.deploy(Spec{Allowance: Allowance{MaxDrawdownPct: dp(2)}})
		last := vee()[44]
		bars := path(vee(last*0.97, last*0.94, last*0.91, last*0.88, last*0.85, last*0.82)...)
		for i := range bars {
			g.step(d.ID, bars, i)
		}
		dep, _ := g.r.Get(d.ID)
		if dep.State != StatePaused || !strings.Contains(dep.Reason, "max_drawdown_pct") {
			t.Fatalf("state %s (%s), want paused by max_drawdown_pct", dep.State, dep.Reason)
		}
		if in := g.intents(d.ID); len(in) != 1 {
			t.Fatalf("%d orders: want the entry only", len(in))
		}
		decs, _ := g.store.Decisions(d.ID)
		if last := decs[len(decs)-1]; last.Status != DecisionNotRunning || !strings.Contains(last.Note, "max_drawdown_pct") {
			t.Fatalf("the last bar's record: %+v", last)
		}
	})
	t.Run("orders per day", func(t *testing.T) {
		g := newRig(t)
		d := g.deploy(Spec{Allowance: Allowance{MaxOrdersPerDay: 2}})
		var cs []float64
		for range 4 {
			cs = append(cs, vee()...)
		}
		bars := path(cs...)
		for i := range bars {
			g.step(d.ID, bars, i)
		}
		dep, _ := g.r.Get(d.ID)
		if dep.State != StatePaused || !strings.Contains(dep.Reason, "max_orders_per_day") {
			t.Fatalf("state %s (%s), want paused by max_orders_per_day", dep.State, dep.Reason)
		}
		if in := g.intents(d.ID); len(in) != 2 {
			t.Fatalf("%d orders sent, the allowance is 2 a day", len(in))
		}
	})
}

func resume(t *testing.T, g *rig, id string) {
	t.Helper()
	c, err := g.r.Challenge(ActResume, id)
	if err != nil {
		t.Fatal(err)
	}
	req := node.ArmRequest{Confirm: id, Challenge: c}
	req.Signature = node.SignOperator(g.ns.OperatorKey, Statement(ActResume, id, req))
	if _, err := g.r.Resume(id, req); err != nil {
		t.Fatal(err)
	}
}

// TestDeployProposeSendsOnlyOnApproval: in propose mode nothing is sent
// until an operator-signed approval; a proposal not approved waits while
// the strategy wants its target (proposed once, not at every bar), lapses
// when it decides another and sends nothing; one approved sends exactly
// one order.
func TestDeployProposeSendsOnlyOnApproval(t *testing.T) {
	g := newRig(t)
	d := g.deploy(Spec{Mode: ModePropose})
	var cs []float64
	for range 3 {
		cs = append(cs, vee()...)
	}
	bars := path(cs...)
	first := -1
	for i := range bars {
		g.step(d.ID, bars, i)
		if dep, _ := g.r.Get(d.ID); len(dep.Proposals) > 0 {
			first = i
			break
		}
	}
	if first < 0 || first+1 >= len(bars) {
		t.Fatal("the fixture never proposed")
	}
	p, _ := g.r.Get(d.ID)
	cid := p.Proposals[0].ClientOrderID
	if n := g.nodeOrders(cid); n != 0 {
		t.Fatalf("a proposal reached the node %d times", n)
	}
	// The next bars: the strategy still wants that target, so the
	// proposal waits (batched: nothing is proposed again) until it
	// decides another, when it lapses and sends nothing.
	lapsed := -1
	for i := first + 1; i < len(bars); i++ {
		g.step(d.ID, bars, i)
		in, _, _ := g.store.Intent(cid)
		dep, _ := g.r.Get(d.ID)
		if in.Status == IntentLapsed {
			lapsed = i
			break
		}
		if in.Status != IntentProposed || len(dep.Proposals) != 1 || dep.Proposals[0].ClientOrderID != cid {
			t.Fatalf("bar %d: the proposal is %s, %d waiting: want it waiting alone", i, in.Status, len(dep.Proposals))
		}
	}
	if lapsed < 0 || lapsed == first+1 {
		t.Fatalf("the proposal lapsed at bar %d (proposed at %d): want it to wait, then lapse when the target changes", lapsed, first)
	}
	if n := g.nodeOrders(cid); n != 0 {
		t.Fatal("a lapsed proposal was sent")
	}
	if _, err := g.r.Approve(ctxT(t), cid, node.ArmRequest{}, "test"); err == nil {
		t.Fatal("a lapsed proposal was approved")
	}
	first = lapsed - 1
	// A later change of target is proposed again.
	var dep Deployment
	for i := first + 2; i < len(bars) && len(dep.Proposals) == 0; i++ {
		g.step(d.ID, bars, i)
		dep, _ = g.r.Get(d.ID)
	}
	if len(dep.Proposals) != 1 {
		t.Fatalf("%d proposals waiting", len(dep.Proposals))
	}
	next := dep.Proposals[0].ClientOrderID
	_, err := g.r.Approve(ctxT(t), next, node.ArmRequest{Confirm: next}, "test")
	wantErr(t, err, "operator key's signature")
	c, err := g.r.Challenge(ActApprove, next)
	if err != nil {
		t.Fatal(err)
	}
	req := node.ArmRequest{Confirm: next, Challenge: c}
	req.Signature = node.SignOperator(g.ns.OperatorKey, Statement(ActApprove, next, req))
	in, err := g.r.Approve(ctxT(t), next, req, "by key control via POST /v1/deployments/proposals/x/approve")
	if err != nil || in.Status != IntentFilled {
		t.Fatalf("approved: %+v %v", in, err)
	}
	if n := g.nodeOrders(next); n != 1 {
		t.Fatalf("the approved proposal reached the node %d times", n)
	}
	if _, err := g.r.Approve(ctxT(t), next, req, "by key control via POST /v1/deployments/proposals/x/approve"); err == nil {
		t.Fatal("a proposal was approved twice")
	}
}

// TestDeployWarmupFromHistory: a deployment starts with its warm-up from
// the history store, journaled with it; a live bar the history already
// holds is not handled twice; the first new bar is decided over the
// warm-up and itself, so a crossing the warm-up sets up trades at once.
func TestDeployWarmupFromHistory(t *testing.T) {
	all := path(vee()...)
	cut := len(all) - 3
	g := newRig(t)
	g.hist = func(ctx context.Context, series string, before time.Time, n int) (strategy.Bars, error) {
		b := strategy.Bars{Series: series}
		for _, x := range all[max(0, cut-n):cut] {
			appendBar(&b, x.Time.Unix(), x.Open, x.High, x.Low, x.Close, x.Volume)
		}
		return b, nil
	}
	g.restart()
	d := g.deploy(Spec{})
	if bars, _ := g.store.Bars(d.ID, d.Series, 1000); bars.Len() != min(cut, d.Warmup) {
		t.Fatalf("%d warm-up bars journaled, want %d", bars.Len(), min(cut, d.Warmup))
	}
	g.step(d.ID, all, cut-1) // held by the warm-up already
	if decs, _ := g.store.Decisions(d.ID); len(decs) != 0 {
		t.Fatalf("a warm-up bar was decided: %+v", decs)
	}
	for i := cut; i < len(all); i++ {
		g.step(d.ID, all, i)
	}
	decs, _ := g.store.Decisions(d.ID)
	if len(decs) != len(all)-cut {
		t.Fatalf("%d decisions for %d live bars", len(decs), len(all)-cut)
	}
	// The same decisions as a deployment that saw every bar live.
	h := newRig(t)
	e := h.deploy(Spec{})
	for i := range all {
		h.step(e.ID, all, i)
	}
	full, _ := h.store.Decisions(e.ID)
	for k, dc := range decs {
		w := full[cut+k]
		if dc.HasTarget != w.HasTarget || dc.Target != w.Target {
			t.Fatalf("bar %d: with warm-up %+v, all live %+v", cut+k, dc, w)
		}
	}
}

// TestDeployApprovalResizesAtThePriceNow: a proposal sized at its bar's
// close (100, clipped to max_order_notional 3000: 30 units) is approved
// after a +20% move; it is sized again at the price then (25 units, 3000
// of notional), not sent at its stale quantity (3600); without a price
// at the venue an approval sends nothing.
func TestDeployApprovalResizesAtThePriceNow(t *testing.T) {
	g := newRig(t)
	d := g.deploy(Spec{Strategy: "flip.star", Source: flip, Mode: ModePropose, Allowance: Allowance{MaxOrderNotional: dp(3000)}})
	bars := path(99.5, 100) // the second bar is up, closing at 100: flip proposes its long
	g.step(d.ID, bars, 1)
	dep, _ := g.r.Get(d.ID)
	if len(dep.Proposals) != 1 || !dep.Proposals[0].Quantity.Equal(decimal.NewFromInt(30)) || !dep.Proposals[0].BarClose.Equal(decimal.NewFromInt(100)) {
		t.Fatalf("proposals %+v: want 30 units at the bar's close of 100", dep.Proposals)
	}
	p := dep.Proposals[0]
	g.mkt.set(decimal.NewFromInt(120)) // the market moves +20% before the operator approves
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
	if !in.Quantity.Equal(decimal.NewFromInt(25)) || !in.Filled.Equal(decimal.NewFromInt(25)) || !strings.Contains(in.Note, "re-sized at approval from 30") {
		t.Fatalf("approved after +20%%: %+v, want 25 units (3000 of notional at 120)", in)
	}
}

// TestDeployProposeBatchesAndApproveNext: a propose-mode strategy that
// wants the same long at every bar proposes it once, not at every bar;
// an operator's signed approval of the next 2 orders sends them as they
// are decided, and the third waits as a proposal again.
func TestDeployProposeBatchesAndApproveNext(t *testing.T) {
	g := newRig(t)
	d := g.deploy(Spec{Strategy: "flip.star", Source: flip, Mode: ModePropose})
	var cs []float64
	for i := range 41 {
		cs = append(cs, 100+float64(i)*0.1) // up every bar: flip wants its long at each
	}
	bars := path(cs...)
	for i := 1; i < 40; i++ {
		g.step(d.ID, bars, i)
	}
	if in := g.intents(d.ID); len(in) != 1 || in[0].Status != IntentProposed {
		t.Fatalf("39 bars wanting the same long: %d intents %+v, want one waiting proposal", len(in), in)
	}

	_, err := g.r.ApproveNext(d.ID, node.ArmRequest{For: "2", Confirm: d.ID})
	wantErr(t, err, "operator key's signature")
	c, err := g.r.Challenge(ActApproveNext, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	req := node.ArmRequest{For: "2", Confirm: d.ID, Challenge: c}
	req.Signature = node.SignOperator(g.ns.OperatorKey, Statement(ActApproveNext, d.ID, req))
	if got, err := g.r.ApproveNext(d.ID, req); err != nil || got.PreApproved != 2 {
		t.Fatalf("approve next 2: %+v %v", got, err)
	}
	// Down (the waiting long lapses: flat is where it stands), up, down
	// (sent, approved ahead), up (proposed).
	more := path(cs[39], cs[39]-0.5, cs[39], cs[39]-0.5, cs[39])
	for k := range more[1:] {
		b := more[k+1]
		b.Time = bars[39].Time.Add(time.Duration(k+1) * time.Minute)
		g.clk.Set(b.Time.Add(time.Minute))
		g.mkt.set(decimal.NewFromFloat(b.Close))
		if err := g.r.Step(ctxT(t), d.ID, b); err != nil {
			t.Fatal(err)
		}
	}
	var sent, waiting int
	for _, in := range g.intents(d.ID) {
		switch {
		case in.Status == IntentFilled && strings.Contains(in.Note, "approval of the next orders"):
			sent++
		case in.Status == IntentProposed:
			waiting++
		}
	}
	dep, _ := g.r.Get(d.ID)
	if sent != 2 || waiting != 1 || dep.PreApproved != 0 || len(dep.Proposals) != 1 {
		t.Fatalf("after approving the next 2: %d sent, %d waiting, %d approvals left, %d proposals", sent, waiting, dep.PreApproved, len(dep.Proposals))
	}
}
