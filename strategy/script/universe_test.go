package script

import (
	"math"
	"strings"
	"testing"

	"wicket/strategy"
)

// twoAssets are two ramps on one calendar of n hourly bars: A rises
// 1, 2, 3, ... and B falls from n; B has no bar at index 3.
func twoAssets(n int) []strategy.Bars {
	a := rampBars(n)
	a.Series = "A-USD@1h"
	b := rampBars(n)
	b.Series = "B-USD@1h"
	b.Open, b.High, b.Low, b.Close, b.Volume = append([]float64{}, b.Open...), append([]float64{}, b.High...), append([]float64{}, b.Low...), append([]float64{}, b.Close...), append([]float64{}, b.Volume...)
	for i := range b.Close {
		c := float64(n - i)
		b.Open[i], b.High[i], b.Low[i], b.Close[i] = c, c+0.5, c-0.5, c
	}
	nan := math.NaN()
	b.Open[3], b.High[3], b.Low[3], b.Close[3], b.Volume[3] = nan, nan, nan, nan, nan
	return []strategy.Bars{a, b}
}

const equalWeightSrc = `"""equal weight"""
universe = ["A-USD@1h", "B-USD@1h"]
rebalance = "weekly"
def signals(u):
    return {a: 1.0 / len(u.assets) for a in u.assets}
`

func TestUniverseDeclared(t *testing.T) {
	s := mustLoad(t, equalWeightSrc, Options{})
	if !s.IsPortfolio() || strings.Join(s.Universe(), ",") != "A-USD@1h,B-USD@1h" || s.Rebalance() != "weekly" {
		t.Fatalf("portfolio %v, universe %v, rebalance %q", s.IsPortfolio(), s.Universe(), s.Rebalance())
	}
	w, err := s.Weights(bg(t), twoAssets(6))
	if err != nil {
		t.Fatal(err)
	}
	for a := range w {
		for i, f := range w[a] {
			if f != 0.5 {
				t.Fatalf("weight[%d][%d] = %v, want 0.5", a, i, f)
			}
		}
	}
	if _, err := s.Signals(bg(t), rampBars(10)); err == nil || !strings.Contains(err.Error(), "declares a universe") {
		t.Fatalf("Signals on a portfolio strategy: %v", err)
	}
	ob := mustLoad(t, onBarEqualSrc, Options{})
	if _, err := ob.Begin(bg(t), rampBars(10)); err == nil || !strings.Contains(err.Error(), "declares a universe") {
		t.Fatalf("Begin on an on_bar portfolio strategy: %v", err)
	}
	plain := mustLoad(t, "def signals(bars):\n    return {\"long\": bars.close > 1}\n", Options{})
	if plain.IsPortfolio() || plain.Universe() != nil {
		t.Fatal("a single-series strategy reads as a portfolio")
	}
}

func TestUniverseBadDeclarations(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{`universe = "A-USD@1h"` + "\ndef signals(u):\n    return {}\n", "must be a list"},
		{`universe = []` + "\ndef signals(u):\n    return {}\n", "holds 0 entries"},
		{`universe = ["A-USD"]` + "\ndef signals(u):\n    return {}\n", "SYMBOL@GRANULARITY"},
		{`universe = ["A-USD@2h"]` + "\ndef signals(u):\n    return {}\n", "granularity"},
		{`universe = ["A/B@1h"]` + "\ndef signals(u):\n    return {}\n", "not allowed"},
		{`universe = ["A@1h", "A@1h"]` + "\ndef signals(u):\n    return {}\n", "twice"},
		{`universe = ["A@1h"]` + "\nrebalance = \"hourly\"\ndef signals(u):\n    return {}\n", "is not one of"},
		{`universe = ["A@1h"]` + "\nrebalance = \"drift:1.5\"\ndef signals(u):\n    return {}\n", "drift threshold"},
		{"rebalance = \"daily\"\ndef signals(bars):\n    return {\"long\": bars.close > 1}\n", "no universe"},
	} {
		_, err := Load(bg(t), Source{Name: "t.star", Text: c.src}, Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error with %q", c.src, err, c.want)
			continue
		}
		asError(t, err, KindEntry)
	}
	for _, s := range []string{"bar", "daily", "weekly", "monthly", "drift:0.05"} {
		if _, _, err := ParseRebalance(s); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
}

