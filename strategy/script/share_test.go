package script

import (
	"strings"
	"testing"

	"wicket/strategy"
	"wicket/strategy/ta"
)

// proofComputed runs s over bars (signals or stepped on_bar), then its
// lookahead proof, and returns how many times each catalog function was
// computed by the proof alone (the memo's counters after the proof less
// those after the full run) and the proof's outcome.
func proofComputed(t *testing.T, s *Strategy, memo *ta.Memo, bars strategy.Bars) (map[string]uint64, string, error) {
	t.Helper()
	var tr Trace
	if s.Style() == StyleSignals {
		var err error
		if _, tr, err = s.SignalsTrace(bg(t), bars); err != nil {
			t.Fatal(err)
		}
	} else {
		tr = stepAll(t, s, bars)
	}
	before := memo.Stats().Computed
	check, err := s.CheckLookahead(bg(t), bars, tr)
	after := memo.Stats().Computed
	d := map[string]uint64{}
	for name, c := range after {
		if c > before[name] {
			d[name] = c - before[name]
		}
	}
	return d, check, err
}

// TestProofSharesCatalogCalls: a prefix run of the lookahead proof takes
// a catalog call's output from the full run when its inputs are the full
// run's over the prefix (bar columns; a series it adopted, here an
// arithmetic one it computed itself and found the same): the proof
// computes no ta.sma, ta.ema or ta.macd of its own, while it still
// computes the arithmetic series over every prefix. Before, every prefix
// run computed every indicator over its bars.
func TestProofSharesCatalogCalls(t *testing.T) {
	bars := SmokeBars(3000)
	for _, c := range []struct{ name, src string }{
		{"signals", "def signals(bars):\n    f = ta.sma(bars.close, 10)\n    s = ta.ema(bars.close * 1.5 - bars.open * 0.5, 30)\n    m = ta.macd(bars.close)\n" +
			"    return {'long': ta.cross_above(f, s), 'exit': ta.cross_below(m.macd, m.signal)}\n"},
		{"on_bar", "def setup(ctx):\n    ctx.f = ta.sma(ctx.close, 10)\n    ctx.s = ta.ema(ctx.close * 1.5 - ctx.open * 0.5, 30)\n" +
			"def on_bar(ctx):\n    if ctx.s[0] != None and ctx.f[0] > ctx.s[0]:\n        ctx.target(1)\n    else:\n        ctx.flat()\n"},
	} {
		memo := ta.NewMemo(0)
		s := mustLoad(t, c.src, Options{Memo: memo})
		computed, check, err := proofComputed(t, s, memo, bars)
		if err != nil || !Passed(check) {
			t.Fatalf("%s: %q %v", c.name, check, err)
		}
		for _, name := range []string{"sma", "ema", "macd"} {
			if computed[name] != 0 {
				t.Errorf("%s: the proof computed ta.%s %d times; its prefix runs should take the full run's", c.name, name, computed[name])
			}
		}
		if computed["series*n"] == 0 || computed["series-"] == 0 {
			t.Errorf("%s: the proof computed no arithmetic series (%v); prefix runs must still compute them", c.name, computed)
		}
	}
}

// TestProofCatchesLeakIntoCatalog: a leaked series (a host function
// reading a bar ahead; one whose values read ahead only late in the bars)
// fed into a catalog function is still caught by the prefix runs, which
// compute that catalog call over their own bars rather than share the
// full run's.
func TestProofCatchesLeakIntoCatalog(t *testing.T) {
	registerTestBuiltin(t, "peek", leakyPeek)
	registerTestBuiltin(t, "late_sma", lateSMA)
	const n = 4000
	lateFrom, lateTo = n*60/100, n-50
	bars := SmokeBars(n)
	for _, c := range []struct{ name, src, fn string }{
		{"peek into sma", "def signals(bars):\n    f = ta.sma(peek(bars.close), 10)\n    s = ta.sma(bars.close, 30)\n    return {'long': ta.cross_above(f, s), 'exit': ta.cross_below(f, s)}\n", "sma"},
		{"late leak into ema", "def signals(bars):\n    f = ta.ema(late_sma(bars.close, 5), 10)\n    s = ta.sma(bars.close, 30)\n    return {'long': ta.cross_above(f, s), 'exit': ta.cross_below(f, s)}\n", "ema"},
		{"peek into ema in setup", "def setup(ctx):\n    ctx.f = ta.ema(peek(ctx.close), 10)\n" +
			"def on_bar(ctx):\n    if ctx.f[0] != None and ctx.close[0] < ctx.f[0]:\n        ctx.target(1)\n    else:\n        ctx.flat()\n", "ema"},
	} {
		memo := ta.NewMemo(0)
		s := mustLoad(t, c.src, Options{Memo: memo})
		computed, check, err := proofComputed(t, s, memo, bars)
		if err == nil {
			t.Errorf("%s: the leak passed the proof (%s)", c.name, check)
			continue
		}
		asError(t, err, KindLookahead)
		if computed[c.fn] == 0 {
			t.Errorf("%s: the proof never computed ta.%s over a prefix (%v): it shared a call over a leaked input", c.name, c.fn, computed)
		}
	}
}

