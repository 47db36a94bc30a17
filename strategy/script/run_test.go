package script

import (
	"context"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"wicket/strategy"
)

// TestOnBar drives setup and on_bar from Go: warm-up bars are skipped,
// ctx reads the current bar, the account is what the caller passes, and
// each intent is what on_bar asked for.
func TestOnBar(t *testing.T) {
	src := `
def setup(ctx):
    ctx.s = ta.sma(ctx.close, 3)
    ctx.seen = []
    if ctx.index != None or ctx.close[0] != None or ctx.bar.close != None:
        fail("setup sees a current bar")
    if len(ctx.close) != 0:
        fail("history before the first bar")

def on_bar(ctx):
    ctx.seen.append(ctx.index)
    if ctx.s[0] == None:
        fail("on_bar called inside the warm-up")
    if ctx.close[0] != ctx.bar.close or ctx.close[1] != ctx.bar.close - 1 or ctx.bar.time != 1704067200 + 3600 * ctx.index:
        fail("ctx.bar disagrees with the series")
    if len(ctx.close) != ctx.index + 1:
        fail("len is the history so far")
    if ctx.position != ctx.index or ctx.cash != 100 - ctx.index or ctx.equity != 100:
        fail("account not passed through")
    i = ctx.index
    if i == 3:
        ctx.target(0.5)
    elif i == 4:
        ctx.buy(2)
        ctx.buy(1)
    elif i == 5:
        ctx.sell(3)
    elif i == 6:
        ctx.flat()
    elif i == 7:
        ctx.target(1)
        ctx.buy(1.5)
    elif i == 8:
        ctx.buy(1)
        ctx.target(-0.25)
    if i == 9 and ctx.seen != [2, 3, 4, 5, 6, 7, 8, 9]:
        fail("seen %s" % ctx.seen)
`
	s := mustLoad(t, src, Options{})
	if s.Style() != StyleOnBar {
		t.Fatalf("style %s", s.Style())
	}
	st, err := s.Begin(bg(t), rampBars(10))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if st.Warmup() != 2 {
		t.Fatalf("warm-up %d, want 2 (sma 3)", st.Warmup())
	}
	var got []strategy.Intent
	for i := 0; i < 10; i++ {
		in, err := st.Step(i, strategy.Account{Position: float64(i), Cash: float64(100 - i), Equity: 100})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, in)
	}
	want := []strategy.Intent{{}, {}, {}, {Kind: strategy.Target, Value: 0.5}, {Kind: strategy.Qty, Value: 3},
		{Kind: strategy.Qty, Value: -3}, {Kind: strategy.Target, Value: 0}, {Kind: strategy.Qty, Value: 1.5},
		{Kind: strategy.Target, Value: -0.25}, {}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("intents (-want +got):\n%s", diff)
	}
	if _, err := st.Step(10, strategy.Account{}); err == nil {
		t.Fatal("a bar past the end was accepted")
	}
	if s.Warmup() != 2 {
		t.Fatalf("strategy warm-up %d", s.Warmup())
	}
}

func TestCtxErrors(t *testing.T) {
	for _, tc := range []struct {
		setup, onBar string
		kind         Kind
		want         string
		phase        string
	}{
		{"ctx.position = 1", "pass", KindRuntime, "ctx.position is provided by wicket and read-only", "setup"},
		{"ctx.target(1)", "pass", KindRuntime, "ctx.target is an order intent: call it from on_bar, not setup", "setup"},
		{"pass", `ctx.target("all")`, KindRuntime, "want a finite number", "on_bar"},
		{"pass", `ctx.target(float("nan"))`, KindRuntime, "want a finite number", "on_bar"},
		{"pass", "ctx.buy(0)", KindRuntime, "want a positive quantity", "on_bar"},
		{"pass", "ctx.sell(-1)", KindRuntime, "want a positive quantity", "on_bar"},
		{"pass", "ctx.flat(1)", KindRuntime, "got 1 arguments, want 0", "on_bar"},
		{"pass", "x = ctx.nosuch", KindRuntime, "has no .nosuch field", "on_bar"},
		{"pass", "x = ctx.close[-1]", KindLookahead, "into the future", "on_bar"},
		{"pass", "x = ctx.close[1] > 0", KindRuntime, "not implemented", "on_bar"},
	} {
		src := "def setup(ctx):\n    " + tc.setup + "\ndef on_bar(ctx):\n    " + tc.onBar + "\n"
		s := mustLoad(t, src, Options{})
		st, err := s.Begin(bg(t), rampBars(5))
		if err == nil {
			_, err = st.Step(0, strategy.Account{})
			st.Close()
		}
		e := asError(t, err, tc.kind)
		if !strings.Contains(e.Msg, tc.want) || e.Phase != tc.phase {
			t.Errorf("%s / %s: %q in %q, want %q in %s", tc.setup, tc.onBar, e.Msg, e.Phase, tc.want, tc.phase)
		}
		if tc.phase == "on_bar" && e.Bar != 0 {
			t.Errorf("%s: bar %d, want 0", tc.onBar, e.Bar)
		}
		if e.Line == 0 {
			t.Errorf("%s / %s: no line", tc.setup, tc.onBar)
		}
	}
}

