package deploy

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"math"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/nodetest"
	"wicket/node/venuerig"
	"wicket/strategy/ledger"
	"wicket/strategy/research"
)

// ledgerPlans reads plans from a research ledger, as the node does.
type ledgerPlans struct{ l *ledger.Ledger }

func (p ledgerPlans) PlanOf(ctx context.Context, digest string) (*research.PlanInfo, error) {
	return research.PlanOf(ctx, p.l, digest)
}

func openLedger(t *testing.T) *ledger.Ledger {
	t.Helper()
	lg, err := ledger.Open(filepath.Join(t.TempDir(), "research.db"), ledger.Options{Key: testkit.Bytes(t, 32)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lg.Close() })
	return lg
}

// sealPlan seals plan name on source's text in lg.
func sealPlan(t *testing.T, lg *ledger.Ledger, name, source, series string) {
	t.Helper()
	crit, err := research.ParseCriteria("oos_sharpe>=1, trades>=5")
	if err != nil {
		t.Fatal(err)
	}
	spec := ledger.PlanSpec{Name: name, Hypothesis: "it trends", Criteria: crit, MaxTrials: 50, HoldoutFrom: "2026-01-01T00:00:00Z"}
	row := ledger.Row{Strategy: "flip", Digest: ledger.SourceDigest(source), Series: series, SharpePerPeriod: math.NaN()}
	if err := lg.SealPlan(context.Background(), spec, &row); err != nil {
		t.Fatal(err)
	}
}

// judgePlan records plan name's verdict in lg.
func judgePlan(t *testing.T, lg *ledger.Ledger, name, source, series string, passed bool) {
	t.Helper()
	v := research.Verdict{Plan: name, Passed: passed, Judgements: []research.Judgement{{Criterion: "oos_sharpe>=1", Passed: passed}, {Criterion: "trades>=5", Passed: true}}}
	m, _ := json.Marshal(v)
	row := ledger.Row{Strategy: "flip", Digest: ledger.SourceDigest(source), Series: series, Params: json.RawMessage(`{}`), Metrics: m, SharpePerPeriod: math.NaN()}
	if err := lg.AppendVerdict(context.Background(), name, &row); err != nil {
		t.Fatal(err)
	}
}

// TestPreviewShowsPlan: the deploy preview shows the research plan that
// binds the strategy's text (none, open, then judged) with its criteria
// and its verdict's judgements; a runner reading no ledger shows none.
func TestPreviewShowsPlan(t *testing.T) {
	lg := openLedger(t)
	g := newRig(t)
	g.plans = ledgerPlans{lg}
	g.restart()
	spec := Spec{Strategy: "sma_half.star", Source: smaHalf, Series: symbol + "@1m", Venue: "paper", Mode: ModeAuto, Capital: decimal.NewFromInt(10000)}
	plan := func() *PlanStatus {
		t.Helper()
		d, err := g.r.Check(ctxT(t), spec)
		if err != nil {
			t.Fatal(err)
		}
		if d.Preview == nil || d.Preview.Plan == nil {
			t.Fatalf("no plan in the preview: %+v", d.Preview)
		}
		return d.Preview.Plan
	}
	if p := plan(); p.Status != PlanNone || !strings.Contains(p.Note, "wicket research plan") {
		t.Errorf("no plan: %+v", p)
	}
	sealPlan(t, lg, "trend", smaHalf, spec.Series)
	if p := plan(); p.Status != PlanOpen || p.Name != "trend" || strings.Join(p.Criteria, ", ") != "oos_sharpe>=1, trades>=5" || !strings.Contains(p.Note, "not judged yet") {
		t.Errorf("open plan: %+v", p)
	}
	judgePlan(t, lg, "trend", smaHalf, spec.Series, false)
	if p := plan(); p.Status != PlanFailed || len(p.Judgements) != 2 || !strings.Contains(p.Note, "oos_sharpe>=1 failed, trades>=5 passed") {
		t.Errorf("failed plan: %+v", p)
	}
	// Another text (one knob's default changed) is bound by no plan.
	spec.Source = strings.Replace(smaHalf, `"fast", 5`, `"fast", 6`, 1)
	if p := plan(); p.Status != PlanNone {
		t.Errorf("a changed text: %+v", p)
	}
	g.plans = nil
	g.restart()
	if d, err := g.r.Check(ctxT(t), spec); err != nil || d.Preview.Plan != nil {
		t.Errorf("a runner without the ledger: %+v %v", d.Preview, err)
	}
}