func TestUniverseWeightsShapes(t *testing.T) {
	src := `universe = ["A-USD@1h", "B-USD@1h"]
def signals(u):
    return {"A-USD": u["A-USD@1h"].close > 2, "B-USD@1h": None}
`
	w, err := mustLoad(t, src, Options{}).Weights(bg(t), twoAssets(5))
	if err != nil {
		t.Fatal(err)
	}
	if got := w[0]; got[0] != 0 || got[1] != 0 || got[2] != 1 || got[4] != 1 {
		t.Errorf("A weights %v", got)
	}
	if !math.IsNaN(w[1][0]) {
		t.Errorf("None weight read %v, want NaN (no decision)", w[1][0])
	}
	// Left out: not held.
	w, err = mustLoad(t, "universe = [\"A-USD@1h\", \"B-USD@1h\"]\ndef signals(u):\n    return {\"A-USD@1h\": 1}\n", Options{}).Weights(bg(t), twoAssets(5))
	if err != nil || w[1][2] != 0 || w[0][2] != 1 {
		t.Fatalf("weights %v, %v", w, err)
	}
	for _, c := range []struct{ body, want string }{
		{`return {"C-USD": 1}`, "not in this universe"},
		{`return [1]`, "must return a dict"},
		{`return {"A-USD": "x"}`, "want a number or a series"},
		{`return {"A-USD": 1, "A-USD@1h": 1}`, "two weights"},
		{`return {"A-USD": u["A-USD"].close[0]}`, "refused"},
	} {
		src := "universe = [\"A-USD@1h\", \"B-USD@1h\"]\ndef signals(u):\n    " + c.body + "\n"
		_, err := mustLoad(t, src, Options{}).Weights(bg(t), twoAssets(5))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.body, err, c.want)
		}
	}
}

func TestUniverseRankAndTop(t *testing.T) {
	src := `universe = ["A-USD@1h", "B-USD@1h"]
def signals(u):
    r = u.rank({a: u[a].close for a in u.assets})
    top = u.top({a: u[a].close for a in u.assets}, 1)
    return {a: r[a] * 10 + top[a] for a in u.assets}
`
	w, err := mustLoad(t, src, Options{}).Weights(bg(t), twoAssets(6))
	if err != nil {
		t.Fatal(err)
	}
	// A: 1..6, B: 6..1 with no bar at 3. Bar 0: B first; bar 5: A first;
	// bar 3: A alone, first.
	want := [][]float64{{20, 20, 20, 11, 11, 11}, {11, 11, 11, math.NaN(), 20, 20}}
	for a := range want {
		for i := range want[a] {
			if !same(w[a][i], want[a][i]) {
				t.Fatalf("asset %d: %v, want %v", a, w[a], want[a])
			}
		}
	}
}

