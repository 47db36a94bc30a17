package script

import (
	"testing"

	"go.starlark.net/starlark"
)

// barCount is a deliberately leaky host builtin: barcount() is how many
// bars the run has, which no decision may know (it says how much data lies
// ahead). It reads the run of the thread calling it, as a host function
// would.
func barCount(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 0); err != nil {
		return nil, err
	}
	return starlark.MakeInt(runOf(th).n), nil
}

// TestProofCatchesLeakCarriedInState: a leak that enters the strategy's
// own state (a ctx field set in on_bar) at an early bar and shows in a
// decision only many bars and several cuts later is caught, at the first
// bar it shows in. This is why a strategy whose on_bar calls a host
// function restarts every prefix run from bar 0 (chainable, chain.go): a
// prefix run resumed from the full run's state at an earlier cut would
// carry the full run's value of the field (the leaked one) and agree with
// the full run on every later bar, so it would pass this strategy.
func TestProofCatchesLeakCarriedInState(t *testing.T) {
	registerTestBuiltin(t, "barcount", barCount)
	const n = 1000
	bars := SmokeBars(n)
	src := "def setup(ctx):\n    ctx.memo = None\n" +
		"def on_bar(ctx):\n" +
		"    if ctx.index == 10:\n        ctx.memo = barcount()\n" +
		"    if ctx.index >= 600:\n        ctx.target(100.0 / ctx.memo)\n"
	s := mustLoad(t, src, Options{})
	if s.chain {
		t.Fatal("a strategy calling a host function in on_bar must not chain its proof")
	}
	if cuts := PrefixCuts(n, s.Warmup()); cuts[len(cuts)-2] >= 600 || cuts[len(cuts)-1] <= 600 {
		t.Fatalf("cuts %v: the test wants the last cut alone past bar 600, so that only a run from bar 0 over it sees the leak", cuts)
	}
	tr := stepAll(t, s, bars)
	_, err := s.CheckLookahead(bg(t), bars, tr)
	e := asError(t, err, KindLookahead)
	if e.Bar != 600 || e.Phase != "on_bar" {
		t.Fatalf("bar %d, phase %q, want bar 600 in on_bar: %v", e.Bar, e.Phase, e)
	}

	// The same strategy without the leak (a constant in its place) passes:
	// the refusal is the leak's, not the stored state's.
	registerTestBuiltin(t, "barcount", func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
		return starlark.MakeInt(n), nil
	})
	s = mustLoad(t, src, Options{})
	tr = stepAll(t, s, bars)
	if check, err := s.CheckLookahead(bg(t), bars, tr); err != nil || !Passed(check) {
		t.Fatalf("honest twin: %q, %v", check, err)
	}
}
