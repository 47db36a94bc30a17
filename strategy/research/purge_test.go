package research

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"wicket/strategy/backtest"
	"wicket/strategy/worker"
)

func TestPurgeAndEmbargoLayout(t *testing.T) {
	wins, err := layout(100, 0, 60, 10, false) // in-sample 60, 4 folds of 10 from bar 60
	if err != nil {
		t.Fatal(err)
	}
	if err := purgeWindows(wins, 5); err != nil {
		t.Fatal(err)
	}
	want := []window{{0, 55, 60, 70}, {10, 65, 70, 80}, {20, 75, 80, 90}, {30, 85, 90, 100}}
	for k := range want {
		if wins[k] != want[k] {
			t.Errorf("window %d: %+v, want %+v", k+1, wins[k], want[k])
		}
	}
	// Folds end at 70, 80 and 90; the embargo cuts the 3 bars after each
	// out of every later window's in-sample bars that hold them.
	for k, cuts := range [][][2]int{nil, nil, {{70, 73}}, {{70, 73}, {80, 83}}} {
		got := embargoed(wins, k, 3)
		if len(got) != len(cuts) {
			t.Errorf("window %d: embargoed %v, want %v", k+1, got, cuts)
			continue
		}
		for i := range got {
			if got[i] != cuts[i] {
				t.Errorf("window %d: embargoed %v, want %v", k+1, got, cuts)
			}
		}
	}
	// An embargo longer than a fold merges into one cut.
	if got := embargoed(wins, 3, 15); len(got) != 1 || got[0] != [2]int{70, 85} {
		t.Errorf("embargo 15 in window 4: %v, want [[70 85]]", got)
	}
	// A purge that eats the in-sample window cannot fail silently.
	wins, _ = layout(100, 0, 60, 10, false)
	err = purgeWindows(wins, 60)
	var re *Error
	if !errors.As(err, &re) || re.Kind != KindInvalid || !strings.Contains(re.Msg, "purge of 60 bars is not shorter than window 1's in-sample window of 60 bars") {
		t.Errorf("purge 60 over in-sample 60: %v", err)
	}
	wins, _ = layout(100, 0, 60, 10, false)
	if err := checkEmbargo(wins, 3, RankProfitFactor); err == nil || !strings.Contains(err.Error(), "profit_factor counts whole trades") {
		t.Errorf("embargo ranked by profit factor: %v", err)
	}
	if err := checkEmbargo(wins, 3, RankSharpe); err != nil {
		t.Errorf("embargo ranked by sharpe: %v", err)
	}
}

// TestPurgeEmbargoProperties: whatever the layout, purge and embargo, no
// bar a window ranks on lies in the purge before its out-of-sample window
// or in the embargo after any earlier one, and every other in-sample bar
// is kept.
func TestPurgeEmbargoProperties(t *testing.T) {
	drawn, valid := 0, 0
	rapid.Check(t, func(t *rapid.T) {
		drawn++
		n := rapid.IntRange(10, 3000).Draw(t, "n")
		windows := rapid.IntRange(1, 12).Draw(t, "windows")
		anchored := rapid.Bool().Draw(t, "anchored")
		purge := rapid.IntRange(0, 50).Draw(t, "purge")
		embargo := rapid.IntRange(0, 50).Draw(t, "embargo")
		wins, err := layout(n, windows, 0, 0, anchored)
		if err != nil || purgeWindows(wins, purge) != nil || checkEmbargo(wins, embargo, RankSharpe) != nil {
			return
		}
		valid++
		for k, w := range wins {
			if w.isHi != w.oosLo-purge {
				t.Fatalf("window %d ends in-sample at %d, its out-of-sample window starts at %d, purge %d", k, w.isHi, w.oosLo, purge)
			}
			keep := keepMask(wins, k, embargo)
			for i := w.isLo; i < w.isHi; i++ {
				inEmbargo := false
				for _, prev := range wins[:k] {
					inEmbargo = inEmbargo || (i >= prev.oosHi && i < prev.oosHi+embargo)
				}
				kept := keep == nil || keep[i-w.isLo]
				if kept == inEmbargo {
					t.Fatalf("window %d bar %d: kept %v, in an embargo %v", k, i, kept, inEmbargo)
				}
			}
		}
	})
	// At least a fifth of the checks rapid ran (100, or 20 with -short)
	// must draw a valid layout, or the property is barely exercised.
	if valid*5 < drawn {
		t.Errorf("only %d of %d drawn layouts were valid: the property is barely exercised", valid, drawn)
	}
}