// TestUniverseLookaheadProbes: cross-asset reads of another asset's next
// bar, through a rank or a spread, are refused by rule 1 or caught by the
// proof; honest cross-asset reads pass it.
func TestUniverseLookaheadProbes(t *testing.T) {
	registerTestBuiltin(t, "peek", leakyPeek)
	assets := SmokeUniverse([]string{"A-USD@1h", "B-USD@1h", "C-USD@1h"}, 400)
	head := "universe = [\"A-USD@1h\", \"B-USD@1h\", \"C-USD@1h\"]\ndef signals(u):\n"
	for _, c := range []struct {
		name, body string
		leaks      bool
	}{
		{"honest rank", "    r = u.top({a: ta.roc(u[a].close, 5) for a in u.assets}, 1)\n    return {a: r[a] for a in u.assets}", false},
		{"honest spread", "    z = ta.sma(u[\"A-USD\"].close - u[\"B-USD\"].close, 5)\n    return {\"A-USD\": z > 0, \"B-USD\": z < 0}", false},
		{"rank of the next bar", "    r = u.top({a: peek(u[a].close) for a in u.assets}, 1)\n    return {a: r[a] for a in u.assets}", true},
		{"spread with the other asset's next bar", "    s = u[\"A-USD\"].close - peek(u[\"B-USD\"].close)\n    return {\"A-USD\": s > 0}", true},
		{"a leaked series never returned", "    x = peek(u[\"C-USD\"].close) * 2\n    return {\"A-USD\": 0.5}", true},
	} {
		s := mustLoad(t, head+c.body+"\n", Options{})
		_, tr, err := s.WeightsTrace(bg(t), assets)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		check, err := s.CheckPortfolioLookahead(bg(t), assets, tr)
		if !c.leaks {
			if err != nil || !Passed(check) {
				t.Errorf("%s: %q, %v", c.name, check, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: the proof passed (%s)", c.name, check)
			continue
		}
		e := asError(t, err, KindLookahead)
		if !strings.Contains(e.Msg, "lookahead proof") {
			t.Errorf("%s: %v", c.name, e)
		}
	}
	// Rule 1 refuses reading one bar of another asset outright.
	s := mustLoad(t, head+"    return {\"A-USD\": 1 if u[\"B-USD\"].close[0] > 1 else 0}\n", Options{})
	if _, err := s.Weights(bg(t), assets); err == nil {
		t.Fatal("reading an element of another asset's series in signals(universe) was not refused")
	} else {
		asError(t, err, KindLookahead)
	}
}

func TestValidatePortfolio(t *testing.T) {
	rep := Validate(bg(t), Source{Name: "ew.star", Text: equalWeightSrc}, Options{})
	if !rep.Valid || !Passed(rep.LookaheadCheck) {
		t.Fatalf("%+v", rep)
	}
	registerTestBuiltin(t, "peek", leakyPeek)
	leaky := "universe = [\"*-USD@1d\"]\ndef signals(u):\n    r = u.top({a: peek(u[a].close) for a in u.assets}, 1)\n    return {a: r[a] for a in u.assets}\n"
	rep = Validate(bg(t), Source{Name: "leak.star", Text: leaky}, Options{})
	if rep.Valid || len(rep.Problems) == 0 || rep.Problems[0].Kind != KindLookahead {
		t.Fatalf("a leaky portfolio validated: %+v", rep)
	}
}

// TestUniverseIndicatorsSkipGaps: an indicator over an asset with a
// missing bar skips it (never filled forward, never poisoning the values
// after it): sma(2) at bar 4 is the mean of bars 2 and 4.
func TestUniverseIndicatorsSkipGaps(t *testing.T) {
	src := "universe = [\"A-USD@1h\", \"B-USD@1h\"]\ndef signals(u):\n    return {\"B-USD\": ta.sma(u[\"B-USD\"].close, 2), \"A-USD\": ta.sma(u[\"A-USD\"].close - u[\"B-USD\"].close, 2)}\n"
	w, err := mustLoad(t, src, Options{}).Weights(bg(t), twoAssets(8))
	if err != nil {
		t.Fatal(err)
	}
	// B closes 8 7 6 _ 4 3 2 1; A closes 1..8, so A-B is -7 -5 -3 _ 1 3 5 7.
	wantB := []float64{math.NaN(), 7.5, 6.5, math.NaN(), 5, 3.5, 2.5, 1.5}
	wantA := []float64{math.NaN(), -6, -4, math.NaN(), -1, 2, 4, 6}
	for i := range wantB {
		if !same(w[1][i], wantB[i]) || !same(w[0][i], wantA[i]) {
			t.Fatalf("B %v want %v; A %v want %v", w[1], wantB, w[0], wantA)
		}
	}
}

const onBarEqualSrc = `"""equal weight, bar by bar"""
universe = ["A-USD@1h", "B-USD@1h"]
def setup(ctx):
    ctx.fast = ta.sma(ctx["A-USD"].close, 2)
def on_bar(ctx):
    for a in ctx.assets:
        ctx.target(a, 0.5)
`

// TestPortfolioOnBar: an event-driven portfolio sees the account and
// sets per-asset targets; reads are of this bar and earlier ones.
func TestPortfolioOnBar(t *testing.T) {
	src := `universe = ["A-USD@1h", "B-USD@1h"]
def setup(ctx):
    ctx.slow = ta.sma(ctx["B-USD"].close, 2)
def on_bar(ctx):
    if ctx.cash > 5000 and ctx.positions["A-USD@1h"] == 0 and ctx["A-USD"].close[0] > 2:
        ctx.target("A-USD", 0.5)
    if ctx.slow[0] != None and ctx.slow[0] < 6:
        ctx.target("B-USD@1h", -0.25)
`
	s := mustLoad(t, src, Options{})
	if s.Style() != StyleOnBar || !s.IsPortfolio() {
		t.Fatalf("style %s portfolio %v", s.Style(), s.IsPortfolio())
	}
	assets := twoAssets(8)
	st, err := s.BeginPortfolio(bg(t), assets)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	st.Record()
	acct := PortfolioAccount{Cash: 10000, Equity: 10000, Positions: []float64{0, 0}, Marks: []float64{1, 8}}
	var got [][]float64
	for i := 0; i < 8; i++ {
		if i == 5 {
			acct.Positions[0] = 1 // held: no new target for A
		}
		w, err := st.Step(i, acct)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, w)
	}
	// A closes 1..8: targeted from bar 2 while flat. B closes 8 7 6 _ 4 3 2 1:
	// its SMA of 2 (skipping the gap) is below 6 from bar 4.
	for i, w := range got {
		wantA := math.NaN()
		if i >= 2 && i < 5 {
			wantA = 0.5
		}
		wantB := math.NaN()
		if i >= 4 {
			wantB = -0.25
		}
		if !same(w[0], wantA) || !same(w[1], wantB) {
			t.Errorf("bar %d: %v, want [%v %v]", i, w, wantA, wantB)
		}
	}
	tr, ok := st.Trace()
	if !ok {
		t.Fatal("no trace")
	}
	if c, err := s.CheckPortfolioLookahead(bg(t), assets, tr); err != nil || !Passed(c) {
		t.Fatalf("lookahead: %q %v", c, err)
	}
	rep := Validate(bg(t), Source{Name: "ob.star", Text: onBarEqualSrc}, Options{})
	if !rep.Valid || !Passed(rep.LookaheadCheck) || rep.Style != StyleOnBar {
		t.Fatalf("%+v", rep)
	}
	for _, c := range []struct{ body, want string }{
		{`ctx.target("C-USD", 1)`, "not in this universe"},
		{`ctx.target("A-USD", "x")`, "want a finite number"},
		{`ctx.cash = 1`, "read-only"},
		{`x = ctx["A-USD"].close[-1]`, "future"},
	} {
		src := "universe = [\"A-USD@1h\", \"B-USD@1h\"]\ndef setup(ctx):\n    pass\ndef on_bar(ctx):\n    " + c.body + "\n"
		st, err := mustLoad(t, src, Options{}).BeginPortfolio(bg(t), assets)
		if err != nil {
			t.Fatal(err)
		}
		_, err = st.Step(0, acct)
		st.Close()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.body, err, c.want)
		}
	}
	setupTarget := "universe = [\"A-USD@1h\"]\ndef setup(ctx):\n    ctx.target(\"A-USD\", 1)\ndef on_bar(ctx):\n    pass\n"
	if _, err := mustLoad(t, setupTarget, Options{}).BeginPortfolio(bg(t), assets[:1]); err == nil || !strings.Contains(err.Error(), "call it from on_bar") {
		t.Errorf("ctx.target in setup: %v", err)
	}
}

