package research

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/strategy/ta"
	"wicket/strategy/worker"
)

func fp(x float64) *float64 { return &x }

// smaGrid is a small grid over the sma_cross template: 3 × 3 × 2.
func smaGrid() Grid {
	return Grid{
		"fast": {Values: []any{5.0, 10.0, 20.0}},
		"slow": {From: fp(30), To: fp(90), Step: fp(30)},
		"size": {Values: []any{0.5, 1.0}},
	}
}

func marshal(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSweepBestEqualsOneByOne: every combination backtested on its own
// reports the same metrics as the sweep, and the sweep's winner is the
// best of them.
func TestSweepBestEqualsOneByOne(t *testing.T) {
	l := newLocal(t, 2)
	ref := templateRef(t, "sma_cross")
	req := SweepRequest{StrategyRef: ref, Series: "ETH-USD@1d", Grid: smaGrid(), Top: MaxTop, From: "2018-01-01"}
	res, err := l.Sweep(ctxT(t), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Combinations != 18 || res.Evaluated != 18 || len(res.Top) != 18 || res.Partial {
		t.Fatalf("combinations %d, evaluated %d, top %d, partial %v", res.Combinations, res.Evaluated, len(res.Top), res.Partial)
	}
	bestSharpe, bestParams := math.Inf(-1), ""
	for _, tr := range res.Top {
		one, err := l.Backtest(ctxT(t), BacktestRequest{StrategyRef: ref, Series: req.Series, From: req.From, Params: tr.Params})
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			Metrics json.RawMessage
		}
		if err := json.Unmarshal(one.Result, &r); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(r.Metrics, tr.Metrics) {
			t.Errorf("%s: the sweep's metrics differ from a backtest's:\n%s\n%s", fmtParams(tr.Params), tr.Metrics, r.Metrics)
		}
		var m struct{ Sharpe float64 }
		json.Unmarshal(r.Metrics, &m)
		if m.Sharpe > bestSharpe {
			bestSharpe, bestParams = m.Sharpe, fmtParams(tr.Params)
		}
	}
	if got := fmtParams(res.Top[0].Params); got != bestParams {
		t.Errorf("the sweep's winner is %s, the best one-by-one backtest is %s", got, bestParams)
	}
	if res.Top[0].Score == nil || *res.Top[0].Score != bestSharpe {
		t.Errorf("winner's score %v, want %v", res.Top[0].Score, bestSharpe)
	}
	for i := 1; i < len(res.Top); i++ {
		if res.Top[i].Rank != i+1 || (res.Top[i].Score != nil && *res.Top[i].Score > *res.Top[i-1].Score) {
			t.Errorf("rank %d is out of order", i+1)
		}
	}
	if !strings.HasPrefix(res.LookaheadCheck, "passed (") {
		t.Errorf("lookahead_check %q: the winner is checked", res.LookaheadCheck)
	}
	if res.DeflatedSharpe == nil || res.DeflatedSharpe.Trials != 18 || res.DeflatedSharpe.DSR == nil {
		t.Errorf("deflated sharpe %+v", res.DeflatedSharpe)
	}
}

// TestSweepWorkersAgree: one worker and two give byte-identical results.
func TestSweepWorkersAgree(t *testing.T) {
	req := SweepRequest{StrategyRef: templateRef(t, "rsi_reversion"), Series: "SOL-USD@1d", RankBy: RankCalmar,
		Grid: Grid{"period": {Values: []any{7.0, 14.0, 21.0}}, "oversold": {From: fp(20), To: fp(35), Step: fp(5)}}}
	var out [][]byte
	for _, n := range []int{1, 2} {
		res, err := newLocal(t, n).Sweep(ctxT(t), req, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Evaluated != 12 {
			t.Fatalf("%d workers evaluated %d of 12", n, res.Evaluated)
		}
		out = append(out, marshal(t, res))
	}
	if !bytes.Equal(out[0], out[1]) {
		t.Errorf("1 and 2 workers differ:\n%s\n%s", out[0], out[1])
	}
}

// computedCounter sums the indicator computations the workers report.
type computedCounter struct {
	mu sync.Mutex
	n  map[string]uint64
}

func (c *computedCounter) add(m map[string]uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]uint64{}
	}
	for k, v := range m {
		c.n[k] += v
	}
}