// TestStepperStopsAfterError: a failed on_bar ends the run.
func TestStepperStopsAfterError(t *testing.T) {
	s := mustLoad(t, "def setup(ctx):\n    pass\ndef on_bar(ctx):\n    if ctx.index == 2:\n        fail(\"bar two\")\n", Options{})
	st, err := s.Begin(bg(t), rampBars(5))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for i := 0; i < 2; i++ {
		if _, err := st.Step(i, strategy.Account{}); err != nil {
			t.Fatal(err)
		}
	}
	_, err = st.Step(2, strategy.Account{})
	e := asError(t, err, KindRuntime)
	if e.Bar != 2 || e.Line != 5 || !strings.Contains(e.Error(), "(in on_bar at bar 2)") {
		t.Fatalf("%v", e)
	}
	if _, err2 := st.Step(3, strategy.Account{}); err2 != err {
		t.Fatalf("after a failure: %v", err2)
	}
}

func TestSignalsResult(t *testing.T) {
	run := func(ret string) (strategy.Signals, error) {
		s := mustLoad(t, "def signals(bars):\n    up = bars.close > 5\n    return "+ret+"\n", Options{})
		return s.Signals(bg(t), rampBars(8))
	}
	sig, err := run(`{"long": up, "exit": ~up, "size": ta.nz(ta.sma(bars.close, 2) / 10)}`)
	if err != nil {
		t.Fatal(err)
	}
	want := strategy.Signals{
		Long: []bool{false, false, false, false, false, true, true, true},
		Exit: []bool{true, true, true, true, true, false, false, false},
		Size: []float64{0, 0.15, 0.25, 0.35, 0.45, 0.55, 0.65, 0.75},
	}
	if diff := cmp.Diff(want, sig, cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-12 })); diff != "" {
		t.Fatalf("signals (-want +got):\n%s", diff)
	}
	sig, err = run(`{"short": ~up, "size": 0.5}`)
	if err != nil || sig.Long != nil || sig.Short[5] || !sig.Short[0] || len(sig.Size) != 1 || sig.Size[0] != 0.5 {
		t.Fatalf("%+v %v", sig, err)
	}
	sig, err = run(`{"long": True}`)
	if err != nil || len(sig.Long) != 8 || !sig.Long[3] || sig.Exit != nil || sig.Size != nil {
		t.Fatalf("%+v %v", sig, err)
	}
	for ret, want := range map[string]string{
		`up`:                        "returned bool series; it must return a dict",
		`{"exit": up}`:              "neither \"long\" nor \"short\"",
		`{"long": up, "buy": up}`:   `unknown key "buy"`,
		`{1: up}`:                   "with key 1",
		`{"long": [True]}`:          "is a list; want a bool series",
		`{"long": "yes"}`:           "is a string",
		`{"long": up, "size": "x"}`: "want a number or a series",
		`{"long": up, "size": 1/0.0 if False else float("inf")}`: "is infinite at bar 0",
	} {
		_, err := run(ret)
		e := asError(t, err, KindResult)
		if !strings.Contains(e.Msg, want) || e.Line != 1 {
			t.Errorf("return %s: %q at line %d, want %q at the def", ret, e.Msg, e.Line, want)
		}
	}
}