// TestWalkForwardPurged: a purge of 20 bars, the horizon of a position
// that sma_cross holds across the end of an in-sample window, takes those
// bars out of each window's in-sample sweep and nothing else. Each
// window's winner and score equal an independent sweep over the purged
// in-sample span alone, the out-of-sample windows do not move, and the
// in-sample results differ from the unpurged run's.
func TestWalkForwardPurged(t *testing.T) {
	l := newLocal(t, 2)
	base := WalkForwardRequest{StrategyRef: templateRef(t, "sma_cross"), Series: "BTC-USD@1d", Grid: wfGrid, Windows: 3}
	plain, err := l.WalkForward(ctxT(t), base, nil)
	if err != nil {
		t.Fatal(err)
	}
	req := base
	req.Purge = Length{Bars: 20}
	res, err := l.WalkForward(ctxT(t), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s, p := res.Settings, plain.Settings; s.PurgeBars == nil || *s.PurgeBars != 20 || *s.EmbargoBars != 0 || p.PurgeBars == nil || *p.PurgeBars != 0 {
		t.Errorf("settings %+v, unpurged %+v", s, p)
	}
	differs := false
	for k, w := range res.Windows {
		p := plain.Windows[k]
		if w.OutOfSample != p.OutOfSample || w.InSample.From != p.InSample.From {
			t.Errorf("window %d moved: %+v / %+v", k+1, w, p)
		}
		if w.InSample.Bars != p.InSample.Bars-20 || w.Purged == nil || w.Purged.Bars != 20 || p.Purged != nil {
			t.Fatalf("window %d: in-sample %d bars (unpurged %d), purged %+v", k+1, w.InSample.Bars, p.InSample.Bars, w.Purged)
		}
		if !(w.InSample.To < w.Purged.From && w.Purged.To < w.OutOfSample.From) {
			t.Errorf("window %d: in-sample to %s, purged %s to %s, out-of-sample from %s", k+1, w.InSample.To, w.Purged.From, w.Purged.To, w.OutOfSample.From)
		}
		// The purged rows are gone: a sweep of the in-sample span alone
		// picks the same winner with the same score.
		sw, err := l.Sweep(ctxT(t), SweepRequest{StrategyRef: base.StrategyRef, Series: base.Series, Grid: wfGrid, From: w.InSample.From, To: w.InSample.To, Top: 1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if fmtParams(sw.Top[0].Params) != fmtParams(w.Params) || !sameFloat(sw.Top[0].Score, w.InSampleScore) {
			t.Errorf("window %d: winner %s score %v; a sweep of its in-sample span picks %s score %v",
				k+1, fmtParams(w.Params), deref(w.InSampleScore), fmtParams(sw.Top[0].Params), deref(sw.Top[0].Score))
		}
		differs = differs || !bytes.Equal(w.InSampleMetrics, p.InSampleMetrics)
	}
	if !differs {
		t.Error("the purge changed no window's in-sample result")
	}
}

// TestWalkForwardEmbargoed: rolling windows hold earlier out-of-sample
// windows; the embargo's bars after each of them leave the later
// windows' ranking, whose score equals the Sharpe ratio computed here,
// independently, from a backtest's equity curve without those bars.
func TestWalkForwardEmbargoed(t *testing.T) {
	l := newLocal(t, 2)
	base := WalkForwardRequest{StrategyRef: templateRef(t, "sma_cross"), Series: "BTC-USD@1d", Grid: wfGrid, Windows: 4,
		InSample: Length{Bars: 400}, OutOfSample: Length{Bars: 100}, From: "2021-01-01"}
	plain, err := l.WalkForward(ctxT(t), base, nil)
	if err != nil {
		t.Fatal(err)
	}
	req := base
	req.Embargo = Length{Bars: 30}
	res, err := l.WalkForward(ctxT(t), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Settings.EmbargoBars == nil || *res.Settings.EmbargoBars != 30 || len(res.Windows) != 4 {
		t.Fatalf("settings %+v, %d windows", res.Settings, len(res.Windows))
	}
	for k, want := range []int{0, 0, 1, 2} {
		w := res.Windows[k]
		if len(w.Embargoed) != want {
			t.Fatalf("window %d: embargoed %+v, want %d cuts", k+1, w.Embargoed, want)
		}
		for j, c := range w.Embargoed {
			if c.Bars != 30 || c.From != res.Windows[k-want+j].OutOfSample.From {
				t.Errorf("window %d cut %d: %+v, want 30 bars from %s", k+1, j, c, res.Windows[k-want+j].OutOfSample.From)
			}
		}
		if want == 0 && (fmtParams(w.Params) != fmtParams(plain.Windows[k].Params) || !sameFloat(w.InSampleScore, plain.Windows[k].InSampleScore)) {
			t.Errorf("window %d holds no embargo but changed: %s %v / %s %v", k+1, fmtParams(w.Params), deref(w.InSampleScore), fmtParams(plain.Windows[k].Params), deref(plain.Windows[k].InSampleScore))
		}
	}
	changed := false
	for _, k := range []int{2, 3} {
		w := res.Windows[k]
		got := embargoedSharpe(t, l, base, w)
		if w.InSampleScore == nil || math.Abs(*w.InSampleScore-got) > 1e-3*math.Max(1, math.Abs(got)) {
			t.Errorf("window %d: in-sample score %v, the winner's Sharpe ratio without the embargoed bars is %v", k+1, deref(w.InSampleScore), got)
		}
		changed = changed || !sameFloat(w.InSampleScore, plain.Windows[k].InSampleScore)
	}
	if !changed {
		t.Error("the embargo changed no window's in-sample score")
	}
	req.RankBy = RankProfitFactor
	if _, err := l.WalkForward(ctxT(t), req, nil); err == nil || !strings.Contains(err.Error(), "profit_factor counts whole trades") {
		t.Errorf("an embargo ranked by profit factor: %v", err)
	}
	req.RankBy, req.Embargo, req.Purge = "", Length{}, Length{Bars: 400}
	if _, err := l.WalkForward(ctxT(t), req, nil); err == nil || !strings.Contains(err.Error(), "purge of 400 bars is not shorter than window 1's in-sample window of 400 bars") {
		t.Errorf("a purge as long as the in-sample window: %v", err)
	}
}

// embargoedSharpe backtests window w's winner over its in-sample span and
// computes the annualised Sharpe ratio (mean over sample deviation) of
// its per-bar returns on the bars outside w's embargoed spans.
func embargoedSharpe(t *testing.T, l *Local, base WalkForwardRequest, w Window) float64 {
	t.Helper()
	bt, err := l.Backtest(ctxT(t), BacktestRequest{StrategyRef: base.StrategyRef, Series: base.Series, Params: w.Params, From: w.InSample.From, To: w.InSample.To})
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Equity []struct {
			Time   string `json:"time"`
			Equity string `json:"equity"`
		} `json:"equity"`
		Settings struct {
			Capital string `json:"capital"`
		} `json:"settings"`
	}
	if err := json.Unmarshal(bt.Result, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Equity) != w.InSample.Bars {
		t.Fatalf("%d equity points for %d bars", len(r.Equity), w.InSample.Bars)
	}
	prev, _ := strconv.ParseFloat(r.Settings.Capital, 64)
	if prev == 0 {
		prev = 10000
	}
	var kept []float64
	for _, pt := range r.Equity {
		e, _ := strconv.ParseFloat(pt.Equity, 64)
		out := false
		for _, c := range w.Embargoed {
			out = out || (pt.Time >= c.From && pt.Time <= c.To)
		}
		if !out {
			kept = append(kept, e/prev-1)
		}
		prev = e
	}
	if len(kept) != w.InSample.Bars-30*len(w.Embargoed) {
		t.Fatalf("kept %d of %d bars", len(kept), w.InSample.Bars)
	}
	var sum, ss float64
	for _, x := range kept {
		sum += x
	}
	mean := sum / float64(len(kept))
	for _, x := range kept {
		ss += (x - mean) * (x - mean)
	}
	return mean / math.Sqrt(ss/float64(len(kept)-1)) * math.Sqrt(365)
}

func sameFloat(a, b *float64) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b || math.Abs(*a-*b) <= 1e-12*math.Max(1, math.Abs(*a))
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestPurgedWalkForwardMatchesReference: on the CPCV fixture (five
// combinations whose returns overlap three bars, one never trading),
// rolling windows of 40 and 12 bars purged by 3 and embargoed by 4 lay
// out, keep, rescore and pick as testdata/wf_ref.py, an independent
// plain-Python implementation, computed: each window's bars, the bars it
// ranks on, its pick and that pick's Sharpe ratio, and the stitched
// out-of-sample Sharpe ratio.
func TestPurgedWalkForwardMatchesReference(t *testing.T) {
	raw, err := os.ReadFile("testdata/cpcv/returns.csv")
	if err != nil {
		t.Fatal(err)
	}
	var returns [][]float64
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var r []float64
		for _, f := range strings.Split(line, ",") {
			x, err := strconv.ParseFloat(f, 64)
			if err != nil {
				t.Fatal(err)
			}
			r = append(r, x)
		}
		returns = append(returns, r)
	}
	b, err := os.ReadFile("testdata/wf/expected.json")
	if err != nil {
		t.Fatal(err)
	}
	var want struct {
		Windows []struct {
			Lo     int     `json:"is_lo"`
			Hi     int     `json:"is_hi"`
			OLo    int     `json:"oos_lo"`
			OHi    int     `json:"oos_hi"`
			Kept   int     `json:"kept"`
			Pick   int     `json:"pick"`
			Sharpe float64 `json:"sharpe"`
		} `json:"windows"`
		Stitched float64 `json:"stitched_sharpe"`
	}
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	const purge, embargo = 3, 4
	wins, err := layout(len(returns[0]), 0, 40, 12, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := purgeWindows(wins, purge); err != nil {
		t.Fatal(err)
	}
	if len(wins) != len(want.Windows) {
		t.Fatalf("%d windows, want %d", len(wins), len(want.Windows))
	}
	rs := rescorer{capital: 10000, periodsPerYear: 365, bar: 24 * time.Hour}
	var stitched []float64
	for k, w := range wins {
		ww := want.Windows[k]
		if w.isLo != ww.Lo || w.isHi != ww.Hi || w.oosLo != ww.OLo || w.oosHi != ww.OHi {
			t.Fatalf("window %d: %+v, want %+v", k+1, w, ww)
		}
		keep := keepMask(wins, k, embargo)
		if keep == nil {
			keep = make([]bool, w.isHi-w.isLo)
			for i := range keep {
				keep[i] = true
			}
		}
		kept := 0
		for _, on := range keep {
			if on {
				kept++
			}
		}
		trials := make([]*worker.Trial, len(returns))
		for m, r := range returns {
			trials[m] = &worker.Trial{Returns: append([]float64(nil), r[w.isLo:w.isHi]...)}
			if err := rs.rescore(trials[m], keep); err != nil {
				t.Fatal(err)
			}
		}
		pick := rankTrials(trials, RankSharpe).order[0]
		sr := float64(trials[pick].Scores.Sharpe)
		if kept != ww.Kept || pick != ww.Pick || math.Abs(sr-ww.Sharpe) > 1e-12*math.Max(1, math.Abs(ww.Sharpe)) {
			t.Errorf("window %d: %d bars kept, pick %d with Sharpe %.17g; want %d, %d, %.17g", k+1, kept, pick, sr, ww.Kept, ww.Pick, ww.Sharpe)
		}
		stitched = append(stitched, returns[pick][w.oosLo:w.oosHi]...)
	}
	st := worker.StatsOf(backtest.MomentsOf(stitched))
	if got := float64(st.SR) * math.Sqrt(365); math.Abs(got-want.Stitched) > 1e-12*math.Max(1, math.Abs(want.Stitched)) {
		t.Errorf("stitched Sharpe %.17g, want %.17g", got, want.Stitched)
	}
}