func (c *computedCounter) get(k string) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[k]
}

// TestSweepSharesIndicators: a knob that does not feed an indicator
// (size) never recomputes it, and each distinct SMA length is computed
// once across the whole sweep, as the worker's memo counts. The crosses
// go to the engine as flags, never as cached columns, so the memo
// computes none.
func TestSweepSharesIndicators(t *testing.T) {
	for _, tc := range []struct {
		name   string
		grid   Grid
		combos int
		sma    uint64 // distinct lengths
	}{
		{"size only", Grid{"fast": {Values: []any{5.0, 10.0}}, "size": {From: fp(0.25), To: fp(1), Step: fp(0.25)}}, 8, 3},
		{"100 combinations", Grid{"fast": {From: fp(2), To: fp(20), Step: fp(2)}, "slow": {From: fp(30), To: fp(120), Step: fp(10)}}, 100, 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c computedCounter
			l := NewLocal(Config{ProofSeed: fixedSeed, Project: demoProject(t), Pool: newPool(t, 1), Computed: c.add})
			res, err := l.Sweep(ctxT(t), SweepRequest{StrategyRef: templateRef(t, "sma_cross"), Series: "BTC-USD@1h", Grid: tc.grid}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Evaluated != tc.combos {
				t.Fatalf("evaluated %d, want %d", res.Evaluated, tc.combos)
			}
			// Without sharing every combination computes two SMAs.
			if got := c.get("sma"); got != tc.sma {
				t.Errorf("sma computed %d times for %d combinations, want %d (one per distinct length; %d without sharing)", got, tc.combos, tc.sma, 2*tc.combos)
			}
			if got := c.get("cross_above") + c.get("cross_below"); got != 0 {
				t.Errorf("cross columns computed %d times, want none (the engine takes flags)", got)
			}
			if testing.Verbose() {
				t.Logf("computed: %v", c.n)
			}
		})
	}
}

