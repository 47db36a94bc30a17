package script

import (
	"os"
	"strings"
	"testing"

	"go.starlark.net/starlark"

	"wicket/strategy"
)

// trustTestBuiltin registers a test builtin the chained proof treats as
// one of wicket's own reads: a leak in it is a hole in rule 1, which the
// chained proof must still catch near the cuts.
func trustTestBuiltin(t *testing.T, name string, fn func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error)) {
	t.Helper()
	registerTestBuiltin(t, name, fn)
	testTrusted[name] = true
	t.Cleanup(func() { delete(testTrusted, name) })
}

// proveChained runs the proof of src over n smoke bars and returns its
// error, how many prefix runs were chained, out of how many, and how many
// of those cuts start their window at bar 0 (from the state setup left).
func proveChained(t *testing.T, src string, n int) (chained, cuts, early int, err error) {
	t.Helper()
	s := mustLoad(t, src, Options{})
	bars := SmokeBars(n)
	tr := stepAll(t, s, bars)
	seed := s.ProofSeed()
	all := append(PrefixCuts(n, s.Warmup()), DrawnPrefixCuts(n, s.Warmup(), seed)...)
	for _, c := range all {
		if c <= chainWindow {
			early++
		}
	}
	_, chained, err = s.checkLookahead(bg(t), bars, tr, seed)
	return chained, len(all), early, err
}

// trackedPeek is leakyPeek kept among the series the run computed, as
// wicket's own functions keep theirs.
func trackedPeek(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	v, err := leakyPeek(th, b, args, kwargs)
	if err != nil {
		return nil, err
	}
	return runOf(th).track(v.(*Series)), nil
}

// TestChainedProofPassesTemplate: the sma_cross_bar template's proof
// chains every prefix run and passes, with the same text as the restarting
// proof, which passes too.
func TestChainedProofPassesTemplate(t *testing.T) {
	text, err := os.ReadFile("../templates/star/sma_cross_bar.star")
	if err != nil {
		t.Fatal(err)
	}
	const n = 5000
	s := mustLoad(t, string(text), Options{})
	if !s.chain {
		t.Fatal("the template does not chain")
	}
	bars := SmokeBars(n)
	tr := stepAll(t, s, bars)
	seed := s.ProofSeed()
	check, chained, err := s.checkLookahead(bg(t), bars, tr, seed)
	cuts := len(PrefixCuts(n, s.Warmup())) + len(DrawnPrefixCuts(n, s.Warmup(), seed))
	if err != nil || !Passed(check) || chained != cuts {
		t.Fatalf("chained proof: %q, %d of %d chained, %v", check, chained, cuts, err)
	}
	s.chain = false
	restart, chained, err := s.checkLookahead(bg(t), bars, tr, seed)
	if err != nil || restart != check || chained != 0 {
		t.Fatalf("restarting proof: %q (chained %q), %d chained, %v", restart, check, chained, err)
	}
}

// TestChainedProofCatchesPeekAfterCut: a hole in a read the chained proof
// trusts (peek, one bar ahead) is caught at the bar before a cut, where
// the prefix run has no next bar.
func TestChainedProofCatchesPeekAfterCut(t *testing.T) {
	trustTestBuiltin(t, "peek", leakyPeek)
	src := "def setup(ctx):\n    pass\n" +
		"def on_bar(ctx):\n    p = peek(ctx.close)[0]\n" +
		"    if p == None:\n        ctx.target(0.5)\n    elif p > ctx.close[0]:\n        ctx.target(1.0)\n    else:\n        ctx.flat()\n"
	chained, _, _, err := proveChained(t, src, 3000)
	e := asError(t, err, KindLookahead)
	if chained == 0 {
		t.Fatalf("no prefix run chained: %v", e)
	}
	if !strings.Contains(e.Msg, "the intent") {
		t.Fatalf("want the intent named: %v", e)
	}
}