// TestSignalsThroughFlags: runs through one Flags give the signals runs
// without give, in every way a flag column is written (the fused crosses,
// a lone cross, a bool series, a constant), and a later run writes into
// the columns of the run before instead of allocating.
func TestSignalsThroughFlags(t *testing.T) {
	src := `
n = param.int("n", 2, min=2, max=5)
def signals(bars):
    f, s = ta.sma(bars.close, n), ta.sma(bars.close, n + 2)
    return {"long": ta.cross_above(f, s), "exit": ta.cross_below(f, s), "short": bars.close > 40 + n, "size": 1.0}
`
	bars := rampBars(64)
	for k := range 64 { // a zigzag, so the averages cross both ways
		bars.Close[k] = 50 + 10*math.Sin(float64(k)/3)
	}
	fl := &Flags{}
	var first *bool
	for _, n := range []int64{2, 4, 3} {
		want, err := mustLoad(t, src, Options{Overrides: map[string]any{"n": n}}).Signals(bg(t), bars)
		if err != nil {
			t.Fatal(err)
		}
		got, err := mustLoad(t, src, Options{Overrides: map[string]any{"n": n}, Flags: fl}).Signals(bg(t), bars)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("n=%d through Flags (-without +with):\n%s", n, diff)
		}
		if !slices.Contains(want.Long, true) || !slices.Contains(want.Exit, true) {
			t.Fatalf("n=%d: no crosses to compare: %+v", n, want)
		}
		if first == nil {
			first = &got.Long[0]
		} else if &got.Long[0] != first && &got.Exit[0] != first && &got.Short[0] != first {
			t.Errorf("n=%d: the run allocated new columns instead of reusing the last run's", n)
		}
	}
	lone := `
def signals(bars):
    return {"long": ta.cross_above(bars.close, ta.sma(bars.close, 3)), "exit": True}
`
	want, err := mustLoad(t, lone, Options{}).Signals(bg(t), bars)
	if err != nil {
		t.Fatal(err)
	}
	got, err := mustLoad(t, lone, Options{Flags: fl}).Signals(bg(t), bars)
	if err != nil || !cmp.Equal(want, got) {
		t.Errorf("a lone cross and a constant through Flags: %v\n%v\n%v", err, want, got)
	}
}

// TestStepCaps: an endless loop in any phase stops at that phase's cap,
// naming the limit and the line of the loop.
func TestStepCaps(t *testing.T) {
	loop := "    n = 0\n    while True:\n        n += 1\n"
	lim := Limits{TopSteps: 20000, SignalsSteps: 20000, SetupSteps: 20000, BarSteps: 5000}
	for _, tc := range []struct {
		name, src string
		line      int
		phase     string
	}{
		{"top level", "n = 0\nwhile True:\n    n += 1\ndef signals(bars):\n    return {}\n", 3, "the top level"},
		{"signals", "def signals(bars):\n" + loop, 4, "signals"},
		{"setup", "def setup(ctx):\n" + loop + "def on_bar(ctx):\n    pass\n", 4, "setup"},
		{"on_bar", "def setup(ctx):\n    pass\ndef on_bar(ctx):\n" + loop, 6, "on_bar"},
		{"in a helper", "def spin():\n" + loop + "def signals(bars):\n    spin()\n", 4, "signals"},
	} {
		s, err := Load(bg(t), Source{Name: "t.star", Text: tc.src}, Options{Limits: lim})
		if err == nil {
			switch s.Style() {
			case StyleSignals:
				_, err = s.Signals(bg(t), rampBars(5))
			default:
				var st *Stepper
				if st, err = s.Begin(bg(t), rampBars(5)); err == nil {
					_, err = st.Step(0, strategy.Account{})
					st.Close()
				}
			}
		}
		e := asError(t, err, KindLimit)
		if e.Line != tc.line || e.Phase != tc.phase || !strings.Contains(e.Msg, "exceeded the step limit of") {
			t.Errorf("%s: %v (line %d), want the step limit at line %d in %s", tc.name, e, e.Line, tc.line, tc.phase)
		}
	}
}

