package script

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"wicket/strategy"
	"wicket/strategy/ta"
)

const knobSrc = `"""Knobs of every type."""
fast = param.int("fast", 10, min=2, max=200, step=1, doc="fast length")
size = param.float("size", 0.5, min=0.0, max=1.0, step=0.05, doc="size")
short = param.bool("short", False, doc="allow shorts")
mode = param.choice("mode", "sma", choices=["sma", "ema"], doc="average kind")
free = param.float("free", -1.5)
seen = (fast, size, short, mode, free)

def signals(bars):
    return {"long": bars.close > 0}
`

func TestKnobs(t *testing.T) {
	s := mustLoad(t, knobSrc, Options{})
	f := func(v float64) *float64 { return &v }
	want := []Knob{
		{Name: "fast", Type: KnobInt, Default: int64(10), Min: f(2), Max: f(200), Step: f(1), Doc: "fast length"},
		{Name: "size", Type: KnobFloat, Default: 0.5, Min: f(0), Max: f(1), Step: f(0.05), Doc: "size"},
		{Name: "short", Type: KnobBool, Default: false, Doc: "allow shorts"},
		{Name: "mode", Type: KnobChoice, Default: "sma", Choices: []string{"sma", "ema"}, Doc: "average kind"},
		{Name: "free", Type: KnobFloat, Default: -1.5},
	}
	if diff := cmp.Diff(want, s.Knobs()); diff != "" {
		t.Fatalf("knobs (-want +got):\n%s", diff)
	}
	if s.Summary() != "Knobs of every type." {
		t.Fatalf("summary %q", s.Summary())
	}
	// JSON keeps the Go types of defaults.
	b, _ := json.Marshal(s.Knobs())
	var back []Knob
	if err := json.Unmarshal(b, &back); err != nil || !cmp.Equal(back, want) {
		t.Fatalf("JSON round trip: %v\n%s", err, cmp.Diff(want, back))
	}
	// Overrides of every shape a caller sends: JSON numbers, CLI strings.
	s = mustLoad(t, knobSrc, Options{Overrides: map[string]any{"fast": 20.0, "size": "0.25", "short": "true", "mode": "ema", "free": 3}})
	got := s.Values()
	if diff := cmp.Diff(map[string]any{"fast": int64(20), "size": 0.25, "short": true, "mode": "ema", "free": 3.0}, got); diff != "" {
		t.Fatalf("values (-want +got):\n%s", diff)
	}
	for ov, msg := range map[string]string{
		`{"fast": 201}`:    "knob fast: 201 is out of range; allowed: a whole number in [2, 200]",
		`{"fast": 2.5}`:    "knob fast: 2.5 is not a whole number",
		`{"fast": "ten"}`:  `knob fast: "ten" is not a number`,
		`{"fast": true}`:   "knob fast: true (bool) is not a number",
		`{"size": -0.1}`:   "knob size: -0.1 is out of range; allowed: a number in [0, 1]",
		`{"short": 1}`:     "knob short: 1 is not true or false",
		`{"short": "yes"}`: `knob short: "yes" is not true or false`,
		`{"mode": "wma"}`:  `knob mode: "wma" is not a choice; allowed: one of sma, ema`,
		`{"slow": 5}`:      `unknown knob "slow"; this strategy's knobs are: fast, size, short, mode, free`,
	} {
		var m map[string]any
		json.Unmarshal([]byte(ov), &m)
		_, err := Load(bg(t), Source{Name: "t.star", Text: knobSrc}, Options{Overrides: m})
		e := asError(t, err, KindKnob)
		if !strings.Contains(e.Msg, msg) {
			t.Errorf("%s: %q, want %q", ov, e.Msg, msg)
		}
	}
}

