package research

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/strategy/ledger"
	"wicket/strategy/optimize"
)

// optGrid is a 10 × 9 grid over the sma_cross template.
func optGrid() Grid {
	return Grid{"fast": {From: fp(2), To: fp(20), Step: fp(2)}, "slow": {From: fp(30), To: fp(110), Step: fp(10)}}
}

func optRequest(t *testing.T, trials int) OptimizeRequest {
	seed := uint64(7)
	return OptimizeRequest{StrategyRef: templateRef(t, "sma_cross"), Series: "ETH-USD@1d", Grid: optGrid(), Method: "tpe",
		Trials: trials, Seed: &seed, Batch: 4, From: "2019-01-01"}
}

// runParams is the knob values of a run's rows, in ledger order.
func runParams(t *testing.T, lg *ledger.Ledger, runID string) []string {
	t.Helper()
	rows, total, err := lg.Query(context.Background(), ledger.Filter{RunID: runID})
	if err != nil {
		t.Fatal(err)
	}
	if total != len(rows) {
		t.Fatalf("query returned %d of %d rows", len(rows), total)
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		var v map[string]any
		if err := json.Unmarshal(r.Params, &v); err != nil {
			t.Fatal(err)
		}
		out[i] = fmtParams(v)
	}
	return out
}

func distinct(t *testing.T, params []string) {
	t.Helper()
	seen := map[string]bool{}
	for _, p := range params {
		if seen[p] {
			t.Fatalf("the trial %s was run twice: %v", p, params)
		}
		seen[p] = true
	}
}