func TestWallClockAndCancel(t *testing.T) {
	endless := "def setup(ctx):\n    pass\ndef on_bar(ctx):\n    n = 0\n    while True:\n        n += 1\n"
	huge := Limits{BarSteps: 1 << 62}
	s := mustLoad(t, endless, Options{Limits: Limits{BarSteps: 1 << 62, Wall: 50 * time.Millisecond}})
	st, err := s.Begin(bg(t), rampBars(3))
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.Step(0, strategy.Account{})
	st.Close()
	e := asError(t, err, KindLimit)
	if !strings.Contains(e.Msg, "wall-clock limit of 50ms") || e.Line < 3 || e.Phase != "on_bar" {
		t.Fatalf("%v", e)
	}

	s = mustLoad(t, endless, Options{Limits: huge})
	ctx, cancel := context.WithCancel(context.Background())
	st, err = s.Begin(ctx, rampBars(3))
	if err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(20*time.Millisecond, cancel)
	_, err = st.Step(0, strategy.Account{})
	st.Close()
	asError(t, err, KindCanceled)

	// An already-cancelled context stops a run before it starts.
	if _, err := Load(ctx, Source{Name: "t.star", Text: "def signals(b):\n    return {}\n"}, Options{}); err == nil {
		t.Fatal("load with a cancelled context")
	}
}

// TestPrintCaptured: print goes to Output, never to stdout.
func TestPrintCaptured(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stdout
	os.Stdout = w
	s, lerr := Load(bg(t), Source{Name: "t.star", Text: "print('top', 1)\ndef signals(bars):\n    print('bars', bars.close)\n    return {'long': True}\n"}, Options{})
	if lerr == nil {
		_, lerr = s.Signals(bg(t), rampBars(4))
	}
	os.Stdout = saved
	w.Close()
	leaked, _ := io.ReadAll(r)
	if lerr != nil {
		t.Fatal(lerr)
	}
	if len(leaked) > 0 {
		t.Fatalf("stdout got %q", leaked)
	}
	if got := s.Output(); got != "top 1\nbars series\n" {
		t.Fatalf("output %q", got)
	}
	// The capture is bounded.
	s = mustLoad(t, "for i in range(1000):\n    print('x' * 100)\ndef signals(bars):\n    return {'long': True}\n", Options{PrintLimit: 1000})
	if out := s.Output(); len(out) > 1100 || !strings.HasSuffix(out, "(print output truncated)\n") {
		t.Fatalf("bounded output: %d bytes, %q", len(out), out[len(out)-40:])
	}
}

// TestConcurrentRuns: one Strategy serves concurrent runs (the race
// detector checks the sharing).
func TestConcurrentRuns(t *testing.T) {
	s := mustLoad(t, "def signals(bars):\n    f = ta.ema(bars.close, 5)\n    return {'long': ta.cross_above(bars.close, f), 'exit': bars.close < f}\n", Options{})
	bars := SmokeBars(500)
	want, err := s.Signals(bg(t), bars)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := s.Signals(bg(t), bars)
			if err != nil || !cmp.Equal(got, want) {
				t.Errorf("concurrent run differs: %v", err)
			}
		}()
	}
	wg.Wait()
}

// TestLongMessagesClipped: a strategy cannot make its error as long as it
// likes (fail with a huge text, a huge value in a knob error): the message
// is cut at MaxMessageBytes, on a rune boundary, saying so.
func TestLongMessagesClipped(t *testing.T) {
	for _, src := range []string{
		"def signals(bars):\n    fail('é' * 3000000)\n",
		"x = param.int('n', " + "'" + strings.Repeat("z", 100000) + "')\ndef signals(bars):\n    return {'long': bars.close > 1}\n",
		"def setup(ctx):\n    pass\ndef on_bar(ctx):\n    fail('boom ' * 100000)\n",
	} {
		rep := Validate(bg(t), Source{Name: "long.star", Text: src}, Options{})
		if rep.Valid || len(rep.Problems) != 1 {
			t.Fatalf("%.60s: %+v", src, rep.Valid)
		}
		m := rep.Problems[0].Message
		if len(m) > MaxMessageBytes+200 || !strings.Contains(m, "more bytes of this message cut") || !utf8.ValidString(m) {
			t.Errorf("%.60s: a message of %d bytes (%q...)", src, len(m), m[:min(len(m), 80)])
		}
	}
}
