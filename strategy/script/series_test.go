package script

import (
	"fmt"
	"strings"
	"testing"

	"wicket/strategy"
)

// TestSeriesSemantics evaluates expressions in on_bar at the last of bars
// with close 1..10 and requires each to be true. (In signals(bars) a
// series is opaque; see lookahead_test.go.)
func TestSeriesSemantics(t *testing.T) {
	checks := []string{
		// History-only indexing, None outside history and in warm-ups.
		`bars.close[0] == 10`, `bars.close[1] == 9`, `bars.close[9] == 1`, `bars.close[10] == None`,
		`bars.close[100000000000] == None`, `len(bars.close) == 10`, `str(bars.close) == "series(current=10.0)"`,
		`ta.sma(bars.close, 3)[0] == 9`, `ta.sma(bars.close, 3)[7] == 2`, `ta.sma(bars.close, 3)[8] == None`,
		`bars.time[0] == 1704067200 + 9 * 3600`,
		// Elementwise arithmetic with numbers and series, either side.
		`(bars.close + 1)[0] == 11`, `(1 + bars.close)[0] == 11`, `(2 * bars.close)[1] == 18`,
		`(bars.close - bars.close)[0] == 0`, `(bars.close / bars.close)[3] == 1`, `(-bars.close)[0] == -10`,
		`(+bars.close)[0] == 10`, `(bars.close % 3)[0] == 1`, `(bars.close // 3)[0] == 3`, `(20 / bars.close)[0] == 2`,
		`((bars.high + bars.low) / 2)[0] == 10`, `(bars.close / 0)[0] == None`,
		`(bars.close + ta.sma(bars.close, 3))[0] == 19`, `(bars.close + ta.sma(bars.close, 3))[8] == None`,
		// Elementwise comparisons give bool series; missing stays missing.
		`(bars.close > 5)[0] == True`, `(bars.close > 5)[5] == False`, `(5 < bars.close)[0] == True`,
		`(bars.close >= 10)[0] == True`, `(bars.close <= 1)[9] == True`, `(bars.close == 4)[6] == True`, `(bars.close != 4)[6] == False`,
		`(bars.close > ta.sma(bars.close, 3))[0] == True`, `(ta.sma(bars.close, 3) > 0)[8] == None`,
		`type(bars.close > 5) == "bool series"`, `type(bars.close + 1) == "series"`,
		// Logic on bool series.
		`((bars.close > 2) & (bars.close < 5))[6] == True`, `((bars.close > 2) & (bars.close < 5))[0] == False`,
		`((bars.close > 8) | (bars.close < 2))[9] == True`, `(~(bars.close > 5))[0] == False`, `(~(bars.close > 5))[9] == True`,
		// A series in a condition is its current value.
		`bool(bars.close > 5)`, `not (bars.close > 50)`, `bool(ta.sma(bars.close, 3))`,
		// Plain comparisons are untouched.
		`1 < 2`, `"a" < "b"`, `None == None`, `(bars.close == None) == False`, `bars.close != None`, `[1, 2] == [1, 2]`, `(1, 2) != (2, 1)`, `2.5 >= 2`,
		// ta: positional and keyword parameters, TA-Lib aliases, bars as input, matype by name, lists.
		`ta.sma(bars.close, period=3)[0] == 9`, `ta.sma(bars.close, timeperiod=3)[0] == 9`,
		`ta.ma(bars.close, 3, matype="ema")[0] == ta.ema(bars.close, 3)[0]`, `ta.ma(bars.close, 3, 1)[0] == ta.ema(bars.close, 3)[0]`,
		`ta.atr(bars, 3)[0] == ta.atr(bars.high, bars.low, bars.close, 3)[0]`, `ta.atr(bars, 3)[0] == 1.5`,
		`type(ta.macd(bars.close, 2, 3, 2)) == "ta.macd"`, `ta.macd(bars.close, 2, 3, 2).hist[0] != None`,
		`ta.bbands(bars.close, 3).middle[0] == 9`, `ta.cross_above(bars.close, 5)[4] == True`,
		`ta.cross_above(bars.close, 5)[3] == False`, `ta.shift(bars.close, 2)[0] == 8`, `ta.nz(ta.sma(bars.close, 3), -1)[9] == -1`,
		`ta.barssince(bars.close == 7)[0] == 3`, `ta.highest(bars.high, 3)[0] == 10.5`,
	}
	var body strings.Builder
	for i, c := range checks {
		fmt.Fprintf(&body, "    if not (%s):\n        fail(\"check %d failed: \" + %q)\n", c, i, c)
	}
	src := "def setup(bars):\n    pass\ndef on_bar(bars):\n" + body.String()
	if _, err := stepAt(t, src, rampBars(10), 9); err != nil {
		t.Fatal(err)
	}
	// What signals(bars) may still read: the series' name, and str() shows no value.
	sig := "def signals(bars):\n    if bars.series != 'RAMP@1h' or str(bars.close) != 'series' or str(bars.close > 1) != 'bool series' or str(bars) != 'bars':\n        fail('opaque')\n    return {'long': bars.close > 0}\n"
	if _, err := mustLoad(t, sig, Options{}).Signals(bg(t), rampBars(10)); err != nil {
		t.Fatal(err)
	}
}