// TestSweepCancel: cancelling mid-sweep returns the combinations that
// finished, marked partial, without an error.
func TestSweepCancel(t *testing.T) {
	l := newLocal(t, 1)
	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()
	grid := Grid{"fast": {From: fp(2), To: fp(40), Step: fp(2)}, "slow": {From: fp(50), To: fp(240), Step: fp(10)}}
	var seen []Progress
	res, err := l.Sweep(ctx, SweepRequest{StrategyRef: templateRef(t, "sma_cross"), Series: "BTC-USD@1h", Grid: grid}, func(p Progress) {
		seen = append(seen, p)
		if p.Done > 0 {
			cancel()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Partial || !strings.Contains(res.PartialReason, "cancelled after") {
		t.Errorf("partial %v, reason %q", res.Partial, res.PartialReason)
	}
	if res.Evaluated == 0 || res.Evaluated >= res.Combinations || res.Combinations != 400 {
		t.Errorf("evaluated %d of %d", res.Evaluated, res.Combinations)
	}
	if res.LookaheadCheck != "not run: the sweep was cancelled" {
		t.Errorf("lookahead_check %q on a cancelled sweep", res.LookaheadCheck)
	}
	if len(res.Top) == 0 || res.DeflatedSharpe == nil || res.DeflatedSharpe.Trials > res.Evaluated {
		t.Errorf("a partial sweep still ranks what finished: top %d, dsr %+v", len(res.Top), res.DeflatedSharpe)
	}
	if len(seen) < 2 || seen[0].Done != 0 || seen[0].Total != 400 {
		t.Errorf("progress %+v", seen)
	}
	// The pool still works after the cancellation killed a worker.
	if _, err := l.Sweep(ctxT(t), SweepRequest{StrategyRef: templateRef(t, "sma_cross"), Series: "BTC-USD@1d", Grid: Grid{"fast": {Values: []any{5.0}}}}, nil); err != nil {
		t.Errorf("after a cancel: %v", err)
	}
}

// TestSweepRefusals: bad grids and requests are refused, with the knob
// and its range or the count named, before any combination runs.
func TestSweepRefusals(t *testing.T) {
	var c computedCounter
	cfg := project.Defaults().Research
	cfg.MaxCombinations = 1000
	l := NewLocal(Config{ProofSeed: fixedSeed, Project: demoProject(t), Research: cfg, Pool: newPool(t, 1), Computed: c.add})
	floatKnob := "\"\"\"A float knob without a step.\"\"\"\nx = param.float(\"x\", 0.5, min=0.0, max=1.0)\nflag = param.bool(\"flag\", True)\ndef signals(bars):\n    return {\"long\": bars.close > 0}\n"
	sma := templateRef(t, "sma_cross")
	for _, tc := range []struct {
		name string
		req  SweepRequest
		kind Kind
		want string
	}{
		{"unknown knob", SweepRequest{Grid: Grid{"speed": {Values: []any{1.0}}}}, KindInvalid, `unknown knob "speed"; this strategy's knobs are: fast, slow, size`},
		{"out of range", SweepRequest{Grid: Grid{"fast": {Values: []any{1.0, 5.0}}}}, KindInvalid, "knob fast: 1 is out of range; allowed: a whole number in [2, 200]"},
		{"range out of range", SweepRequest{Grid: Grid{"slow": {From: fp(100), To: fp(500), Step: fp(100)}}}, KindInvalid, "knob slow: 500 is out of range; allowed: a whole number in [3, 400]"},
		{"wrong type", SweepRequest{Grid: Grid{"fast": {Values: []any{"quick"}}}}, KindInvalid, `knob fast: "quick" is not a number`},
		{"fractional int", SweepRequest{Grid: Grid{"fast": {From: fp(2), To: fp(10), Step: fp(0.5)}}}, KindInvalid, "grid fast: fast is an int knob, so from, to and step must be whole numbers"},
		{"reversed", SweepRequest{Grid: Grid{"fast": {From: fp(20), To: fp(10)}}}, KindInvalid, "grid fast: from 20 is above to 10"},
		{"zero step", SweepRequest{Grid: Grid{"fast": {From: fp(2), To: fp(10), Step: fp(0)}}}, KindInvalid, "grid fast: step 0 must be positive"},
		{"duplicate", SweepRequest{Grid: Grid{"fast": {Values: []any{5.0, "5"}}}}, KindInvalid, "grid fast: the value 5 is listed twice"},
		{"empty list", SweepRequest{Grid: Grid{"fast": {Values: []any{}}}}, KindInvalid, "grid fast: the list is empty"},
		{"empty grid", SweepRequest{Grid: Grid{}}, KindInvalid, "grid is empty"},
		{"too many", SweepRequest{Grid: Grid{"fast": {From: fp(2), To: fp(200)}, "slow": {From: fp(3), To: fp(400)}}}, KindTooMany,
			"the grid has 79202 combinations (fast 199 × slow 398) and the cap is 1000 (research.max_combinations)"},
		{"lower cap", SweepRequest{MaxCombinations: 10, Grid: Grid{"fast": {From: fp(2), To: fp(20)}}}, KindTooMany, "the grid has 19 combinations (fast 19) and the cap is 10"},
		{"cap above project", SweepRequest{MaxCombinations: 5000, Grid: Grid{"fast": {Values: []any{5.0}}}}, KindInvalid, "max_combinations 5000 is above this project's cap of 1000"},
		{"grid and params", SweepRequest{Params: map[string]any{"fast": 5}, Grid: Grid{"fast": {Values: []any{5.0}}}}, KindInvalid, "knob fast is both in grid and in params"},
		{"bad fixed param", SweepRequest{Params: map[string]any{"size": 3}, Grid: Grid{"fast": {Values: []any{5.0}}}}, KindInvalid, "knob size: 3 is out of range"},
		{"rank by", SweepRequest{RankBy: "luck", Grid: Grid{"fast": {Values: []any{5.0}}}}, KindInvalid, `rank_by "luck" is not one of sharpe, cagr, calmar, profit_factor, total_return, max_drawdown`},
		{"top", SweepRequest{Top: -1, Grid: Grid{"fast": {Values: []any{5.0}}}}, KindInvalid, "top -1 must be positive"},
		{"unknown series", SweepRequest{Series: "DOGE-USD@1d", Grid: Grid{"fast": {Values: []any{5.0}}}}, KindNotFound, "series DOGE-USD@1d: no such series"},
		{"bad series", SweepRequest{Series: "../etc@1d", Grid: Grid{"fast": {Values: []any{5.0}}}}, KindInvalid, "invalid series name"},
		{"empty range", SweepRequest{From: "2030-01-01", Grid: Grid{"fast": {Values: []any{5.0}}}}, KindInvalid, "no bars between"},
		{"capital", SweepRequest{Costs: Costs{Capital: "-1"}, Grid: Grid{"fast": {Values: []any{5.0}}}}, KindInvalid, `capital "-1" must be a positive decimal amount`},
		{"both refs", SweepRequest{StrategyRef: StrategyRef{Name: "mine", Source: "x"}, Grid: Grid{"fast": {Values: []any{5.0}}}}, KindInvalid, "give a strategy's name or its source, not both"},
		{"no strategy", SweepRequest{StrategyRef: StrategyRef{Name: "nope"}, Grid: Grid{"fast": {Values: []any{5.0}}}}, KindNotFound, `no strategy "nope": strategies/nope.star does not exist`},
		{"broken strategy", SweepRequest{StrategyRef: StrategyRef{Name: "broken"}, Grid: Grid{"fast": {Values: []any{5.0}}}}, KindStrategy, "broken.star:2:"},
		{"float without step", SweepRequest{StrategyRef: StrategyRef{Source: floatKnob}, Grid: Grid{"x": {From: fp(0), To: fp(1)}}}, KindInvalid, "grid x: give the range a step; the float knob x declares none"},
		{"bool range", SweepRequest{StrategyRef: StrategyRef{Source: floatKnob}, Grid: Grid{"flag": {From: fp(0), To: fp(1)}}}, KindInvalid, "a {from, to, step} range needs an int or float knob, and flag is a bool knob"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := tc.req
			if req.StrategyRef == (StrategyRef{}) {
				req.StrategyRef = sma
			}
			if req.Series == "" {
				req.Series = "BTC-USD@1d"
			}
			_, err := l.Sweep(ctxT(t), req, func(Progress) { t.Error("progress before the request was accepted") })
			var re *Error
			if !errors.As(err, &re) || re.Kind != tc.kind || !strings.Contains(re.Msg, tc.want) {
				t.Errorf("got %v (%T), want %s containing %q", err, err, tc.kind, tc.want)
			}
		})
	}
	if n := len(c.n); n != 0 {
		t.Errorf("refused sweeps ran combinations: %v", c.n)
	}
}

// TestSweepEstimate: an estimate times one combination with the injected
// clock and scales it by the combinations per worker; an over-large grid
// is reported, not refused.
func TestSweepEstimate(t *testing.T) {
	clock := testkit.NewSteppingClock(time.Unix(0, 0), 1500*time.Millisecond)
	cfg := project.Defaults().Research
	l := NewLocal(Config{ProofSeed: fixedSeed, Project: demoProject(t), Research: cfg, Pool: newPool(t, 2), Now: clock.Now})
	req := SweepRequest{StrategyRef: templateRef(t, "sma_cross"), Series: "BTC-USD@1d", Estimate: true,
		Grid: Grid{"fast": {From: fp(2), To: fp(20)}, "slow": {Values: []any{30.0, 60.0, 90.0}}}}
	res, err := l.Sweep(ctxT(t), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := res.Estimate
	if e == nil || e.Combinations != 57 || e.Workers != 2 || e.PerCombinationSeconds != 1.5 || e.Seconds != 1.5*29 {
		t.Fatalf("estimate %+v", e)
	}
	if res.Evaluated != 0 || len(res.Top) != 0 || !strings.Contains(e.Note, "fast=2, slow=30") {
		t.Errorf("an estimate runs nothing else: %+v", res)
	}
	req.Grid = Grid{"fast": {From: fp(2), To: fp(200)}, "slow": {From: fp(3), To: fp(400)}}
	res, err = l.Sweep(ctxT(t), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if e := res.Estimate; e == nil || e.Combinations != 79202 || e.Seconds != 0 || !strings.Contains(e.Note, "would be refused") {
		t.Errorf("over-cap estimate %+v", res.Estimate)
	}
}

// TestSweepFailures: combinations whose run fails are counted and listed,
// not ranked; when all fail the sweep is an error naming the first.
func TestSweepFailures(t *testing.T) {
	l := newLocal(t, 1)
	src := "\"\"\"Fails for odd n.\"\"\"\nn = param.int(\"n\", 2, min=1, max=10)\ndef signals(bars):\n    if n % 2 == 1:\n        fail(\"odd n\")\n    return {\"long\": ta.cross_above(bars.close, ta.sma(bars.close, n * 5))}\n"
	res, err := l.Sweep(ctxT(t), SweepRequest{StrategyRef: StrategyRef{Source: src, Label: "odd.star"}, Series: "BTC-USD@1d",
		Grid: Grid{"n": {From: fp(1), To: fp(6)}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Evaluated != 6 || res.Failed != 3 || len(res.Top) != 3 || len(res.Errors) != 3 {
		t.Fatalf("evaluated %d failed %d top %d errors %d", res.Evaluated, res.Failed, len(res.Top), len(res.Errors))
	}
	if !strings.Contains(res.Errors[0].Message, "odd n") || res.Errors[0].Params["n"] != 1.0 {
		t.Errorf("error %+v", res.Errors[0])
	}
	if len(res.Warnings) == 0 || !strings.Contains(res.Warnings[0], "3 of 6 combinations failed") {
		t.Errorf("warnings %q", res.Warnings)
	}
	_, err = l.Sweep(ctxT(t), SweepRequest{StrategyRef: StrategyRef{Source: src}, Series: "BTC-USD@1d",
		Grid: Grid{"n": {Values: []any{1.0, 3.0}}}}, nil)
	var re *Error
	if !errors.As(err, &re) || re.Kind != KindStrategy || !strings.Contains(re.Msg, "every combination failed; the first (n=1)") {
		t.Errorf("all failed: %v", err)
	}
}

// TestPlanSawBars: the plan's bars (as the params request's worker read
// them) give the ledger its span, a chunk that ran over the same bars
// passes, and one that ran over other bars stops the sweep: the series
// changed while it ran, and one sweep never mixes two versions of it.
func TestPlanSawBars(t *testing.T) {
	p := &plan{base: worker.SweepChunk{Series: "BTC-USD@1h"}}
	if from, to := p.span(); from != "" || to != "" {
		t.Errorf("span %q to %q before any bars were seen", from, to)
	}
	seen := worker.BarsSeen{Digest: "d1", Count: 3, First: 0, Last: 7200}
	if err := p.saw(seen); err != nil {
		t.Fatal(err)
	}
	if from, to := p.span(); from != "1970-01-01T00:00:00Z" || to != "1970-01-01T02:00:00Z" {
		t.Errorf("span %s to %s, want the reported bars' first and last", from, to)
	}
	if err := p.saw(seen); err != nil {
		t.Errorf("the same bars again: %v", err)
	}
	err := p.saw(worker.BarsSeen{Digest: "d2", Count: 4})
	var re *Error
	if !errors.As(err, &re) || re.Kind != KindUnavailable || !strings.Contains(err.Error(), "changed while the sweep ran") {
		t.Errorf("other bars mid-sweep: %v", err)
	}
}

// TestSweepNeverReadsItsBars: a local sweep's bars are read by the
// worker that answers its params request, which says what it read; this
// process never holds them, and the chunks name their digest.
func TestSweepNeverReadsItsBars(t *testing.T) {
	l := NewLocal(Config{ProofSeed: fixedSeed, Project: demoProject(t), Pool: newPool(t, 1)})
	p, err := l.plan(ctxT(t), planInput{ref: templateRef(t, "sma_cross"), series: "BTC-USD@1h", grid: smaGrid(), barsInWorker: true})
	if err != nil {
		t.Fatal(err)
	}
	if p.bars.Len() != 0 || p.seen == nil || p.seen.Count != 17_544 || p.base.Digest == "" || p.base.Digest != p.seen.Digest {
		t.Fatalf("bars here %d, seen %+v, chunks name %q", p.bars.Len(), p.seen, p.base.Digest)
	}
}

// TestEvalOrder: the blocked order is a permutation of the combinations
// that takes the last knob's values in blocks of what the cache holds, and
// it is their own order when they fit. Through an LRU cache of cols
// columns, a strategy with an indicator per knob value then computes each
// of a block's columns once per block and each other value once per
// block, as evalOrder says; in their own order it computes one at nearly
// every request.
func TestEvalOrder(t *testing.T) {
	axis := func(n int) []any {
		a := make([]any, n)
		for i := range a {
			a[i] = int64(i)
		}
		return a
	}
	if o := evalOrder(100, [][]any{axis(10), axis(10)}, 12); o != nil {
		t.Errorf("ten values and room for twelve columns: order %v, want their own", o)
	}
	for _, tc := range []struct {
		axes         []int
		cols         int
		blocked, own int // computations (cache misses)
	}{
		// The million-bar sweep of make bench: four columns, blocks of 2.
		// In their own order the last knob's column misses at every
		// combination, the first knob's once per value.
		{[]int{10, 10}, 4, 10 + 5*10, 100 + 10},
		{[]int{10, 10}, 5, 10 + 4*10, 100 + 10},
		{[]int{10, 10}, 6, 10 + 3*10, 100 + 10},
		{[]int{10, 10}, 2, 10 + 10*10, 100 + 10},
		{[]int{5, 7}, 4, 7 + 4*5, 35 + 5},
		// Three knobs: the middle one's four values cycle through a block
		// of 5 with no room to stay, and when both other knobs change at
		// once they evict a block column too.
		{[]int{3, 4, 9}, 8, 47, 108 + 12 + 3},
	} {
		var axes [][]any
		count := 1
		for _, n := range tc.axes {
			axes = append(axes, axis(n))
			count *= n
		}
		o := evalOrder(count, axes, tc.cols)
		if s := slices.Sorted(slices.Values(o)); len(s) != count || s[0] != 0 || s[count-1] != count-1 || slices.Compact(s) == nil || len(slices.Compact(s)) != count {
			t.Fatalf("%v in %d columns: not a permutation of the %d combinations: %v", tc.axes, tc.cols, count, o)
		}
		// Each knob value is an indicator column, asked for in the knobs'
		// order; count the misses of an LRU cache of cols columns.
		misses := func(order func(int) int) int {
			var lru []string
			n := 0
			for pos := range count {
				i := order(pos)
				keys := make([]string, len(tc.axes))
				for k := len(tc.axes) - 1; k >= 0; k-- {
					keys[k] = fmt.Sprintf("%d=%d", k, i%tc.axes[k])
					i /= tc.axes[k]
				}
				for _, key := range keys {
					if j := slices.Index(lru, key); j >= 0 {
						lru = slices.Delete(lru, j, j+1)
					} else {
						n++
						if len(lru) == tc.cols {
							lru = lru[1:]
						}
					}
					lru = append(lru, key)
				}
			}
			return n
		}
		if got := misses(func(i int) int { return o[i] }); got != tc.blocked {
			t.Errorf("%v in %d columns: %d computations in blocks, want %d", tc.axes, tc.cols, got, tc.blocked)
		}
		if got := misses(func(i int) int { return i }); got != tc.own {
			t.Errorf("%v in %d columns: %d computations in their own order, want %d", tc.axes, tc.cols, got, tc.own)
		}
	}
}

// TestSweepInBlocks: a sweep whose combinations run in blocks (the cache
// made small enough that the demo's hourly columns do not fit) reports
// what it reports in their own order, at one and two workers: every trial
// lands at its own combination. The series-set sweep pools an hourly series,
// in blocks, with a daily one in its own order, so a trial put at another
// combination would pool two different combinations.
func TestSweepInBlocks(t *testing.T) {
	grid := Grid{"fast": {From: fp(4), To: fp(20), Step: fp(4)}, "slow": {From: fp(30), To: fp(90), Step: fp(10)}}
	sweep := func(workers int, series string) []byte {
		res, err := newLocal(t, workers).Sweep(ctxT(t), SweepRequest{StrategyRef: templateRef(t, "sma_cross"), Series: series, Grid: grid, Top: MaxTop}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Evaluated != 35 {
			t.Fatalf("evaluated %d of 35", res.Evaluated)
		}
		return marshal(t, res)
	}
	all := []string{"BTC-USD@1h", "BTC-USD@1h, BTC-USD@1d"}
	var own [][]byte
	for _, series := range all {
		own = append(own, sweep(1, series))
	}
	defer func(m int64) { workerMemo = m }(workerMemo)
	workerMemo = 800 << 10 // five columns of the demo's 17,544 hourly bars, blocks of 3; the daily ones fit
	if cols := ta.Columns(workerMemo, 17_544); cols != 5 {
		t.Fatalf("%d columns, want 5", cols)
	}
	for k, series := range all {
		for _, n := range []int{1, 2} {
			if got := sweep(n, series); !bytes.Equal(got, own[k]) {
				t.Errorf("%s, %d workers: in blocks differs from their own order:\n%s\n%s", series, n, got, own[k])
			}
		}
	}
}

// TestReportedScoreBounded (issue 45 item 7): a short run's annualised
// rank figure (CAGR and Calmar near 1e303 over minutes of bars) is
// reported within backtest.AnnualisedBound and in plain notation, as the
// run's metrics are; the figures that are not annualised are as they are.
func TestReportedScoreBounded(t *testing.T) {
	s := worker.Scores{CAGR: 2.6e233, Calmar: -7e235, Sharpe: 3e7, TotalReturn: 0.023, ProfitFactor: 2.5}
	for metric, want := range map[string]float64{RankCAGR: 1e6, RankCalmar: -1e6, RankSharpe: 1e6, RankTotalReturn: 0.023, RankProfitFactor: 2.5} {
		got := reportedScore(s, metric)
		if got == nil || *got != want {
			t.Errorf("%s: %v, want %v", metric, got, want)
		}
		b, _ := json.Marshal(Trial{Score: got})
		if strings.Contains(string(b), "e+") {
			t.Errorf("%s: %s in scientific notation", metric, b)
		}
	}
}