func TestKnobDeclarationErrors(t *testing.T) {
	for src, msg := range map[string]string{
		`param.int("a", 1)` + "\n" + `param.int("a", 2)`: `knob "a" is declared twice`,
		`param.int("a", 1.5)`:                            "default 1.5 of int knob \"a\" must be an int",
		`param.int("a", 1, min=5, max=2)`:                "has min 5 above max 2",
		`param.int("a", 10, max=5)`:                      "default of knob \"a\" is outside its own range",
		`param.float("a", 1.0, step=0)`:                  "step of knob \"a\" must be positive",
		`param.float("a", "x")`:                          "default \"x\" of knob \"a\" must be a number",
		`param.bool("a", 1)`:                             "must be True or False",
		`param.choice("a", "x", choices=["y", "z"])`:     "is not one of its choices",
		`param.choice("a", "y", choices=["y", "y"])`:     "listed twice",
		`param.int("not a name", 1)`:                     "must be an identifier",
		`param.int("a", 1, mn=0)`:                        "unexpected keyword argument \"mn\"",
		"def f():\n    return param.int(\"a\", 1)\ndef g(b):\n    return f()\nx = 1": "",
	} {
		full := src + "\ndef signals(bars):\n    return {'long': True}\n"
		_, err := Load(bg(t), Source{Name: "t.star", Text: full}, Options{})
		if msg == "" {
			if err != nil {
				t.Errorf("%s: %v", src, err)
			}
			continue
		}
		e := asError(t, err, KindKnob)
		if !strings.Contains(e.Msg, msg) || e.Line == 0 {
			t.Errorf("%s: %q at line %d, want %q", src, e.Msg, e.Line, msg)
		}
	}
	// Knobs belong to the top level: declaring one in a run is an error.
	s := mustLoad(t, "def signals(bars):\n    x = param.int('late', 1)\n    return {'long': True}\n", Options{})
	_, err := s.Signals(bg(t), rampBars(3))
	if e := asError(t, err, KindKnob); !strings.Contains(e.Msg, "declared at the top level") {
		t.Fatal(e)
	}
}