// TestChainedProofCatchesStateAcrossCut: a leaked value stored on ctx a
// few bars before the last cut and used only after it changes no decision
// any prefix run makes, so the restarting proof passes it; the chained
// proof compares the state at the cut and refuses it there.
func TestChainedProofCatchesStateAcrossCut(t *testing.T) {
	trustTestBuiltin(t, "barcount", barCount)
	const n = 1000
	src := "def setup(ctx):\n    ctx.memo = 1\n" +
		"def on_bar(ctx):\n" +
		"    if ctx.index == 995:\n        ctx.memo = barcount()\n" +
		"    if ctx.index == 999:\n        ctx.target(100.0 / ctx.memo)\n"
	s := mustLoad(t, src, Options{})
	bars := SmokeBars(n)
	tr := stepAll(t, s, bars)
	seed := s.ProofSeed()
	_, chained, err := s.checkLookahead(bg(t), bars, tr, seed)
	e := asError(t, err, KindLookahead)
	// The state is compared at the last bar of a cut: the fixed cut of
	// n-1 bars, or a drawn one that fell on 996 to 998 bars (the seed is
	// random), whichever comes first after bar 995.
	if chained == 0 || e.Bar < 995 || e.Bar > n-2 || !strings.Contains(e.Msg, "ctx.memo") {
		t.Fatalf("chained %d, bar %d, want a bar in 995..%d naming ctx.memo: %v", chained, e.Bar, n-2, e)
	}
	s.chain = false
	if check, _, err := s.checkLookahead(bg(t), bars, tr, seed); err != nil || !Passed(check) {
		t.Fatalf("the restarting proof was expected to pass this one: %q, %v", check, err)
	}
}

// TestChainedProofCatchesSetupSeries: a leaky series built in setup (a
// host function there does not stop the chaining: setup reruns over the
// prefix's bars) differs on the bars before each cut.
func TestChainedProofCatchesSetupSeries(t *testing.T) {
	registerTestBuiltin(t, "peek", trackedPeek)
	src := "def setup(ctx):\n    ctx.p = peek(ctx.close)\n" +
		"def on_bar(ctx):\n    if ctx.p[0] != None and ctx.p[0] > ctx.close[0]:\n        ctx.target(1.0)\n    else:\n        ctx.flat()\n"
	chained, cuts, _, err := proveChained(t, src, 3000)
	asError(t, err, KindLookahead)
	if chained != cuts {
		t.Fatalf("%d of %d prefix runs chained", chained, cuts)
	}
}

// TestChainedProofGlobalsFrozen: the argument counts on globals no step
// can change: on_bar mutating a global list fails in the full run.
func TestChainedProofGlobalsFrozen(t *testing.T) {
	src := "seen = []\ndef setup(ctx):\n    pass\n" +
		"def on_bar(ctx):\n    seen.append(ctx.index)\n    if len(seen) > 5:\n        ctx.flat()\n"
	s := mustLoad(t, src, Options{})
	if !s.chain {
		t.Fatal("want a chainable strategy")
	}
	st, err := s.Begin(bg(t), SmokeBars(10))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Step(0, strategy.Account{Cash: 1000, Equity: 1000}); err == nil || !strings.Contains(err.Error(), "frozen") {
		t.Fatalf("mutating a global: %v, want a frozen error", err)
	}
}