// TestPrefixColumnKeys: a prefix run's bar column that is the full run's
// column cut is keyed from the full column's key and the cut, not hashed
// again; the keys of two cuts and of the full column differ, and a column
// the full run never read is hashed as before.
func TestPrefixColumnKeys(t *testing.T) {
	bars := SmokeBars(2000)
	memo := ta.NewMemo(0)
	s := mustLoad(t, "def signals(bars):\n    f = ta.sma(bars.close, 10)\n    s = ta.sma(bars.close, 30)\n    return {'long': ta.cross_above(f, s), 'exit': ta.cross_below(f, s)}\n", Options{Memo: memo})
	_, tr, err := s.SignalsTrace(bg(t), bars)
	if err != nil {
		t.Fatal(err)
	}
	full := tr.series[0].run.cols["close"]
	keys := map[ta.Key]int{full.key: bars.Len()}
	for _, cut := range []int{700, 1500} {
		_, pre, err := s.runSignals(bg(t), bars.Slice(0, cut), discard, false, trackCap(bars.Len()), &tr)
		if err != nil {
			t.Fatal(err)
		}
		built := pre.series
		r := built[0].run
		col, err := r.column("close")
		if err != nil {
			t.Fatal(err)
		}
		want := memo.Key("bars.prefix\x00close", []ta.Key{full.key}, []float64{float64(cut)})
		if col.key != want {
			t.Errorf("cut %d: the close column's key was not derived from the full run's", cut)
		}
		if c, dup := keys[col.key]; dup {
			t.Errorf("cut %d: the close column has the key of the column of %d bars", cut, c)
		}
		keys[col.key] = cut
		open, err := r.column("open")
		if err != nil {
			t.Fatal(err)
		}
		if open.key != memo.Key("bars.open", []ta.Key{memo.ValuesKey(open.vals)}, nil) {
			t.Errorf("cut %d: the open column, which the full run never read, was not keyed by its values", cut)
		}
	}
}

// TestProofSharesCrosses: a prefix run's signal that is a cross of the
// full run's columns cut to the prefix (shared SMAs, a bar column) takes
// the full run's flags cut to the prefix, in memory; a signal that is no
// cross, a cross of a column the prefix run computed itself, and a run
// that is no prefix run compute their own. The proof passes.
func TestProofSharesCrosses(t *testing.T) {
	registerTestBuiltin(t, "peek", leakyPeek)
	bars := SmokeBars(3000)
	src := "def signals(bars):\n    f = ta.sma(bars.close, 10)\n    s = ta.sma(bars.close, 30)\n" +
		"    return {'long': ta.cross_above(f, s), 'exit': ta.cross_below(bars.close, s), 'short': ta.cross_below(f, s) + 0}\n"
	s := mustLoad(t, src, Options{Memo: ta.NewMemo(0)})
	sig, tr, err := s.SignalsTrace(bg(t), bars)
	if err != nil {
		t.Fatal(err)
	}
	cut := 1700
	pre, _, err := s.runSignals(bg(t), bars.Slice(0, cut), discard, false, trackCap(bars.Len()), &tr)
	if err != nil {
		t.Fatal(err)
	}
	alone, _, err := s.runSignals(bg(t), bars.Slice(0, cut), discard, false, trackCap(bars.Len()), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name            string
		full, pre, self []bool
		shares          bool
	}{{"long", sig.Long, pre.Long, alone.Long, true}, {"exit", sig.Exit, pre.Exit, alone.Exit, true}, {"short", sig.Short, pre.Short, alone.Short, false}} {
		if len(c.pre) != cut || !sameFlags(c.pre, c.full[:cut]) || !sameFlags(c.self, c.full[:cut]) {
			t.Fatalf("%s: the prefix run's flags are not the full run's cut to %d bars", c.name, cut)
		}
		if got := &c.pre[0] == &c.full[0]; got != c.shares {
			t.Errorf("%s: the prefix run reads the full run's flags: %t, want %t", c.name, got, c.shares)
		}
		if &c.self[0] == &c.full[0] {
			t.Errorf("%s: a run that is no prefix run reads the full run's flags", c.name)
		}
	}
	if check, err := s.CheckLookahead(bg(t), bars, tr); err != nil || !Passed(check) {
		t.Fatalf("%q %v", check, err)
	}
	// A cross of a series the prefix run computed (here a leak, which
	// the full run's columns are not) is computed over the prefix.
	s = mustLoad(t, "def signals(bars):\n    s = ta.sma(bars.close, 30)\n    return {'long': ta.cross_above(peek(bars.close), s)}\n", Options{Memo: ta.NewMemo(0)})
	sig, tr, err = s.SignalsTrace(bg(t), bars)
	if err != nil {
		t.Fatal(err)
	}
	if pre, _, err = s.runSignals(bg(t), bars.Slice(0, cut), discard, false, trackCap(bars.Len()), &tr); err != nil {
		t.Fatal(err)
	}
	if &pre.Long[0] == &sig.Long[0] {
		t.Error("a cross of the prefix run's own series took the full run's flags")
	}
}