func TestCheckOverridesAndAssignments(t *testing.T) {
	s := mustLoad(t, knobSrc, Options{})
	ov, err := ParseAssignments([]string{"fast=12", "mode=ema", "free=-2"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := CheckOverrides(s.Knobs(), ov)
	if err != nil || !cmp.Equal(got, map[string]any{"fast": int64(12), "mode": "ema", "free": -2.0}) {
		t.Fatalf("%v %v", got, err)
	}
	for _, bad := range [][]string{{"fast"}, {"=3"}, {"fast=1", "fast=2"}} {
		if _, err := ParseAssignments(bad); err == nil {
			t.Errorf("ParseAssignments(%q) accepted", bad)
		}
	}
}

func TestEntryPoints(t *testing.T) {
	for src, msg := range map[string]string{
		"x = 1": "no entry point",
		"def signals(bars):\n    pass\ndef setup(ctx):\n    pass\ndef on_bar(ctx):\n    pass": "defines both",
		"def setup(ctx):\n    pass":                                "defines setup(ctx) but no on_bar(ctx)",
		"def on_bar(ctx):\n    pass":                               "no setup(ctx)",
		"def signals():\n    pass":                                 "signals must take exactly one argument (bars), not 0",
		"def signals(bars, extra):\n    pass":                      "not 2",
		"def signals(*bars):\n    pass":                            "exactly one argument",
		"def setup(ctx):\n    pass\ndef on_bar(ctx, i):\n    pass": "on_bar must take exactly one argument (ctx)",
		"signals = 3": "signals is a int, not a function",
	} {
		_, err := Load(bg(t), Source{Name: "t.star", Text: src + "\n"}, Options{})
		e := asError(t, err, KindEntry)
		if !strings.Contains(e.Msg, msg) || e.Line == 0 && !strings.Contains(msg, "is a") {
			t.Errorf("%q: %v, want %q with a line", src, e, msg)
		}
	}
	s := mustLoad(t, "def signals(bars):\n    return {'long': True}\n", Options{})
	if _, err := s.Begin(bg(t), rampBars(3)); err == nil {
		t.Fatal("Begin on a signals strategy")
	}
}

func TestCompileErrors(t *testing.T) {
	rep := Validate(bg(t), Source{Name: "t.star", Text: "x = y\nz = w + 1\ndef signals(bars):\n    return {'long': q}\n"}, Options{})
	if rep.Valid || len(rep.Problems) != 3 {
		t.Fatalf("%+v", rep)
	}
	for i, want := range []Problem{{Kind: KindSyntax, File: "t.star", Line: 1, Column: 5, Message: "undefined: y"},
		{Kind: KindSyntax, File: "t.star", Line: 2, Column: 5, Message: "undefined: w"},
		{Kind: KindSyntax, File: "t.star", Line: 4, Column: 21, Message: "undefined: q"}} {
		got := rep.Problems[i]
		got.Hint = ""
		if got != want {
			t.Errorf("problem %d: %+v, want %+v", i, got, want)
		}
	}
	for src, msg := range map[string]string{
		"class A:\n    pass\n":         "got class",
		"def f():\n  try:\n    pass\n": "got try",
		"x = f\"{1}\"\n":               "",
		"import os\n":                  "got import",
		"x = (((((((((\n":              "want",
		"x = " + strings.Repeat("(", 2000) + "1" + strings.Repeat(")", 2000) + "\n": "excessive nesting",
	} {
		_, err := Load(bg(t), Source{Name: "t.star", Text: src}, Options{})
		e := asError(t, err, KindSyntax)
		if !strings.Contains(e.Msg, msg) || e.Line == 0 {
			t.Errorf("%.40q: %v, want %q", src, e, msg)
		}
	}
}

var indicatorsFS = fstest.MapFS{
	"mid.star":        {Data: []byte("\"\"\"Midpoints.\"\"\"\ndef mid(bars):\n    \"\"\"(high + low) / 2\"\"\"\n    return (bars.high + bars.low) / 2\ndef smooth_mid(bars, n=3):\n    return ta.sma(mid(bars), n)\ndef _helper():\n    pass\n")},
	"broken.star":     {Data: []byte("def f(bars):\n    return bars.close[-1]\n")},
	"knob.star":       {Data: []byte("n = param.int('n', 3)\n")},
	"a.star":          {Data: []byte("load('indicators/b', 'g')\ndef f():\n    return 1\n")},
	"b.star":          {Data: []byte("load('indicators/a', 'f')\ndef g():\n    return 2\n")},
	"syntax.star":     {Data: []byte("def f(:\n")},
	"not a name.star": {Data: []byte("x = 1\n")},
}

func TestUserIndicators(t *testing.T) {
	use := func(load, expr string) error {
		src := load + "\ndef setup(bars):\n    pass\ndef on_bar(bars):\n    x = " + expr + "\n"
		s, err := Load(bg(t), Source{Name: "s.star", Text: src}, Options{Indicators: indicatorsFS})
		if err != nil {
			return err
		}
		st, err := s.Begin(bg(t), rampBars(10))
		if err != nil {
			return err
		}
		defer st.Close()
		_, err = st.Step(9, strategy.Account{})
		return err
	}
	if err := use(`load("indicators/mid", "mid", "smooth_mid")`, `[mid(bars)[0], smooth_mid(bars)[0]] == [10.0, 9.0] or fail("values")`); err != nil {
		t.Fatal(err)
	}
	if err := use(`load("indicators/mid.star", m = "mid")`, `m(bars)`); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		load, expr string
		kind       Kind
		file, want string
	}{
		{`load("indicators/broken", "f")`, `f(bars)`, KindLookahead, "indicators/broken.star", "into the future"},
		{`load("indicators/knob", "n")`, `n`, KindSyntax, "indicators/knob.star", "undefined: param"},
		{`load("indicators/a", "f")`, `f()`, KindLoad, "indicators/b.star", `indicator "a" loads itself`},
		{`load("indicators/syntax", "f")`, `f()`, KindSyntax, "indicators/syntax.star", "want"},
		{`load("indicators/missing", "f")`, `f()`, KindLoad, "s.star", `no indicator "missing"`},
		{`load("indicators/../secrets", "f")`, `f()`, KindLoad, "s.star", "invalid indicator name"},
		{`load("os", "f")`, `f()`, KindLoad, "s.star", `load("os") is not allowed`},
		{`load("strategies/other", "f")`, `f()`, KindLoad, "s.star", "is not allowed"},
		{`load("indicators/mid", "nope")`, `nope()`, KindRuntime, "s.star", "nope"},
	} {
		err := use(tc.load, tc.expr)
		e := asError(t, err, tc.kind)
		if e.File != tc.file || !strings.Contains(e.Msg, tc.want) || e.Line == 0 {
			t.Errorf("%s: %v (file %s), want %q in %s", tc.load, e, e.File, tc.want, tc.file)
		}
	}
	// Without an indicators directory, a load is a clear error.
	_, err := Load(bg(t), Source{Name: "s.star", Text: "load('indicators/mid', 'mid')\ndef signals(b):\n    return {}\n"}, Options{})
	if e := asError(t, err, KindLoad); !strings.Contains(e.Msg, "no indicators directory") {
		t.Fatal(e)
	}
}

func TestListIndicators(t *testing.T) {
	got, err := ListIndicators(indicatorsFS)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, u := range got {
		names = append(names, u.Name)
		if !u.UserDefined {
			t.Errorf("%s: not marked user-defined", u.Name)
		}
	}
	if !cmp.Equal(names, []string{"a", "b", "broken", "knob", "mid", "syntax"}) {
		t.Fatalf("names %v (invalid file names are skipped)", names)
	}
	mid := got[4]
	want := UserIndicator{Name: "mid", UserDefined: true, Summary: "Midpoints.", Load: `load("indicators/mid", "mid", "smooth_mid")`,
		Functions: []UserFunc{{Name: "mid", Params: []string{"bars"}, Summary: "(high + low) / 2"}, {Name: "smooth_mid", Params: []string{"bars", "n="}}}}
	if diff := cmp.Diff(want, mid); diff != "" {
		t.Fatalf("mid (-want +got):\n%s", diff)
	}
	if got[5].Problem == "" {
		t.Fatal("a syntax error is not reported")
	}
	if l, err := ListIndicators(fstest.MapFS{}); err != nil || len(l) != 0 {
		t.Fatalf("empty: %v %v", l, err)
	}
}

// TestMemoAcrossLoads is the sweep's guarantee: loads that differ only in
// knobs that do not feed an indicator reuse its result, and the memo's
// counter proves it.
func TestMemoAcrossLoads(t *testing.T) {
	src := `
fast = param.int("fast", 10, min=2, max=100)
slow = param.int("slow", 30, min=3, max=300)
size = param.float("size", 1.0, min=0.0, max=1.0)
def signals(bars):
    f = ta.sma(bars.close, fast)
    s = ta.sma(bars.close, slow)
    spread = (f - s) / s
    return {"long": ta.cross_above(f, s), "exit": spread < -0.01, "size": size}
`
	memo := ta.NewMemo(0)
	bars := SmokeBars(2000)
	var first []bool
	for i := 0; i < 20; i++ {
		s := mustLoad(t, src, Options{Memo: memo, Overrides: map[string]any{"size": float64(i) / 20}})
		sig, err := s.Signals(bg(t), bars)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = sig.Long
		} else if !cmp.Equal(first, sig.Long) {
			t.Fatal("a cached run differs")
		}
	}
	st := memo.Stats()
	// A cross handed straight to the engine becomes flags (lazyCross): no
	// column of it is ever computed or cached.
	if st.Computed["sma"] != 2 || st.Computed["cross_above"] != 0 || st.Computed["series-"] != 1 {
		t.Fatalf("20 runs differing only in size: computed %v, want each indicator once and no cross column", st.Computed)
	}
	// A knob that feeds an indicator computes what changed, and only that.
	s := mustLoad(t, src, Options{Memo: memo, Overrides: map[string]any{"fast": 12}})
	if _, err := s.Signals(bg(t), bars); err != nil {
		t.Fatal(err)
	}
	if got := memo.Stats().Computed["sma"]; got != 3 {
		t.Fatalf("new fast: sma computed %d times in all, want 3", got)
	}
	// Other bars (same length, other values) are other inputs.
	other := SmokeBars(2000)
	other.Close = append([]float64(nil), other.Close...)
	other.Close[0]++
	if _, err := s.Signals(bg(t), other); err != nil {
		t.Fatal(err)
	}
	if got := memo.Stats().Computed["sma"]; got != 5 {
		t.Fatalf("new bars: sma computed %d times in all, want 5", got)
	}
}