// TestOptimizeRecordsEveryTrial: every trial of an optimisation is a
// ledger row of one run, none repeated; N of the deflated Sharpe ratio
// is the run's count and, over the ledger, the ledger's count on the
// series; the Pareto front is the non-dominated trials.
func TestOptimizeRecordsEveryTrial(t *testing.T) {
	l, lg := ledgerLocal(t)
	ctx := ledger.WithWho(ctxT(t), ledger.Who{Surface: ledger.SurfaceCLI})
	earlier := []ledger.Row{{Kind: ledger.KindBacktest, Strategy: "other", Series: "ETH-USD@1d", SharpePerPeriod: 0.01}}
	if _, err := lg.Append(context.Background(), earlier); err != nil {
		t.Fatal(err)
	}
	var seen []Progress
	res, err := l.Optimize(ctx, optRequest(t, 18), func(p Progress) { seen = append(seen, p) })
	if err != nil {
		t.Fatal(err)
	}
	if res.Evaluated != 18 || res.Batches != 5 || res.Combinations != 90 || res.Method != "tpe" || res.Seed != 7 {
		t.Fatalf("evaluated %d in %d batches of %d combinations, method %s seed %d", res.Evaluated, res.Batches, res.Combinations, res.Method, res.Seed)
	}
	if !strings.Contains(res.Stopped, "budget of 18 trials") {
		t.Errorf("stopped: %q", res.Stopped)
	}
	params := runParams(t, lg, res.RunID)
	if len(params) != 18 {
		t.Fatalf("the ledger holds %d rows of run %s, want 18", len(params), res.RunID)
	}
	distinct(t, params)
	if res.DeflatedSharpe == nil || res.DeflatedSharpe.Trials != 18 {
		t.Fatalf("deflated sharpe over the run: %+v", res.DeflatedSharpe)
	}
	set, err := lg.Trials(context.Background(), ledger.TrialQuery{Series: "ETH-USD@1d"})
	if err != nil {
		t.Fatal(err)
	}
	if d := res.LedgerDeflatedSharpe; d == nil || d.Trials != set.N() || set.N() != 19 {
		t.Fatalf("deflated sharpe over the ledger: %+v, the ledger counts %d", d, set.N())
	}
	if res.Overfitting == nil || res.Overfitting.Combinations == 0 {
		t.Errorf("overfitting of the evaluated set: %+v", res.Overfitting)
	}
	if !strings.HasPrefix(res.LookaheadCheck, "passed") {
		t.Errorf("lookahead check %q", res.LookaheadCheck)
	}
	if len(res.Pareto) == 0 || len(res.Top) != DefaultTop {
		t.Fatalf("pareto %d, top %d", len(res.Pareto), len(res.Top))
	}
	score := func(tr Trial) optimize.Score {
		m := readScores(t, tr.Metrics)
		return m
	}
	for _, p := range res.Pareto {
		for _, q := range res.Top {
			if score(q).Dominates(score(p)) {
				t.Errorf("pareto trial %v is dominated by %v", p.Params, q.Params)
			}
		}
	}
	// The export marks the reported winner, as a sweep's, for an audit.
	x, err := Export(context.Background(), lg, res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	var winners []string
	for _, tr := range x.Trials {
		if tr.Winner {
			var v map[string]any
			json.Unmarshal(tr.Params, &v)
			winners = append(winners, fmtParams(v))
		}
	}
	if len(winners) != 1 || winners[0] != fmtParams(res.Top[0].Params) {
		t.Errorf("the export marks %v the winner; the run reported %s", winners, fmtParams(res.Top[0].Params))
	}
	if len(seen) < 6 || seen[0].Done != 0 || seen[len(seen)-1].Done != 18 || seen[0].Total != 18 {
		t.Errorf("progress %+v", seen)
	}
}

func readScores(t *testing.T, raw json.RawMessage) optimize.Score {
	var m struct {
		Sharpe      *float64 `json:"sharpe"`
		MaxDrawdown *float64 `json:"max_drawdown"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	s := optimize.Score{Sharpe: math.NaN(), MaxDrawdown: math.NaN()}
	if m.Sharpe != nil {
		s.Sharpe = *m.Sharpe
	}
	if m.MaxDrawdown != nil {
		s.MaxDrawdown = *m.MaxDrawdown
	}
	return s
}

// TestOptimizeResumeIsTheUninterruptedRun: a run stopped after some
// batches and resumed from the ledger tries exactly the trials the
// uninterrupted run tries, in the same order.
func TestOptimizeResumeIsTheUninterruptedRun(t *testing.T) {
	for _, method := range optimize.Methods {
		t.Run(method, func(t *testing.T) {
			l, lg := ledgerLocal(t)
			whole := optRequest(t, 16)
			whole.Method = method
			a, err := l.Optimize(ctxT(t), whole, nil)
			if err != nil {
				t.Fatal(err)
			}
			first := whole
			first.Trials = 8
			b, err := l.Optimize(ctxT(t), first, nil)
			if err != nil {
				t.Fatal(err)
			}
			resume := whole
			resume.Method, resume.Seed, resume.Resume = "", nil, b.RunID
			c, err := l.Optimize(ctxT(t), resume, nil)
			if err != nil {
				t.Fatal(err)
			}
			if c.RunID != b.RunID || c.Resumed != 8 || c.Evaluated != 16 || c.Method != method || c.Seed != 7 {
				t.Fatalf("resumed run %s: resumed %d, evaluated %d, method %s seed %d", c.RunID, c.Resumed, c.Evaluated, c.Method, c.Seed)
			}
			want, got := runParams(t, lg, a.RunID), runParams(t, lg, b.RunID)
			if strings.Join(got, "; ") != strings.Join(want, "; ") {
				t.Errorf("resumed run's trials\n%v\nwant the uninterrupted run's\n%v", got, want)
			}
		})
	}
}

// TestOptimizeResumeAfterACancelMidBatch: an optimisation cancelled mid
// batch records what finished; resumed, it repeats none of the trials
// and loses none, and ends at the budget.
func TestOptimizeResumeAfterACancelMidBatch(t *testing.T) {
	l, lg := ledgerLocal(t)
	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()
	req := optRequest(t, 20)
	req.Batch = 8
	part, err := l.Optimize(ctx, req, func(p Progress) {
		if p.Done >= 10 {
			cancel()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if !part.Partial || part.Evaluated < 10 || part.Evaluated >= 20 {
		t.Fatalf("partial %v after %d trials", part.Partial, part.Evaluated)
	}
	recorded := runParams(t, lg, part.RunID)
	if len(recorded) != part.Evaluated {
		t.Fatalf("the ledger holds %d trials of the cancelled run, which reported %d", len(recorded), part.Evaluated)
	}
	req.Resume = part.RunID
	res, err := l.Optimize(ctxT(t), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	all := runParams(t, lg, part.RunID)
	if res.Evaluated != 20 || len(all) != 20 || res.Resumed != len(recorded) || res.DeflatedSharpe.Trials != 20 {
		t.Fatalf("resumed: evaluated %d, resumed %d, ledger %d, N %d", res.Evaluated, res.Resumed, len(all), res.DeflatedSharpe.Trials)
	}
	distinct(t, all)
	if strings.Join(all[:len(recorded)], ";") != strings.Join(recorded, ";") {
		t.Errorf("the resumed run changed the recorded trials")
	}
}

// TestOptimizeExhaustsASmallGrid: a budget above the grid's size tries
// every combination once and stops.
func TestOptimizeExhaustsASmallGrid(t *testing.T) {
	l, lg := ledgerLocal(t)
	for _, m := range optimize.Methods {
		req := optRequest(t, 40)
		req.Grid, req.Method = smaGrid(), m
		res, err := l.Optimize(ctxT(t), req, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Evaluated != 18 || !strings.Contains(res.Stopped, "every one of the grid's 18") {
			t.Fatalf("%s: evaluated %d, stopped %q", m, res.Evaluated, res.Stopped)
		}
		distinct(t, runParams(t, lg, res.RunID))
	}
}

// TestOptimizeRefusals: bad requests are refused before any trial, with
// what to do.
func TestOptimizeRefusals(t *testing.T) {
	l, lg := ledgerLocal(t)
	sweep, err := l.Sweep(ctxT(t), SweepRequest{StrategyRef: templateRef(t, "sma_cross"), Series: "ETH-USD@1d", Grid: smaGrid()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	done, err := l.Optimize(ctxT(t), optRequest(t, 4), nil)
	if err != nil {
		t.Fatal(err)
	}
	before, _, _ := lg.Query(context.Background(), ledger.Filter{})
	cases := []struct {
		edit func(*OptimizeRequest)
		want string
	}{
		{func(r *OptimizeRequest) { r.Method = "anneal" }, `method "anneal" is not one of random, tpe, cmaes`},
		{func(r *OptimizeRequest) { r.Trials = 1_000_000 }, "above this project's cap"},
		{func(r *OptimizeRequest) { r.Batch = -1 }, "batch -1 must be 1 to 256"},
		{func(r *OptimizeRequest) { r.Series = "*@1d" }, "optimize runs over one series"},
		{func(r *OptimizeRequest) { r.Grid = Grid{"nope": {Values: []any{1.0}}} }, `unknown knob "nope"`},
		{func(r *OptimizeRequest) { r.Resume = "no-such-run" }, `holds no run "no-such-run"`},
		{func(r *OptimizeRequest) { r.Resume = sweep.RunID }, "not an optimisation"},
		{func(r *OptimizeRequest) { r.Resume = done.RunID; r.Grid = smaGrid() }, "resume it with the same grid"},
		{func(r *OptimizeRequest) { r.Resume = done.RunID; r.Method = "random" }, "used method tpe"},
		{func(r *OptimizeRequest) { r.Resume = done.RunID; s := uint64(8); r.Seed = &s }, "used seed 7"},
	}
	for _, c := range cases {
		req := optRequest(t, 8)
		c.edit(&req)
		_, err := l.Optimize(ctxT(t), req, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
	after, _, _ := lg.Query(context.Background(), ledger.Filter{})
	if len(after) != len(before) {
		t.Errorf("refused requests wrote %d rows", len(after)-len(before))
	}
}

// TestOptimizeTimeBudget: with a time budget, no batch is asked for once
// it has passed (on the injected clock, which moves a second a reading).
func TestOptimizeTimeBudget(t *testing.T) {
	clock := testkit.NewSteppingClock(time.Unix(0, 0), time.Second)
	l := NewLocal(Config{ProofSeed: fixedSeed, Project: demoProject(t), Research: project.Defaults().Research, Pool: newPool(t, 2), Now: clock.Now})
	req := optRequest(t, 50)
	req.Seconds = 2.5
	res, err := l.Optimize(ctxT(t), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Batches != 2 || res.Evaluated != 8 || !strings.Contains(res.Stopped, "time budget of 2.5 s") {
		t.Fatalf("%d batches, %d trials, stopped %q", res.Batches, res.Evaluated, res.Stopped)
	}
}

// TestOptimizeOverHTTPMatchesLocal: the data service runs an
// optimisation as the in-process engine does, progress included.
func TestOptimizeOverHTTPMatchesLocal(t *testing.T) {
	local := newLocal(t, 2)
	client := serve(t, local, ServerOptions{}, ClientOptions{})
	var outs []outcome
	for _, svc := range []Service{local, client} {
		var ps []Progress
		res, err := svc.Optimize(ctxT(t), optRequest(t, 8), func(p Progress) { ps = append(ps, p) })
		outs = append(outs, outcomeOf(t, res, err, ps))
	}
	if diff := cmp.Diff(outs[0], outs[1]); diff != "" {
		t.Errorf("in-process and HTTP differ (-local +http):\n%s", diff)
	}
	if outs[0].Kind != "" || !strings.Contains(outs[0].JSON, `"evaluated":8`) {
		t.Errorf("optimisation: %s %s", outs[0].Kind, outs[0].Msg)
	}
}

// TestParetoLeavesOutNeverTraded (issue 45 item 7): a trial that never
// traded has no drawdown and stood on the Pareto front as the best on
// drawdown; the front now holds only trials that traded, and the answer
// says how many were left out.
func TestParetoLeavesOutNeverTraded(t *testing.T) {
	l := newLocal(t, 1)
	src := "k = param.float('k', 0.0, min=0.0, max=2.0)\ndef signals(bars):\n    m = ta.sma(bars.close, 20)\n    return {'long': bars.close > m * (1 + k), 'exit': bars.close < m}\n"
	seed := uint64(3)
	res, err := l.Optimize(ctxT(t), OptimizeRequest{StrategyRef: StrategyRef{Source: src, Label: "gate.star"}, Series: "ETH-USD@1d", From: "2019-01-01",
		Grid: Grid{"k": {Values: []any{0.0, 0.01, 0.02, 0.05, 1.0, 1.5, 2.0}}}, Method: "random", Trials: 7, Seed: &seed, Batch: 7}, nil)
	if err != nil {
		t.Fatal(err)
	}
	never := 0
	for _, tr := range res.Top {
		var m struct {
			Trades   int     `json:"trades"`
			Exposure float64 `json:"exposure"`
		}
		if err := json.Unmarshal(tr.Metrics, &m); err != nil {
			t.Fatal(err)
		}
		if m.Trades == 0 && m.Exposure == 0 {
			never++
		}
	}
	if never == 0 {
		t.Fatalf("no trial of the fixture never traded: %+v", res.Top)
	}
	for _, p := range res.Pareto {
		var m struct {
			Trades   int     `json:"trades"`
			Exposure float64 `json:"exposure"`
		}
		if err := json.Unmarshal(p.Metrics, &m); err != nil {
			t.Fatal(err)
		}
		if m.Trades == 0 && m.Exposure == 0 {
			t.Errorf("a trial that never traded (%v) is on the Pareto front", p.Params)
		}
	}
	if len(res.Pareto) == 0 || !strings.Contains(strings.Join(res.Warnings, "\n"), fmt.Sprintf("%d of 7 ranked trials never traded", never)) {
		t.Errorf("pareto %d, warnings %q", len(res.Pareto), res.Warnings)
	}
}
