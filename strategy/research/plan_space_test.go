package research

import (
	"encoding/json"
	"strings"
	"testing"

	"wicket/strategy/ledger"
)

func TestPlanSpaceHolds(t *testing.T) {
	space, _ := json.Marshal(smaGrid()) // fast [5, 10, 20], slow 30..90 step 30, size [0.5, 1]
	g := &planGate{plan: &ledger.Plan{Spec: ledger.PlanSpec{Name: "p", Grid: space}}}
	for _, tc := range []struct {
		name   string
		grid   Grid
		params map[string]any
		refuse []string // empty: admitted
	}{
		{"the plan's own grid", smaGrid(), nil, nil},
		{"a narrower list, as the command line writes it", Grid{"fast": {Values: []any{"5", "20"}}, "slow": {Values: []any{"60"}}}, nil, nil},
		{"a sub-range on the plan's steps", Grid{"slow": {From: fp(60), To: fp(90), Step: fp(30)}}, map[string]any{"fast": 10.0}, nil},
		{"a value outside a list", Grid{"fast": {Values: []any{5.0, 7.0}}}, nil, []string{"knob fast=7 is outside plan \"p\"'s grid for it ([5, 10, 20])"}},
		{"a range past the plan's end", Grid{"slow": {From: fp(30), To: fp(120), Step: fp(30)}}, nil, []string{"knob slow=120", "(30..90 step 30)"}},
		{"a value between the plan's steps", Grid{"slow": {Values: []any{45.0}}}, nil, []string{"knob slow=45", "30..90 step 30"}},
		{"a knob the plan does not search", Grid{"stop": {Values: []any{0.02}}}, nil, []string{"plan \"p\"'s grid has no knob stop (its knobs: fast, size, slow)"}},
		{"a fixed value outside", Grid{"fast": {Values: []any{5.0}}}, map[string]any{"size": 2.0}, []string{"knob size=2 (fixed) is outside", "[0.5, 1]"}},
		{"a fixed knob outside the grid", Grid{"fast": {Values: []any{5.0}}}, map[string]any{"stop": 0.02}, nil},
		{"a range without a step against a list", Grid{"fast": {From: fp(5), To: fp(20)}}, nil, []string{"knob fast's range 5..20 under plan \"p\" gives no step", "([5, 10, 20])"}},
		{"a range without a step against a stepped range", Grid{"slow": {From: fp(30), To: fp(90)}}, nil, []string{"gives no step", "(30..90 step 30)"}},
	} {
		err := g.inSpace(tc.grid, tc.params)
		if len(tc.refuse) == 0 {
			if err != nil {
				t.Errorf("%s: refused: %v", tc.name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: admitted", tc.name)
			continue
		}
		for _, w := range tc.refuse {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not say %q", tc.name, err, w)
			}
		}
	}
	// An unstepped plan range admits an unstepped range within it.
	cont, _ := json.Marshal(Grid{"x": {From: fp(1), To: fp(10)}})
	gc := &planGate{plan: &ledger.Plan{Spec: ledger.PlanSpec{Name: "c", Grid: cont}}}
	if err := gc.inSpace(Grid{"x": {From: fp(2), To: fp(5)}}, nil); err != nil {
		t.Errorf("an unstepped range within: %v", err)
	}
	if err := gc.inSpace(Grid{"x": {From: fp(2), To: fp(12)}}, nil); err == nil || !strings.Contains(err.Error(), "knob x=12") {
		t.Errorf("an unstepped range past the end: %v", err)
	}
	// A plan without a grid binds no space; no plan, nothing.
	if err := (&planGate{plan: &ledger.Plan{}}).inSpace(Grid{"x": {Values: []any{1.0}}}, nil); err != nil {
		t.Error(err)
	}
	if err := (&planGate{}).inSpace(Grid{"x": {Values: []any{1.0}}}, nil); err != nil {
		t.Error(err)
	}
}

// TestPlanSpaceEnforced: a sweep, optimisation or walk-forward under a
// plan that tries a value outside the plan's grid is refused before any
// trial, naming the knob and the plan's range, and counts nothing.
func TestPlanSpaceEnforced(t *testing.T) {
	l, lg := ledgerLocal(t)
	ctx := ctxT(t)
	sealTest(t, l, "space", 100)
	out := Grid{"fast": {Values: []any{5.0}}, "slow": {From: fp(30), To: fp(150), Step: fp(30)}}
	ref := StrategyRef{Name: "mine"}
	_, err := l.Sweep(ctx, SweepRequest{StrategyRef: ref, Series: "ETH-USD@1d", Grid: out, To: "2022-06-30", Plan: "space"}, nil)
	wantRefused(t, err, "knob slow=120 is outside plan \"space\"'s grid for it (30..90 step 30)")
	_, err = l.Optimize(ctx, OptimizeRequest{StrategyRef: ref, Series: "ETH-USD@1d", Grid: out, To: "2022-06-30", Trials: 4}, nil) // under the plan unnamed
	wantRefused(t, err, "knob slow=120", "plan \"space\"")
	_, err = l.WalkForward(ctx, WalkForwardRequest{StrategyRef: ref, Series: "ETH-USD@1d", Grid: Grid{"fast": {Values: []any{5.0, 50.0}}}, To: "2022-06-30", Plan: "space"}, nil)
	wantRefused(t, err, "knob fast=50", "[5, 10, 20]")
	p, err := lg.Plan(ctx, "space")
	if err != nil || p.Trials != 0 {
		t.Fatalf("the refused runs counted: %+v %v", p.Trials, err)
	}
	// Within the space it runs.
	if _, err := l.Sweep(ctx, SweepRequest{StrategyRef: ref, Series: "ETH-USD@1d", Grid: Grid{"fast": {Values: []any{"5", "10"}}, "slow": {Values: []any{"60"}}}, To: "2022-06-30", Plan: "space"}, nil); err != nil {
		t.Fatal(err)
	}
}

// TestCPCVUnderPlan: a CPCV of a planned strategy's text is the plan's
// like a sweep: a range into the holdout, a value outside the grid or a
// grid past the budget is refused before any trial, and one within all
// three runs, counted, with the plan named in its warnings.
func TestCPCVUnderPlan(t *testing.T) {
	l, lg := ledgerLocal(t)
	ctx := ctxT(t)
	sealTest(t, l, "cv", 10)
	ref := StrategyRef{Name: "mine"}
	_, err := l.CPCV(ctx, CPCVRequest{StrategyRef: ref, Series: "ETH-USD@1d", Grid: Grid{"fast": {Values: []any{5.0, 10.0}}}, Groups: 4, Test: 2, To: "2023-06-30"}, nil)
	wantRefused(t, err, "holdout")
	_, err = l.CPCV(ctx, CPCVRequest{StrategyRef: ref, Series: "ETH-USD@1d", Grid: Grid{"fast": {Values: []any{5.0, 7.0}}}, Groups: 4, Test: 2}, nil)
	wantRefused(t, err, "knob fast=7 is outside plan \"cv\"'s grid")
	_, err = l.CPCV(ctx, CPCVRequest{StrategyRef: ref, Series: "ETH-USD@1d", Grid: smaGrid(), Groups: 4, Test: 2}, nil)
	wantRefused(t, err, "budget is 10 trials", "these 18")
	res, err := l.CPCV(ctx, CPCVRequest{StrategyRef: ref, Series: "ETH-USD@1d", Grid: Grid{"fast": {Values: []any{5.0, 10.0, 20.0}}}, Groups: 4, Test: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(res.Warnings, "\n"), "before plan \"cv\"'s holdout") {
		t.Errorf("warnings %q", res.Warnings)
	}
	p, err := lg.Plan(ctx, "cv")
	if err != nil || p.Trials != 3 {
		t.Fatalf("plan trials %d %v, want 3", p.Trials, err)
	}
}