func TestWarmup(t *testing.T) {
	for src, want := range map[string]int{
		"return {'long': bars.close > 0}":                                                0,
		"return {'long': bars.close > ta.sma(bars.close, 20)}":                           19,
		"return {'long': ta.sma(ta.rsi(bars.close, 14), 10) > 50}":                       23,
		"return {'long': ta.cross_above(ta.ema(bars.close, 5), ta.ema(bars.close, 50))}": 50,
		"m = ta.macd(bars.close)\n    return {'long': m.hist > 0}":                       33,
		"return {'long': ta.shift(ta.highest(bars.high, 20), 1) < bars.close}":           20,
		"return {'long': ta.sma(bars.close, 3000) > 0}":                                  2999,
	} {
		s := mustLoad(t, "def signals(bars):\n    "+src+"\n", Options{})
		if _, err := s.Signals(bg(t), SmokeBars(1000)); err != nil {
			t.Fatal(err)
		}
		if s.Warmup() != want {
			t.Errorf("%s: warm-up %d, want %d", src, s.Warmup(), want)
		}
	}
	rep := Validate(bg(t), Source{Name: "t.star", Text: "\"\"\"Long.\"\"\"\ndef signals(bars):\n    return {'long': ta.sma(bars.close, 3000) > 0}\n"}, Options{})
	if !rep.Valid || rep.Warmup != 2999 || len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], "longer than the 1000-bar smoke series") {
		t.Fatalf("%+v", rep)
	}
}