// TestPortfolioOnBarLookahead: a leaked read of another asset's next bar
// in setup is caught by the proof's prefix runs.
func TestPortfolioOnBarLookahead(t *testing.T) {
	registerTestBuiltin(t, "peek", leakyPeek)
	src := `universe = ["A-USD@1h", "B-USD@1h", "C-USD@1h"]
def setup(ctx):
    ctx.next_c = peek(ctx["C-USD"].close)
def on_bar(ctx):
    if ctx.next_c[0] != None and ctx.next_c[0] > ctx["C-USD"].close[0]:
        ctx.target("A-USD", 1)
    else:
        ctx.target("A-USD", 0)
`
	rep := Validate(bg(t), Source{Name: "leak.star", Text: src}, Options{})
	if rep.Valid || len(rep.Problems) == 0 || rep.Problems[0].Kind != KindLookahead {
		t.Fatalf("a leaky on_bar portfolio validated: %+v", rep)
	}
}

// TestUniverseCrossSkipsGaps: a cross compares an asset's bar with its
// previous bar, across a gap in the calendar: B's close falls through 6.5
// between bar 2 (6) and bar 4 (4)... and A's rises through B's there.
func TestUniverseCrossSkipsGaps(t *testing.T) {
	src := "universe = [\"A-USD@1h\", \"B-USD@1h\"]\ndef signals(u):\n    return {\"A-USD\": ta.cross_above(u[\"A-USD\"].close, u[\"B-USD\"].close)}\n"
	w, err := mustLoad(t, src, Options{}).Weights(bg(t), twoAssets(8))
	if err != nil {
		t.Fatal(err)
	}
	// A 1..8 against B 8 7 6 _ 4 3 2 1: A-B is -7 -5 -3 _ 1 3 5 7, so A
	// crosses above B at bar 4, from bar 2 across the gap.
	for i, f := range w[0] {
		want := 0.0
		switch i {
		case 0:
			want = math.NaN()
		case 3:
			want = math.NaN()
		case 4:
			want = 1
		}
		if !same(f, want) {
			t.Fatalf("cross %v: bar %d is %v, want %v", w[0], i, f, want)
		}
	}
}