// TestProofCatchesLeakThroughCross: a leaked series that reaches the
// decisions only through a cross (peek's series is not one the proof
// keeps and compares) is caught by the cross's flags, which a prefix run
// computes over its own series instead of sharing the full run's; so is
// one fed to a cross beside a shared one, fused or not.
func TestProofCatchesLeakThroughCross(t *testing.T) {
	registerTestBuiltin(t, "peek", leakyPeek)
	bars := SmokeBars(4000)
	for _, c := range []struct{ name, src, signal string }{
		{"fused", "def signals(bars):\n    p = peek(bars.close)\n    return {'long': ta.cross_above(p, bars.close), 'exit': ta.cross_below(p, bars.close)}\n", `"long"`},
		{"beside a shared cross", "def signals(bars):\n    f = ta.sma(bars.close, 10)\n    s = ta.sma(bars.close, 30)\n" +
			"    return {'long': ta.cross_above(f, s), 'exit': ta.cross_below(peek(bars.close), s)}\n", `"exit"`},
	} {
		s := mustLoad(t, c.src, Options{Memo: ta.NewMemo(0)})
		_, check, err := proofComputed(t, s, s.memo, bars)
		if err == nil {
			t.Errorf("%s: the leak passed the proof (%s)", c.name, check)
			continue
		}
		if e := asError(t, err, KindLookahead); !strings.Contains(e.Msg, c.signal) {
			t.Errorf("%s: the leak is reported as %q, want it found in %s", c.name, e.Msg, c.signal)
		}
	}
}

// TestFlagDifference: the first bar where two signals' flags differ, a
// missing flag (a nil signal, or past its end) being false.
func TestFlagDifference(t *testing.T) {
	f := func(s string) []bool {
		if s == "-" {
			return nil
		}
		out := make([]bool, len(s))
		for i, c := range s {
			out[i] = c == '1'
		}
		return out
	}
	for _, c := range []struct {
		a, b string
		cut  int
		want int
	}{
		{"-", "-", 5, -1},
		{"-", "00000", 5, -1},
		{"-", "00010", 5, 3},
		{"-", "00010", 3, -1},
		{"0100", "0100", 4, -1},
		{"0100", "0110", 4, 2},
		{"0110", "0100", 2, -1},
		{"01", "0100001", 7, 6},
		{"01", "0100001", 6, -1},
		{"0100001", "01", 7, 6},
		{"11", "10", 9, 1},
	} {
		if got := flagDifference(f(c.a), f(c.b), c.cut); got != c.want {
			t.Errorf("flagDifference(%s, %s, %d) = %d, want %d", c.a, c.b, c.cut, got, c.want)
		}
	}
}

// TestProofComparesSizeSeries: a size a bar is compared at memory speed
// when the prefix run's is the full run's, and a leak that reaches the
// decisions only through the size (peek's series is not one the proof
// keeps) is still found there.
func TestProofComparesSizeSeries(t *testing.T) {
	registerTestBuiltin(t, "peek", leakyPeek)
	bars := SmokeBars(3000)
	for _, c := range []struct {
		name, size string
		leaks      bool
	}{{"a clean size", "ta.sma(bars.close, 5) / ta.sma(bars.close, 50) - 0.5", false}, {"a leaked size", "peek(bars.close)", true}} {
		s := mustLoad(t, "def signals(bars):\n    f = ta.sma(bars.close, 10)\n    s = ta.sma(bars.close, 30)\n"+
			"    return {'long': ta.cross_above(f, s), 'exit': ta.cross_below(f, s), 'size': "+c.size+"}\n", Options{Memo: ta.NewMemo(0)})
		_, check, err := proofComputed(t, s, s.memo, bars)
		switch {
		case !c.leaks && (err != nil || !Passed(check)):
			t.Errorf("%s: %q %v", c.name, check, err)
		case c.leaks && err == nil:
			t.Errorf("%s: the leak passed the proof (%s)", c.name, check)
		case c.leaks:
			if e := asError(t, err, KindLookahead); !strings.Contains(e.Msg, `"size"`) {
				t.Errorf("%s: the leak is reported as %q, want it found in the size", c.name, e.Msg)
			}
		}
	}
}
