package research

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"wicket/internal/project"
	"wicket/strategy"
	"wicket/strategy/history"
)

func TestLayout(t *testing.T) {
	for _, tc := range []struct {
		name                string
		n, windows, is, oos int
		anchored            bool
		want                []window
		err                 string
	}{
		{"count only", 100, 2, 0, 0, false, []window{{4, 68, 68, 84}, {20, 84, 84, 100}}, ""},
		{"count only anchored", 100, 2, 0, 0, true, []window{{0, 68, 68, 84}, {0, 84, 84, 100}}, ""},
		{"lengths", 100, 0, 40, 20, false, []window{{0, 40, 40, 60}, {20, 60, 60, 80}, {40, 80, 80, 100}}, ""},
		{"lengths with lead", 105, 0, 40, 20, true, []window{{0, 45, 45, 65}, {0, 65, 65, 85}, {0, 85, 85, 105}}, ""},
		{"count and oos", 100, 4, 0, 10, false, []window{{0, 60, 60, 70}, {10, 70, 70, 80}, {20, 80, 80, 90}, {30, 90, 90, 100}}, ""},
		{"count and is", 100, 3, 70, 0, false, []window{{0, 70, 70, 80}, {10, 80, 80, 90}, {20, 90, 90, 100}}, ""},
		{"too many for the range", 100, 3, 80, 10, false, nil, "cannot hold an in-sample window of 80 bars followed by 3 out-of-sample windows of 10 bars"},
		{"one length only", 100, 0, 40, 0, false, nil, "give windows"},
		{"nothing given", 200, 0, 0, 0, false, []window{{2, 90, 90, 112}, {24, 112, 112, 134}, {46, 134, 134, 156}, {68, 156, 156, 178}, {90, 178, 178, 200}}, ""},
		{"above the maximum", 100, 101, 0, 0, false, nil, "windows 101 is above the maximum of 100"},
		{"lengths make too many", 10000, 0, 10, 5, false, nil, "make 1998 windows"},
		{"range too short", 5, 2, 0, 0, false, nil, "cannot hold"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := layout(tc.n, tc.windows, tc.is, tc.oos, tc.anchored)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("window %d: %v, want %v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

// TestLayoutProperties: for any layout, out-of-sample windows are disjoint
// and in order, every in-sample window ends where its out-of-sample window
// begins (so it never holds that window's bars or any later one's), and
// everything lies inside the range.
func TestLayoutProperties(t *testing.T) {
	drawn, valid := 0, 0
	rapid.Check(t, func(t *rapid.T) {
		drawn++
		n := rapid.IntRange(1, 5000).Draw(t, "n")
		windows := rapid.IntRange(0, 20).Draw(t, "windows")
		is := rapid.IntRange(0, n/2).Draw(t, "is")
		oos := rapid.IntRange(0, max(1, n/8)).Draw(t, "oos")
		anchored := rapid.Bool().Draw(t, "anchored")
		ws, err := layout(n, windows, is, oos, anchored)
		if err != nil {
			return
		}
		valid++
		for k, w := range ws {
			if w.isLo < 0 || w.isLo >= w.isHi || w.isHi != w.oosLo || w.oosLo >= w.oosHi || w.oosHi > n {
				t.Fatalf("window %d is malformed: %+v (n %d)", k, w, n)
			}
			if anchored && w.isLo != 0 {
				t.Fatalf("anchored window %d starts at %d", k, w.isLo)
			}
			if k > 0 {
				prev := ws[k-1]
				if w.oosLo != prev.oosHi {
					t.Fatalf("out-of-sample windows %d and %d overlap or leave a gap: %+v %+v", k-1, k, prev, w)
				}
				if !anchored && w.isHi-w.isLo != prev.isHi-prev.isLo {
					t.Fatalf("rolling in-sample windows differ in length: %+v %+v", prev, w)
				}
			}
			for _, later := range ws[k:] {
				if w.isHi > later.oosLo {
					t.Fatalf("in-sample window %d reaches into a later out-of-sample window: %+v %+v", k, w, later)
				}
			}
		}
		if ws[len(ws)-1].oosHi != n {
			t.Fatalf("the last out-of-sample window ends at %d, not at the range's end %d", ws[len(ws)-1].oosHi, n)
		}
	})
	// At least a fifth of the checks rapid ran (100, or 20 with -short)
	// must draw a valid layout, or the property is barely exercised.
	if valid*5 < drawn {
		t.Errorf("only %d of %d drawn layouts were valid: the property is barely exercised", valid, drawn)
	}
}

var wfGrid = Grid{"fast": {Values: []any{5.0, 10.0, 20.0}}, "slow": {From: fp(30), To: fp(90), Step: fp(30)}}

// TestWalkForward checks a rolling and an anchored analysis end to end:
// the windows follow the layout, the stitched curve compounds the
// out-of-sample windows, and the efficiency is the ratio it claims.
func TestWalkForward(t *testing.T) {
	l := newLocal(t, 2)
	for _, anchored := range []bool{false, true} {
		req := WalkForwardRequest{StrategyRef: templateRef(t, "sma_cross"), Series: "BTC-USD@1d", Grid: wfGrid, Windows: 5, Anchored: anchored}
		capital := 10000.0
		if anchored {
			// A capital as a person may type it: the stitched curve starts from its value.
			req.Costs.Capital, capital = " 2500 ", 2500
		}
		var last Progress
		res, err := l.WalkForward(ctxT(t), req, func(p Progress) { last = p })
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Windows) != 5 || res.Partial || res.Combinations != 9 {
			t.Fatalf("windows %d partial %v combinations %d", len(res.Windows), res.Partial, res.Combinations)
		}
		if last.Done != last.Total || last.Total != 5*(9+1) {
			t.Errorf("last progress %+v", last)
		}
		growth := 1.0
		for i, w := range res.Windows {
			if w.InSample.To >= w.OutOfSample.From {
				t.Errorf("window %d: in-sample ends %s, out-of-sample starts %s", i+1, w.InSample.To, w.OutOfSample.From)
			}
			if i > 0 && res.Windows[i-1].OutOfSample.To >= w.OutOfSample.From {
				t.Errorf("out-of-sample windows %d and %d overlap", i, i+1)
			}
			if anchored && w.InSample.From != res.Windows[0].InSample.From {
				t.Errorf("anchored window %d starts in-sample at %s", i+1, w.InSample.From)
			}
			if w.Evaluated != 9 || len(w.Params) != 3 {
				t.Errorf("window %d: evaluated %d, params %v", i+1, w.Evaluated, w.Params)
			}
			if !strings.HasPrefix(w.LookaheadCheck, "passed (") {
				t.Errorf("window %d: lookahead_check %q; each window's winner is proven", i+1, w.LookaheadCheck)
			}
			var m struct {
				TotalReturn float64 `json:"total_return"`
				Bars        int
				Start       string
			}
			if err := json.Unmarshal(w.OutOfSampleMetrics, &m); err != nil {
				t.Fatal(err)
			}
			if m.Bars != w.OutOfSample.Bars || m.Start != w.OutOfSample.From {
				t.Errorf("window %d: out-of-sample metrics over %d bars from %s, window %+v", i+1, m.Bars, m.Start, w.OutOfSample)
			}
			growth *= 1 + m.TotalReturn
		}
		// Windows whose verdicts differ (each proof draws its own seed, and
		// the windows' lengths differ) are summed up by pointing at them;
		// with one seed and one length the summary is that verdict.
		if want := "passed for the winner of each of 5 windows (each window's lookahead_check names its cuts)"; res.LookaheadCheck != want &&
			(!strings.HasPrefix(res.LookaheadCheck, "passed (") || !strings.HasSuffix(res.LookaheadCheck, ") for the winner of each of 5 windows")) {
			t.Errorf("lookahead_check %q, want %q or one verdict for all", res.LookaheadCheck, want)
		}
		s := res.OutOfSample
		if s == nil {
			t.Fatal("no stitched out-of-sample metrics")
		}
		if s.TotalReturn == nil || math.Abs(*s.TotalReturn-(growth-1)) > 1e-4*math.Max(1, growth) {
			t.Errorf("stitched total return %v, compounding the windows gives %v", s.TotalReturn, growth-1)
		}
		if final, err := strconv.ParseFloat(s.FinalEquity, 64); err != nil || math.Abs(final-capital*growth) > 1e-4*capital*math.Max(1, growth) {
			t.Errorf("stitched final equity %s, want %v × %v (settings %+v)", s.FinalEquity, capital, growth, res.Settings)
		}
		if s.Start != res.Windows[0].OutOfSample.From || s.End != res.Windows[4].OutOfSample.To {
			t.Errorf("stitched range %s to %s", s.Start, s.End)
		}
		if len(res.Equity) == 0 || len(res.Equity) > 500 {
			t.Errorf("%d equity points", len(res.Equity))
		}
		if res.Efficiency != nil && res.InSampleAnnualReturn != nil && res.OutOfSampleAnnualReturn != nil {
			if want := *res.OutOfSampleAnnualReturn / *res.InSampleAnnualReturn; math.Abs(*res.Efficiency-want) > 1e-4*math.Max(1, math.Abs(want)) {
				t.Errorf("efficiency %v, want %v", *res.Efficiency, want)
			}
		} else if res.InSampleAnnualReturn != nil && *res.InSampleAnnualReturn > 0 {
			t.Errorf("efficiency missing with a positive in-sample return")
		}
	}
}

// TestWalkForwardNeverUsesOutOfSampleBars rewrites every bar after the
// first window's in-sample window: that window's in-sample results and
// choice stay byte-identical, while its out-of-sample results change.
func TestWalkForwardNeverUsesOutOfSampleBars(t *testing.T) {
	src := demoProject(t)
	store, err := history.OpenReadOnly(src.HistoryPath())
	if err != nil {
		t.Fatal(err)
	}
	bars, err := store.Load("ETH-USD@1d", history.DemoEnd.AddDate(-4, 0, 0), history.DemoEnd)
	store.Close()
	if err != nil {
		t.Fatal(err)
	}
	const windows = 3
	ws, err := layout(bars.Len(), windows, 0, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	cut := ws[0].oosLo
	// A different future: from the cut on, the prices mirror around the
	// cut's close, so rallies become slumps.
	alt := strategy.Bars{Series: bars.Series}
	alt.Time = append([]int64(nil), bars.Time...)
	alt.Volume = append([]float64(nil), bars.Volume...)
	ref := bars.Close[cut-1]
	mirror := func(x float64) float64 { return ref * ref / x }
	for i := range bars.Len() {
		o, h, lo, c := bars.Open[i], bars.High[i], bars.Low[i], bars.Close[i]
		if i >= cut {
			o, h, lo, c = mirror(o), mirror(lo), mirror(h), mirror(c)
		}
		alt.Open, alt.High, alt.Low, alt.Close = append(alt.Open, o), append(alt.High, h), append(alt.Low, lo), append(alt.Close, c)
	}
	run := func(b strategy.Bars) WalkForwardResult {
		p := project.Project{Root: t.TempDir()}
		s, err := history.Open(p.HistoryPath())
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Write(context.Background(), "ETH-USD@1d", b, history.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		s.Close()
		l := NewLocal(Config{ProofSeed: fixedSeed, Project: p, Pool: newPool(t, 2)})
		res, err := l.WalkForward(ctxT(t), WalkForwardRequest{StrategyRef: templateRef(t, "sma_cross"), Series: "ETH-USD@1d", Grid: wfGrid, Windows: windows}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	a, b := run(bars), run(alt)
	wa, wb := a.Windows[0], b.Windows[0]
	if wa.InSample != wb.InSample || wa.OutOfSample != wb.OutOfSample {
		t.Fatalf("the windows moved: %+v %+v", wa, wb)
	}
	if !bytes.Equal(wa.InSampleMetrics, wb.InSampleMetrics) || fmtParams(wa.Params) != fmtParams(wb.Params) {
		t.Errorf("window 1's in-sample result depends on later bars:\n%s %s\n%s %s", fmtParams(wa.Params), wa.InSampleMetrics, fmtParams(wb.Params), wb.InSampleMetrics)
	}
	if bytes.Equal(wa.OutOfSampleMetrics, wb.OutOfSampleMetrics) {
		t.Error("rewriting the out-of-sample bars changed nothing out-of-sample: the test proves nothing")
	}
}

// TestWalkForwardRefusals: windows too short for the warm-up are refused
// naming the numbers, before any sweep runs; so are bad lengths.
func TestWalkForwardRefusals(t *testing.T) {
	var c computedCounter
	l := NewLocal(Config{ProofSeed: fixedSeed, Project: demoProject(t), Pool: newPool(t, 1), Computed: c.add})
	base := WalkForwardRequest{StrategyRef: templateRef(t, "sma_cross"), Series: "BTC-USD@1d", From: "2024-01-01", Grid: Grid{"slow": {Values: []any{20.0, 150.0}}}}
	for _, tc := range []struct {
		name string
		mut  func(*WalkForwardRequest)
		want string
	}{
		{"warm-up", func(r *WalkForwardRequest) { r.Windows = 6 }, `in-sample windows of 144 bars are too short for this strategy's warm-up of 15\d bars \(at fast=10, size=1, slow=150\): each needs at least 3\d\d bars`},
		{"one length", func(r *WalkForwardRequest) { r.OutOfSample = Length{Bars: 30} }, "give windows"},
		{"duration below a bar", func(r *WalkForwardRequest) { r.InSample, r.OutOfSample = Length{Duration: 3600e9}, Length{Bars: 10} }, `in_sample 1h is shorter than one 1d bar`},
		{"one-bar windows", func(r *WalkForwardRequest) {
			r.InSample, r.OutOfSample = Length{Bars: 300}, Length{Bars: 1}
			r.Windows = 3
		}, "out-of-sample windows of 1 bar are too short"},
	} {
		req := base
		tc.mut(&req)
		_, err := l.WalkForward(ctxT(t), req, nil)
		var re *Error
		if !errors.As(err, &re) || re.Kind != KindInvalid || !regexp.MustCompile(tc.want).MatchString(re.Msg) {
			t.Errorf("%s: %v, want an invalid error matching %q", tc.name, err, tc.want)
		}
	}
	if c.get("sma") > 4 {
		t.Errorf("the refusals ran sweeps: %v", c.n)
	}
	// Durations convert to bars by the granularity.
	req := base
	req.From, req.InSample, req.OutOfSample = "2020-01-01", Length{Duration: 400 * 24 * 3600e9}, Length{Duration: 180 * 24 * 3600e9}
	res, err := l.WalkForward(ctxT(t), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Windows) != 7 || res.Windows[0].InSample.Bars != 400 || res.Windows[0].OutOfSample.Bars != 180 {
		t.Errorf("%d windows, first %+v", len(res.Windows), res.Windows[0])
	}
}

// TestWalkForwardCancel: cancelling returns the leading windows that
// finished, marked partial.
func TestWalkForwardCancel(t *testing.T) {
	l := newLocal(t, 1)
	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()
	grid := Grid{"fast": {From: fp(2), To: fp(20), Step: fp(2)}, "slow": {From: fp(30), To: fp(120), Step: fp(10)}}
	res, err := l.WalkForward(ctx, WalkForwardRequest{StrategyRef: templateRef(t, "sma_cross"), Series: "BTC-USD@1h", Grid: grid, Windows: 4}, func(p Progress) {
		if p.Done > 150 {
			cancel()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	// Window 1's out-of-sample run is queued as soon as its sweep is
	// complete, ahead of window 2's sweep, so it finished.
	if !res.Partial || !strings.Contains(res.PartialReason, "of 4 windows") || len(res.Windows) < 1 || len(res.Windows) >= 4 {
		t.Errorf("partial %v (%s), %d windows", res.Partial, res.PartialReason, len(res.Windows))
	}
	if res.LookaheadCheck != "not run: the walk-forward was cancelled" {
		t.Errorf("lookahead_check %q on a cancelled walk-forward", res.LookaheadCheck)
	}
}