// TestAutoOnRealVenueNeedsPassedPlan: an auto deployment on a real venue
// (the fake of Binance's API) whose strategy has no passed plan is not
// armed by the operator's plain arming, which names the override; the
// operator's signed override arms it and says so on the deployment; once
// a plan of its text passes, plain arming does, and the override is
// refused as needless.
func TestAutoOnRealVenueNeedsPassedPlan(t *testing.T) {
	rv := binanceVenue(t)
	h := NewHandler()
	ns := venuerig.Start(t, []venuerig.Venue{rv.venue}, nodetest.WithVenueTimeout(500*time.Millisecond), nodetest.WithDeployments(h))
	cfg, c := ns.Config, ns.Client()
	lg := openLedger(t)
	r, err := New(ctxT(t), Config{Project: cfg, Store: openStore(t, t.TempDir()), Node: c, Strategies: newPool(t), Plans: ledgerPlans{lg},
		OperatorKey: ns.OperatorKey.Public().(ed25519.PublicKey)})
	if err != nil {
		t.Fatal(err)
	}
	h.Attach(r)
	if _, err := c.Arm(context.Background(), rv.name, time.Hour, rv.name, ns.OperatorKey); err != nil {
		t.Fatal(err)
	}
	spec := Spec{Strategy: "flip.star", Source: flip, Series: rv.series, Venue: rv.name, Mode: ModeAuto, Capital: decimal.NewFromInt(1000), Warmup: 10}
	d, err := r.Create(ctxT(t), spec)
	if err != nil {
		t.Fatal(err)
	}
	sign := func(act string) node.ArmRequest {
		t.Helper()
		ch, err := r.Challenge(act, d.ID)
		if err != nil {
			t.Fatal(err)
		}
		req := node.ArmRequest{For: "1h", Confirm: d.ID, Challenge: ch}
		req.Signature = node.SignOperator(ns.OperatorKey, Statement(act, d.ID, req))
		return req
	}
	_, err = r.Arm(d.ID, sign(ActArm))
	wantErr(t, err, "without a passed research plan", "plan: none", "wicket node arm "+d.ID+" --without-plan")
	if got, _ := r.get(d.ID); !got.d.ArmedUntil.IsZero() {
		t.Fatal("armed after the refusal")
	}
	// A plain arming's signature does not stand for the override.
	_, err = r.ArmWithoutPlan(d.ID, sign(ActArm))
	wantErr(t, err, "not signed by this node's operator key")
	// The override over the node's HTTP, as wicket node arm --without-plan
	// sends it.
	var ch Challenge
	if err := c.DeploymentsGet(ctxT(t), "/"+d.ID+"/challenge", url.Values{"act": {ActArmWithoutPlan}}, &ch); err != nil {
		t.Fatal(err)
	}
	req := node.ArmRequest{For: "1h", Confirm: d.ID, Challenge: ch.Challenge}
	req.Signature = node.SignOperator(ns.OperatorKey, Statement(ActArmWithoutPlan, d.ID, req))
	var armed Deployment
	if err := c.DeploymentsPost(ctxT(t), "/"+d.ID+"/"+ActArmWithoutPlan, req, &armed); err != nil {
		t.Fatal(err)
	}
	if armed.ArmedUntil.IsZero() || !strings.Contains(armed.PlanOverride, "signed override without a passed research plan (plan: none)") {
		t.Fatalf("override: %+v", armed)
	}
	// An open plan is not a passed one; a passed one arms plainly.
	sealPlan(t, lg, "flip-plan", flip, rv.series)
	_, err = r.Arm(d.ID, sign(ActArm))
	wantErr(t, err, "plan: open")
	judgePlan(t, lg, "flip-plan", flip, rv.series, true)
	armed, err = r.Arm(d.ID, sign(ActArm))
	if err != nil {
		t.Fatal(err)
	}
	if armed.PlanOverride != "" {
		t.Errorf("plain arming under a passed plan keeps the override note %q", armed.PlanOverride)
	}
	_, err = r.ArmWithoutPlan(d.ID, sign(ActArmWithoutPlan))
	wantErr(t, err, "plan flip-plan passed", "without the override")
}
