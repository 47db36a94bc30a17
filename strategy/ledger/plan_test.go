package ledger

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

func sealed(t *testing.T, l *Ledger, name, digest string, budget int) Row {
	t.Helper()
	r := Row{Strategy: "sma_cross", Digest: digest, Series: "BTC-USD@1h", SharpePerPeriod: math.NaN()}
	spec := PlanSpec{Name: name, Hypothesis: "h", Criteria: []Criterion{{Metric: "dsr", Op: ">=", Value: 0.95}}, MaxTrials: budget, HoldoutFrom: "2024-07-01T00:00:00Z"}
	if err := l.SealPlan(context.Background(), spec, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestPlanRowsCountAndJudgeOnce: a plan counts the counted trials of its
// digest after it and before its verdict, under any name; names and open
// plans are unique; a verdict is given once.
func TestPlanRowsCountAndJudgeOnce(t *testing.T) {
	ctx := context.Background()
	l := openTest(t, filepath.Join(t.TempDir(), "research.db"))
	before := row("sma_cross", 0.1, "s") // before the plan: not its
	if _, err := l.Append(ctx, []Row{before}); err != nil {
		t.Fatal(err)
	}
	d := SourceDigest("sma_cross")
	p := sealed(t, l, "p1", d, 10)
	if p.Kind != KindPlan || p.Seq != 2 || p.From != "2024-07-01T00:00:00Z" {
		t.Fatalf("plan row %+v", p)
	}
	renamed := row("sma_cross", 0.2, "s")
	renamed.Strategy = "copy"
	wf := row("sma_cross", 0.3, "s")
	wf.Kind = KindWalkForward // a summary, not a trial
	if _, err := l.Append(ctx, []Row{row("sma_cross", 0.1, "s"), renamed, wf, row("other", 0.1, "s")}); err != nil {
		t.Fatal(err)
	}
	got, err := l.Plan(ctx, "p1")
	if err != nil || got.Trials != 2 || !got.Open() || got.Spec.MaxTrials != 10 {
		t.Fatalf("plan %+v %v", got, err)
	}
	if err := l.SealPlan(ctx, PlanSpec{Name: "p1"}, &Row{Strategy: "x", Digest: "y", Series: "s"}); !errors.Is(err, ErrPlanExists) {
		t.Fatalf("a second p1: %v", err)
	}
	err = l.SealPlan(ctx, PlanSpec{Name: "p2"}, &Row{Strategy: "renamed", Digest: d, Series: "s"})
	if !errors.Is(err, ErrPlanOpen) || !strings.Contains(err.Error(), `"p1"`) {
		t.Fatalf("a second open plan of the digest: %v", err)
	}
	if _, err := l.Plan(ctx, "nope"); !errors.Is(err, ErrNoPlan) {
		t.Fatal(err)
	}
	v := Row{Strategy: "sma_cross", Digest: d, Series: "BTC-USD@1h", Metrics: []byte(`{"passed":false}`), SharpePerPeriod: math.NaN()}
	if err := l.AppendVerdict(ctx, "p1", &v); err != nil || v.Seq != 7 {
		t.Fatalf("verdict %+v %v", v, err)
	}
	if err := l.AppendVerdict(ctx, "p1", &Row{Strategy: "sma_cross", Digest: d, Series: "s"}); !errors.Is(err, ErrVerdictGiven) {
		t.Fatalf("a second verdict: %v", err)
	}
	if _, err := l.Append(ctx, []Row{row("sma_cross", 0.1, "s")}); err != nil {
		t.Fatal(err)
	}
	got, _ = l.Plan(ctx, "p1")
	if got.Trials != 2 || got.Open() || got.Verdict.Seq != 7 {
		t.Fatalf("judged plan %+v", got)
	}
	if open, err := l.OpenPlanOf(ctx, d); open != nil || err != nil {
		t.Fatalf("open plan after the verdict: %+v %v", open, err)
	}
	last, err := l.PlanOfDigest(ctx, d)
	if err != nil || last == nil || last.Spec.Name != "p1" || last.Verdict == nil {
		t.Fatalf("PlanOfDigest %+v %v", last, err)
	}
	if rep, err := l.Verify(ctx); err != nil || !rep.OK() {
		t.Fatalf("verify %+v %v", rep, err)
	}
}

// TestForgedPlanIsCaught: a plan row edited after the fact (a bigger
// budget, a later holdout) or one slipped in without the key breaks the
// chain where it stands.
func TestForgedPlanIsCaught(t *testing.T) {
	for name, forge := range map[string]func(db *sql.DB){
		"budget raised": func(db *sql.DB) {
			run(t, db, `UPDATE trials SET params = replace(params, '"max_trials":10', '"max_trials":1000') WHERE kind = 'plan'`)
		},
		"holdout moved": func(db *sql.DB) {
			run(t, db, `UPDATE trials SET range_from = '2025-01-01T00:00:00Z' WHERE kind = 'plan'`)
		},
		"plan inserted": func(db *sql.DB) {
			run(t, db, `INSERT INTO trials(seq, time, kind, run_id, surface, session, caller, strategy, digest, series, range_from, range_to,
				params, costs, metrics, sharpe, prev_hash, hash) SELECT 4, time, 'plan', 'plan:late', surface, session, caller, strategy, digest, series,
				range_from, range_to, params, costs, metrics, sharpe, hash, hash FROM trials WHERE seq = 3`)
		},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "research.db")
			l := openTest(t, path)
			if _, err := l.Append(ctx, []Row{row("sma_cross", 0.1, "s")}); err != nil {
				t.Fatal(err)
			}
			sealed(t, l, "p1", SourceDigest("sma_cross"), 10)
			if _, err := l.Append(ctx, []Row{row("sma_cross", 0.1, "s")}); err != nil {
				t.Fatal(err)
			}
			if rep, err := l.Verify(ctx); err != nil || !rep.OK() {
				t.Fatalf("before: %+v %v", rep, err)
			}
			tamper(t, path, forge)
			rep, err := l.Verify(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if rep.OK() {
				t.Fatalf("the forged plan passed verify: %+v", rep)
			}
			t.Logf("caught: %+v", *rep.Bad)
		})
	}
}