// stepAt loads an on_bar strategy, runs setup over bars and calls on_bar
// for bar i only.
func stepAt(t *testing.T, src string, bars strategy.Bars, i int) (strategy.Intent, error) {
	t.Helper()
	s := mustLoad(t, src, Options{})
	st, err := s.Begin(bg(t), bars)
	if err != nil {
		return strategy.Intent{}, err
	}
	defer st.Close()
	return st.Step(i, strategy.Account{Cash: 100, Equity: 100})
}

// TestSeriesErrors: what a series refuses, with the right kind and line.
func TestSeriesErrors(t *testing.T) {
	for _, tc := range []struct {
		expr string
		kind Kind
		want string
	}{
		{`bars.close[-1]`, KindLookahead, "series index -1 reads 1 bar(s) into the future"},
		{`ta.sma(bars.close, 3)[-5]`, KindLookahead, "reads 5 bar(s) into the future"},
		{`bars.close["x"]`, KindRuntime, "series index must be an int"},
		{`bars.close == (None if True else 1)`, KindRuntime, "a series compared with None"},
		{`bars.close + "x"`, KindRuntime, "unsupported"},
		{`{bars.close: 1}`, KindRuntime, "unhashable"},
		{`bars.close[0] > None`, KindRuntime, "not implemented"},
		{`ta.sma(bars.close, 1)`, KindRuntime, "ta.sma: period = 1 is out of range [2, 100000]"},
		{`ta.sma(bars.close, length=3)`, KindRuntime, `unexpected keyword "length"; it takes ta.sma(series, period=30)`},
		{`ta.sma(bars.close, 3, 4)`, KindRuntime, "too many positional arguments"},
		{`ta.sma(bars.close, 3, period=4)`, KindRuntime, "parameter period given twice"},
		{`ta.atr(bars.high, bars.low)`, KindRuntime, "missing input close; it takes ta.atr(high, low, close, period=14) (or bars/ctx as the first argument)"},
		{`ta.sma(bars, 3)`, KindRuntime, "pass a series (e.g. bars.close), not ctx"},
		{`ta.sma("abc", 3)`, KindRuntime, "want a series, got string"},
		{`ta.ma(bars.close, 3, matype="hull")`, KindRuntime, `matype "hull" is not one of sma, ema`},
		{`ta.sma(bars.close, True)`, KindRuntime, "period must be a number, not bool"},
		{`ta.correl(bars.close, [1, 2], 2)`, KindLookahead, "ta.correl: input b: a series cannot be built from a list"},
		{`ta.nosuch(bars.close)`, KindRuntime, "has no .nosuch field"},
		{`ta.macd(bars.close).nosuch`, KindRuntime, "has no .nosuch field"},
		{`bars.nosuch`, KindRuntime, "has no .nosuch field"},
	} {
		src := "def on_bar(bars):\n    x = " + tc.expr + "\ndef setup(bars):\n    pass\n"
		_, err := stepAt(t, src, rampBars(10), 9)
		e := asError(t, err, tc.kind)
		if !strings.Contains(e.Msg, tc.want) {
			t.Errorf("%s: %q, want %q", tc.expr, e.Msg, tc.want)
		}
		if e.Line != 2 || e.Column < 5 || e.Phase != "on_bar" {
			t.Errorf("%s: at %d:%d in %q, want line 2 in on_bar", tc.expr, e.Line, e.Column, e.Phase)
		}
	}
}