// TestSmokeBars: the validation series is fixed, so reports are reproducible.
func TestSmokeBars(t *testing.T) {
	a, b := SmokeBars(300), SmokeBars(300)
	if !cmp.Equal(a, b) {
		t.Fatal("SmokeBars is not deterministic")
	}
	for i := 0; i < 300; i++ {
		if !(a.Low[i] <= a.Open[i] && a.Open[i] <= a.High[i] && a.Low[i] <= a.Close[i] && a.Close[i] <= a.High[i] && a.Close[i] > 0) {
			t.Fatalf("bar %d is not a valid OHLC bar", i)
		}
	}
}

// TestBarKeysShareColumnKeys: strategies loaded with one BarKeys over the
// same bars share their indicator results exactly as without it, and
// bars of other contents never take another's key.
func TestBarKeysShareColumnKeys(t *testing.T) {
	src := Source{Name: "s.star", Text: "def signals(bars):\n    return {\"long\": ta.sma(bars.close, 5) > ta.sma(bars.close, 10)}\n"}
	memo := ta.NewMemo(0)
	keys := &BarKeys{}
	a := SmokeBars(500)
	b := SmokeBars(500)
	for i := range b.Close {
		b.Close[i] *= 1.5 // other contents, other backing arrays
	}
	run := func(bars strategy.Bars, k *BarKeys) []bool {
		s, err := Load(context.Background(), src, Options{Memo: memo, BarKeys: k})
		if err != nil {
			t.Fatal(err)
		}
		sig, err := s.Signals(context.Background(), bars)
		if err != nil {
			t.Fatal(err)
		}
		return sig.Long
	}
	wantA, wantB := run(a, nil), run(b, nil)
	for range 2 {
		if got := run(a, keys); !slices.Equal(got, wantA) {
			t.Fatal("bars a with BarKeys differ")
		}
		if got := run(b, keys); !slices.Equal(got, wantB) {
			t.Fatal("bars b with BarKeys differ: another bars' key was used")
		}
	}
	if n := len(keys.keys); n != 2 {
		t.Errorf("%d column keys for two bars' close columns", n)
	}
}
