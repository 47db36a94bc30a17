package script

import (
	"strings"
	"testing"
)

// TestPrefixRunAdoptsFullColumns: a prefix run of the lookahead proof goes
// on with the full run's column for each series it computed bit for bit
// the same on its bars (its own is garbage at once, not held until the
// run ends), keeps its own for a series that differs, and the proof still
// reports that series.
func TestPrefixRunAdoptsFullColumns(t *testing.T) {
	registerTestBuiltin(t, "peek", leakyPeek)
	src := "def signals(bars):\n" +
		"    unused = peek(bars.close) + 0\n" +
		"    f = ta.sma(bars.close, 5)\n" +
		"    s = ta.sma(bars.close, 20)\n" +
		"    g = f - s\n" +
		"    return {'long': ta.cross_above(f, s), 'exit': ta.cross_below(f, s)}\n"
	s := mustLoad(t, src, Options{})
	bars := rampBars(300)
	_, tr, err := s.SignalsTrace(bg(t), bars)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.series) != 4 {
		t.Fatalf("the full run kept %d series, want 4 (the leak, two SMAs, their difference)", len(tr.series))
	}
	cut := 150
	_, pre, err := s.runSignals(bg(t), bars.Slice(0, cut), discard, false, trackCap(bars.Len()), &tr)
	if err != nil {
		t.Fatal(err)
	}
	built := pre.series
	for k, b := range built {
		own, full := b.values(), tr.series[k].values()
		if len(own) != cut {
			t.Fatalf("series #%d has %d values over %d bars", k+1, len(own), cut)
		}
		shares := &own[0] == &full[0]
		if want := k > 0; shares != want {
			t.Errorf("series #%d (%s) reads the full run's column: %t, want %t", k+1, b.what, shares, want)
		}
	}
	// Without the full run's series (any run but a prefix run), nothing is
	// adopted.
	_, alone, err := s.runSignals(bg(t), bars.Slice(0, cut), discard, false, trackCap(bars.Len()), nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, b := range alone.series {
		if &b.values()[0] == &tr.series[k].values()[0] {
			t.Errorf("series #%d of a run without the full run's series reads its column", k+1)
		}
	}
	_, err = s.CheckLookahead(bg(t), bars, tr)
	if e := asError(t, err, KindLookahead); !strings.Contains(e.Msg, "series #1 (series ") {
		t.Errorf("the leak among adopted series is reported as %q, want series #1", e.Msg)
	}
}

// TestPrefixSetupAdoptsFullColumns: setup's series in an on_bar
// strategy's prefix runs are adopted too.
func TestPrefixSetupAdoptsFullColumns(t *testing.T) {
	s := mustLoad(t, "def setup(ctx):\n    ctx.f = ta.sma(ctx.close, 5)\n    ctx.s = ta.ema(ctx.close, 10)\ndef on_bar(ctx):\n    if ctx.f[0] != None and ctx.s[0] != None and ctx.f[0] > ctx.s[0]:\n        ctx.target(1)\n    else:\n        ctx.flat()\n", Options{})
	bars := rampBars(200)
	tr := stepAll(t, s, bars)
	st, err := s.begin(bg(t), bars.Slice(0, 120), discard, false, trackCap(bars.Len()), tr.series)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if len(st.r.built) != 2 {
		t.Fatalf("setup kept %d series, want 2", len(st.r.built))
	}
	for k, b := range st.r.built {
		if &b.values()[0] != &tr.series[k].values()[0] {
			t.Errorf("setup's series #%d keeps its own column", k+1)
		}
	}
	if check, err := s.CheckLookahead(bg(t), bars, tr); err != nil || !Passed(check) {
		t.Fatalf("proof: %q, %v", check, err)
	}
}