// TestChainedProofFallsBack: what the chained proof cannot follow runs
// the restarting proof, which catches the leak or passes the honest run.
func TestChainedProofFallsBack(t *testing.T) {
	registerTestBuiltin(t, "peek", leakyPeek)
	for _, c := range []struct {
		name, src string
		leaks     bool
		atRun     bool // refused at a snapshot, not at load: the cuts from bar 0 chain
	}{
		{"ta in on_bar", "def setup(ctx):\n    pass\ndef on_bar(ctx):\n    if (ta.sma(ctx.close, 5)[0] or 0) > ctx.close[0]:\n        ctx.target(1.0)\n", false, false},
		{"ta in a helper", "def avg(x):\n    return ta.sma(x, 5)\ndef setup(ctx):\n    pass\ndef on_bar(ctx):\n    if (avg(ctx.close)[0] or 0) > ctx.close[0]:\n        ctx.target(1.0)\n", false, false},
		{"ta bound to a global", "avg = ta.sma\ndef setup(ctx):\n    pass\ndef on_bar(ctx):\n    if (avg(ctx.close, 5)[0] or 0) > ctx.close[0]:\n        ctx.target(1.0)\n", false, false},
		{"a closure made in setup", "def setup(ctx):\n    ctx.avg = lambda x: ta.sma(x, 5)\ndef on_bar(ctx):\n    if (ctx.avg(ctx.close)[0] or 0) > ctx.close[0]:\n        ctx.target(1.0)\n", false, false},
		{"setup called from on_bar", "def setup(ctx):\n    ctx.n = 1\ndef on_bar(ctx):\n    setup(ctx)\n", false, false},
		{"a host function", "def setup(ctx):\n    pass\ndef on_bar(ctx):\n    p = peek(ctx.close)[0]\n    if p != None and p > ctx.close[0]:\n        ctx.target(1.0)\n    else:\n        ctx.flat()\n", true, false},
		{"a series made in on_bar kept", "def setup(ctx):\n    ctx.d = None\ndef on_bar(ctx):\n    ctx.d = ctx.close - ctx.open\n    if ctx.d[0] > 0:\n        ctx.target(1.0)\n", false, true},
		{"a function kept", "def f(x):\n    return x\ndef setup(ctx):\n    ctx.f = f\ndef on_bar(ctx):\n    if ctx.f(ctx.close[0]) > 100:\n        ctx.target(1.0)\n", false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			chained, _, early, err := proveChained(t, c.src, 2000)
			if want := map[bool]int{false: 0, true: early}[c.atRun]; chained != want {
				t.Fatalf("%d prefix runs chained, want %d", chained, want)
			}
			if c.leaks {
				asError(t, err, KindLookahead)
			} else if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestChainedProofCopiesState: state of plain values, containers and
// setup's series chains; containers on_bar mutates are copied at each
// snapshot, so a prefix run's steps do not change what the next reads.
func TestChainedProofCopiesState(t *testing.T) {
	src := "def setup(ctx):\n    ctx.f = ta.sma(ctx.close, 5)\n    ctx.c = ctx.close\n    ctx.hist = []\n    ctx.seen = {}\n    ctx.nan = float('nan')\n" +
		"def on_bar(ctx):\n    ctx.hist.append(ctx.f[0])\n    if len(ctx.hist) > 8:\n        ctx.hist.pop(0)\n" +
		"    ctx.seen[ctx.index % 7] = (ctx.c[0], ctx.index)\n" +
		"    if ctx.f[0] != None and ctx.f[0] > ctx.c[0] and len(ctx.hist) == 8:\n        ctx.target(0.5)\n    else:\n        ctx.flat()\n"
	chained, cuts, _, err := proveChained(t, src, 3000)
	if err != nil || chained != cuts {
		t.Fatalf("%d of %d prefix runs chained: %v", chained, cuts, err)
	}
}

// TestChainable: which strategy sources chainable lets chain.
func TestChainable(t *testing.T) {
	for _, c := range []struct {
		src  string
		want bool
	}{
		{"def setup(ctx):\n    ctx.f = ta.ema(ctx.close, 3)\ndef on_bar(ctx):\n    pass\n", true},
		{"def setup(ctx):\n    def g():\n        return ta\n    ctx.g = g\ndef on_bar(ctx):\n    pass\n", false},
		{"def setup(ctx, n=ta):\n    pass\ndef on_bar(ctx):\n    pass\n", false},
		{"def setup(ctx):\n    pass\ndef setup(ctx):\n    pass\ndef on_bar(ctx):\n    pass\n", false},
		{"def setup(ctx):\n    pass\nother = setup\ndef on_bar(ctx):\n    pass\n", false},
		{"def on_bar(ctx):\n    pass\n", false},
	} {
		f, err := fileOptions.Parse("t.star", c.src, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := chainable(f, untrusted); got != c.want {
			t.Errorf("chainable = %v, want %v:\n%s", got, c.want, c.src)
		}
	}
}

// TestChainedProofBoundsSnapshots: a state that grows with the bars is
// copied while it is small; past snapshotValues its cuts restart, and the
// proof still passes the honest run.
func TestChainedProofBoundsSnapshots(t *testing.T) {
	const n = 3 * snapshotValues
	src := "def setup(ctx):\n    ctx.hist = []\n" +
		"def on_bar(ctx):\n    ctx.hist.append(ctx.close[0])\n    if len(ctx.hist) > 2 and ctx.hist[-1] > ctx.hist[-2]:\n        ctx.target(1.0)\n    else:\n        ctx.flat()\n"
	s := mustLoad(t, src, Options{})
	bars := SmokeBars(n)
	tr := stepAll(t, s, bars)
	seed := s.ProofSeed()
	late := 0
	for _, c := range append(PrefixCuts(n, s.Warmup()), DrawnPrefixCuts(n, s.Warmup(), seed)...) {
		if c-chainWindow >= snapshotValues {
			late++
		}
		if tr.chain.snaps[max(0, c-chainWindow)] == nil && c-chainWindow < snapshotValues-1 {
			t.Fatalf("no snapshot before bar %d, where the state is small", c-chainWindow)
		}
	}
	check, chained, err := s.checkLookahead(bg(t), bars, tr, seed)
	cuts := len(PrefixCuts(n, s.Warmup())) + len(DrawnPrefixCuts(n, s.Warmup(), seed))
	if err != nil || !Passed(check) || late == 0 || chained != cuts-late {
		t.Fatalf("%q: %d of %d chained, %d late cuts, %v", check, chained, cuts, late, err)
	}
}
