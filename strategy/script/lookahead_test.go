package script

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"wicket/strategy"
	"wicket/strategy/backtest"
	"wicket/strategy/ta"
)

// leakIndicators are user indicators that try to read the future, and one
// that is causal.
var leakIndicators = fstest.MapFS{
	"last.star":   {Data: []byte("def last(s):\n    return s[0]\n")},
	"ahead.star":  {Data: []byte("def ahead(s):\n    return s[-1]\n")},
	"total.star":  {Data: []byte("def total(s):\n    t = 0\n    for v in s:\n        t += v\n    return t\n")},
	"sz.star":     {Data: []byte("def size_of(s):\n    return len(s)\n")},
	"smooth.star": {Data: []byte("def smooth(s, n=3):\n    return ta.ema(ta.sma(s, n), n)\n")},
}

// sigSrc is a signals strategy whose body (indented by the caller's
// newlines) runs before a valid return.
func sigSrc(body string) string {
	return "def signals(bars):\n    " + strings.ReplaceAll(body, "\n", "\n    ") + "\n    return {'long': ta.cross_above(bars.close, ta.sma(bars.close, 20)), 'exit': ta.cross_below(bars.close, ta.sma(bars.close, 20))}\n"
}

// barSrc is an on_bar strategy with setup and on_bar bodies.
func barSrc(setup, onBar string) string {
	return "def setup(ctx):\n    ctx.f = ta.sma(ctx.close, 10)\n    " + strings.ReplaceAll(setup, "\n", "\n    ") +
		"\ndef on_bar(ctx):\n    " + strings.ReplaceAll(onBar, "\n", "\n    ") +
		"\n    if ctx.close[0] > ctx.f[0] and ctx.position <= 0:\n        ctx.target(1)\n    elif ctx.close[0] < ctx.f[0] and ctx.position > 0:\n        ctx.flat()\n"
}

// TestLeakAttempts: every way we could think of to read a later bar, in
// both styles, is refused as a lookahead (rule 1 at the line, or the
// prefix proof for a leak rule 1 cannot see), and what remains allowed is
// shown causal by the proof passing.
func TestLeakAttempts(t *testing.T) {
	registerTestBuiltin(t, "peek", leakyPeek)
	const (
		refused = "refused" // rule 1: a lookahead error at line 2 (or in the indicator)
		proof   = "proof"   // rule 2: the prefix proof's lookahead error
		causal  = "causal"  // valid, and the proof passed
	)
	cases := []struct {
		name, src, want string
	}{
		// signals(bars): series are opaque.
		{"index 0 (the last bar)", sigSrc("x = bars.close[0]"), refused},
		{"index 1", sigSrc("x = bars.close[1]"), refused},
		{"negative index", sigSrc("x = bars.close[-1]"), refused},
		{"rebuild in order", sigSrc("n = 1000\nx = [bars.close[n - 1 - i] for i in range(n)]"), refused},
		{"volume index", sigSrc("x = bars.volume[3]"), refused},
		{"time index", sigSrc("x = bars.time[0]"), refused},
		{"index through format", sigSrc("x = '%s' % bars.close[0]"), refused},
		{"slice", sigSrc("x = bars.close[0:10]"), refused},
		{"reversed slice", sigSrc("x = bars.close[::-1]"), refused},
		{"for loop", sigSrc("for v in bars.close:\n    pass"), refused},
		{"comprehension", sigSrc("x = [v for v in bars.close]"), refused},
		{"list()", sigSrc("x = list(bars.close)"), refused},
		{"tuple()", sigSrc("x = tuple(bars.close)"), refused},
		{"set()", sigSrc("x = set(bars.close)"), refused},
		{"sorted()", sigSrc("x = sorted(bars.close)"), refused},
		{"reversed()", sigSrc("x = reversed(bars.close)"), refused},
		{"zip()", sigSrc("x = zip(bars.close, bars.open)"), refused},
		{"enumerate()", sigSrc("x = enumerate(bars.close)"), refused},
		{"dict(enumerate())", sigSrc("x = dict(enumerate(bars.high))"), refused},
		{"min()", sigSrc("x = min(bars.low)"), refused},
		{"max()", sigSrc("x = max(bars.high)"), refused},
		{"any()", sigSrc("x = any(bars.close > 0)"), refused},
		{"all()", sigSrc("x = all(bars.close > 0)"), refused},
		{"str.join", sigSrc("x = ','.join(bars.close)"), refused},
		{"list.extend", sigSrc("y = []\nx = y.extend(bars.close)"), refused},
		{"len()", sigSrc("x = len(bars.close)"), refused},
		{"range(len())", sigSrc("x = range(len(bars.close))"), refused},
		{"len trick: list of len", sigSrc("x = [0] * len(ta.sma(bars.close, 3))"), refused},
		{"truth in if", sigSrc("if bars.close > 100:\n    pass"), refused},
		{"bool()", sigSrc("x = bool(bars.close)"), refused},
		{"not", sigSrc("x = not (bars.close > bars.open)"), refused},
		{"and/or", sigSrc("x = (bars.close > 1) or 1"), refused},
		{"conditional expression", sigSrc("x = 1 if ta.sma(bars.close, 5) > bars.close else 0"), refused},
		{"membership", sigSrc("x = 3 in bars.close"), refused},
		{"ta.nz(list)", sigSrc("x = ta.nz([1, 2, 3])"), refused},
		{"ta.sma(list)", sigSrc("x = ta.sma([1.0] * 1000, 3)"), refused},
		{"list beside a series", sigSrc("x = ta.cross_above(bars.close, [1.0] * 1000)"), refused},
		{"tuple as input", sigSrc("x = ta.ema((1.0, 2.0, 3.0), 2)"), refused},
		{"ta.shift(-1)", sigSrc("x = ta.shift(bars.close, -1)"), refused},
		{"ta.shift(bars=-5)", sigSrc("x = ta.shift(bars.close, bars=-5)"), refused},
		{"getattr then index", sigSrc("x = getattr(bars, 'close')[0]"), refused},
		{"struct field index", sigSrc("x = ta.macd(bars.close).hist[0]"), refused},
		{"struct field len", sigSrc("x = len(ta.bbands(bars.close).upper)"), refused},
		{"user indicator indexes", "load('indicators/last', 'last')\n" + sigSrc("x = last(bars.close)"), refused},
		{"user indicator iterates", "load('indicators/total', 'total')\n" + sigSrc("x = total(bars.close)"), refused},
		{"user indicator len", "load('indicators/sz', 'size_of')\n" + sigSrc("x = size_of(bars.close)"), refused},
		{"leaky host builtin (signals)", "def signals(bars):\n    return {'long': peek(bars.close) > bars.close, 'exit': peek(bars.close) < bars.close}\n", proof},
		// signals(bars): what is allowed is causal.
		{"str/repr/format show nothing", sigSrc("print(str(bars.close), repr(bars.high), '%s' % bars.low, '{}'.format(bars.open > 1), str(bars))"), causal},
		{"dir", sigSrc("x = dir(bars) + dir(bars.close) + dir(ta.macd(bars.close))"), causal},
		{"getattr", sigSrc("x = getattr(bars, 'close') + 1"), causal},
		{"hasattr and type", sigSrc("x = hasattr(bars, 'close') and type(bars.close) == 'series'"), causal},
		{"series name", sigSrc("x = bars.series"), causal},
		{"ta.shift(1)", sigSrc("x = ta.shift(bars.close, 1) > bars.close"), causal},
		{"struct fields combined", sigSrc("m = ta.macd(bars.close)\nx = ta.cross_above(m.macd, m.signal) & (m.hist > 0)"), causal},
		{"user indicator from ta", "load('indicators/smooth', 'smooth')\n" + sigSrc("x = smooth(bars.close) > bars.close"), causal},
		{"None comparison", sigSrc("x = bars.close == None"), causal},

		// setup/on_bar: history only.
		{"negative index in on_bar", barSrc("pass", "x = ctx.close[-1]"), refused},
		{"negative index in setup", barSrc("x = ctx.close[-1]", "pass"), refused},
		{"indicator negative index", barSrc("pass", "x = ctx.f[-2]"), refused},
		{"slice in on_bar", barSrc("pass", "x = ctx.close[0:2]"), refused},
		{"for in on_bar", barSrc("pass", "for v in ctx.close:\n    pass"), refused},
		{"list() in setup", barSrc("x = list(ctx.close)", "pass"), refused},
		{"sorted() in on_bar", barSrc("pass", "x = sorted(ctx.high)"), refused},
		{"zip() in on_bar", barSrc("pass", "x = zip(ctx.close, ctx.open)"), refused},
		{"enumerate() in on_bar", barSrc("pass", "x = enumerate(ctx.close)"), refused},
		{"comprehension in on_bar", barSrc("pass", "x = [v for v in ctx.f]"), refused},
		{"ta.nz(list) in setup", barSrc("x = ta.nz([1.0, 2.0])", "pass"), refused},
		{"ta.shift(-1) in setup", barSrc("ctx.next = ta.shift(ctx.close, -1)", "pass"), refused},
		{"getattr in on_bar", barSrc("pass", "x = getattr(ctx, 'close')[-1]"), refused},
		{"struct field in on_bar", barSrc("ctx.m = ta.macd(ctx.close)", "x = ctx.m.hist[-1]"), refused},
		{"user indicator in on_bar", "load('indicators/ahead', 'ahead')\n" + barSrc("pass", "x = ahead(ctx.close)"), refused},
		{"leaky host builtin (on_bar)", "def setup(ctx):\n    ctx.nxt = peek(ctx.close)\ndef on_bar(ctx):\n    if ctx.nxt[0] != None and ctx.nxt[0] > ctx.close[0]:\n        ctx.target(1)\n    else:\n        ctx.flat()\n", proof},
		// setup/on_bar: what is allowed is causal.
		{"len is history", barSrc("pass", "if len(ctx.close) > 500 and ctx.position == 0:\n    ctx.target(0.5)"), causal},
		{"str shows no length", barSrc("pass", "print(str(ctx.close))"), causal},
		{"dir(ctx)", barSrc("pass", "x = dir(ctx) + dir(ctx.bar)"), causal},
		{"far past is None", barSrc("pass", "x = ctx.close[1000000] == None or fail('not None')"), causal},
		{"current bar and index", barSrc("pass", "x = ctx.bar.close == ctx.close[0] and ctx.index >= 0 or fail('bar')"), causal},
		{"setup sees no bar", barSrc("x = ctx.close[0] == None and len(ctx.close) == 0 and ctx.index == None or fail('setup sees a bar')", "pass"), causal},
		{"truth in on_bar", barSrc("pass", "x = bool(ctx.close > ctx.open)"), causal},
		{"membership in on_bar", barSrc("pass", "x = 3 in ctx.close"), causal},
	}
	var nRefused, nProof, nCausal int
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rep := Validate(context.Background(), Source{Name: "leak.star", Text: tc.src}, Options{Indicators: leakIndicators})
			if tc.want == causal {
				if !rep.Valid || !Passed(rep.LookaheadCheck) {
					t.Fatalf("want valid with the proof passed; got valid=%v check=%q problems=%+v\n%s", rep.Valid, rep.LookaheadCheck, rep.Problems, tc.src)
				}
				if strings.Contains(rep.Output, "bars=") || strings.Contains(rep.Output, "bars(") {
					t.Errorf("printed output shows the length: %.200q", rep.Output)
				}
				if strings.HasPrefix(tc.src, "def signals") && strings.Contains(tc.src, "print(") && rep.Output != "series series series bool series bars\n" {
					t.Errorf("signals printed %q; a series there shows nothing but its type", rep.Output)
				}
				return
			}
			if rep.Valid || len(rep.Problems) != 1 {
				t.Fatalf("want one lookahead problem; got valid=%v problems=%+v\n%s", rep.Valid, rep.Problems, tc.src)
			}
			p := rep.Problems[0]
			if p.Kind != KindLookahead || p.Line == 0 || p.Column == 0 || p.Hint == "" {
				t.Fatalf("want a lookahead problem with a position and a hint; got %+v\n%s", p, tc.src)
			}
			isProof := strings.Contains(p.Message, "lookahead proof")
			if isProof != (tc.want == proof) {
				t.Fatalf("want %s, got %+v", tc.want, p)
			}
			if tc.want == refused && p.File == "leak.star" {
				if want := offendingLine(tc.src); p.Line != want {
					t.Errorf("at line %d, want %d: %+v", p.Line, want, p)
				}
			}
			if tc.want == refused && strings.HasPrefix(tc.src, "def signals") && p.Hint != HintSignals {
				t.Errorf("hint %q, want the spec's %q", p.Hint, HintSignals)
			}
		})
		switch tc.want {
		case refused:
			nRefused++
		case proof:
			nProof++
		default:
			nCausal++
		}
	}
	if nRefused+nProof+nCausal < 40 {
		t.Fatalf("only %d leak attempts", nRefused+nProof+nCausal)
	}
	t.Logf("%d refused by construction, %d caught by the proof, %d shown causal", nRefused, nProof, nCausal)
}

// offendingLine is the line of src a refused case is reported at: the
// first that assigns x, loops, tests a series or stores a shifted one.
func offendingLine(src string) int {
	for i, line := range strings.Split(src, "\n") {
		for _, at := range []string{"x = ", "for v in", "if bars.close > 100", "ctx.next ="} {
			if strings.Contains(line, at) {
				return i + 1
			}
		}
	}
	return 0
}

// TestProofNamesFirstBar: the proof's problem names the first bar and the
// output that differ, with the bar's time.
func TestProofNamesFirstBar(t *testing.T) {
	registerTestBuiltin(t, "peek", leakyPeek)
	src := "def signals(bars):\n    return {'long': peek(bars.close) > bars.close}\n"
	s := mustLoad(t, src, Options{})
	bars := rampBars(100)
	_, tr, err := s.SignalsTrace(bg(t), bars)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.CheckLookahead(bg(t), bars, tr)
	e := asError(t, err, KindLookahead)
	// On a ramp every next close is higher: long is true at bar i < 99 in the
	// full run; a prefix of c bars cannot see bar c, so bar c-1 differs. The
	// shortest prefix (1 bar, the warm-up is 0) differs at bar 0.
	want := `lookahead proof: "long" at bar 0 (2024-01-01T00:00:00Z) is true in the run over all 100 bars but false in the run over the first 1`
	if !strings.Contains(e.Msg, want) || e.Bar != 0 || e.Line != 1 || e.Phase != "signals" {
		t.Fatalf("got %+v (%v), want %q at bar 0 on the signals def", e, e, want)
	}
}

func TestPrefixCuts(t *testing.T) {
	for _, tc := range []struct {
		n, warmup int
		want      []int
	}{
		{1000, 30, []int{15, 272, 515, 999}},
		{1000, 0, []int{1, 250, 500, 999}},
		{1000, 5000, []int{250, 500, 750, 999}},
		{1000, 999, []int{250, 500, 750, 999}},
		{3, 0, []int{1, 2}},
		{5, 2, []int{1, 2, 3, 4}},
		{2, 0, []int{1}},
		{1, 0, nil},
	} {
		got := PrefixCuts(tc.n, tc.warmup)
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("PrefixCuts(%d, %d) = %v, want %v", tc.n, tc.warmup, got, tc.want)
		}
		for _, c := range got {
			if c < 1 || c >= tc.n {
				t.Errorf("cut %d outside [1, %d)", c, tc.n)
			}
		}
		if want := fmt.Sprintf("passed (%d prefixes)", len(got)); len(got) == 1 {
			if LookaheadPassed(1, 0, 0, 0, false) != "passed (1 prefix)" {
				t.Errorf("LookaheadPassed(1, 0, 0, 0, false) = %q", LookaheadPassed(1, 0, 0, 0, false))
			}
		} else if LookaheadPassed(len(got), 0, 0, 0, false) != want {
			t.Errorf("LookaheadPassed(%d, 0, 0) = %q", len(got), LookaheadPassed(len(got), 0, 0, 0, false))
		}
		if tc.n >= 5 && tc.warmup >= 2 && tc.warmup < tc.n && got[0] > tc.warmup {
			t.Errorf("PrefixCuts(%d, %d): no cut inside the warm-up", tc.n, tc.warmup)
		}
	}
}

// TestProofOnBarIntents: an on_bar leak is reported with the intents that
// differ; a causal run over real-looking bars passes.
func TestProofOnBarIntents(t *testing.T) {
	registerTestBuiltin(t, "peek", leakyPeek)
	bars := SmokeBars(500)
	leaky := mustLoad(t, "def setup(ctx):\n    ctx.n = peek(ctx.close)\ndef on_bar(ctx):\n    if ctx.n[0] != None and ctx.n[0] > ctx.close[0]:\n        ctx.target(1)\n    else:\n        ctx.flat()\n", Options{})
	tr := stepAll(t, leaky, bars)
	_, err := leaky.CheckLookahead(bg(t), bars, tr)
	e := asError(t, err, KindLookahead)
	if !strings.Contains(e.Msg, "the intent at bar") || !strings.Contains(e.Msg, "ctx.") || e.Phase != "on_bar" || e.Line != 3 {
		t.Fatalf("got %v", e)
	}
	causal := mustLoad(t, barSrc("pass", "pass"), Options{})
	if got, err := causal.CheckLookahead(bg(t), bars, stepAll(t, causal, bars)); err != nil || !Passed(got) {
		t.Fatalf("causal: %q %v", got, err)
	}
	// A trace that skipped bars cannot be checked.
	if _, err := causal.CheckLookahead(bg(t), bars, Trace{}); err == nil {
		t.Fatal("an empty trace passed")
	}
}

func stepAll(t *testing.T, s *Strategy, bars strategy.Bars) Trace {
	t.Helper()
	st, err := s.Begin(bg(t), bars)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	st.Record()
	acct := strategy.Account{Cash: 1000, Equity: 1000}
	for i := 0; i < bars.Len(); i++ {
		in, err := st.Step(i, acct)
		if err != nil {
			t.Fatal(err)
		}
		if in.Kind == strategy.Target {
			acct.Position = in.Value
		}
		acct.Equity = acct.Cash + acct.Position*bars.Close[i]
	}
	tr, ok := st.Trace()
	if !ok {
		t.Fatal("no trace")
	}
	return tr
}

// TestProofComparesEverySeries: a leak that changes no decision at any cut
// is still caught, because every series signals(bars) or setup computed is
// compared on the shared bars too.
func TestProofComparesEverySeries(t *testing.T) {
	registerTestBuiltin(t, "peek", leakyPeek)
	for _, src := range []string{
		"def signals(bars):\n    unused = peek(bars.close) + 0\n    return {'long': bars.close > ta.sma(bars.close, 10)}\n",
		"def setup(ctx):\n    ctx.unused = peek(ctx.close) * 2\ndef on_bar(ctx):\n    pass\n",
	} {
		rep := Validate(bg(t), Source{Name: "quiet.star", Text: src}, Options{})
		if rep.Valid || len(rep.Problems) != 1 || rep.Problems[0].Kind != KindLookahead {
			t.Fatalf("%s: %+v", src, rep)
		}
		if m := rep.Problems[0].Message; !strings.Contains(m, "series #1 (series ") || !strings.Contains(m, "but None in the run over the first") {
			t.Errorf("message %q does not name the series", m)
		}
	}
}

// TestCatalogPrefixExact: every ta.* function at its defaults gives, on a
// prefix of the bars, exactly the values it gives on those bars in the full
// run. The proof compares series bit for bit, so this is what keeps it from
// refusing a causal strategy; a function that failed here would also be a
// lookahead of its own.
func TestCatalogPrefixExact(t *testing.T) {
	bars := SmokeBars(600)
	cols := map[string][]float64{"open": bars.Open, "high": bars.High, "low": bars.Low, "close": bars.Close, "volume": bars.Volume}
	cond := make([]float64, bars.Len())
	for i := range cond {
		if bars.Close[i] > bars.Open[i] {
			cond[i] = 1
		}
	}
	memo := ta.NewMemo(0)
	for _, e := range ta.Builtin().Entries() {
		in := func(n int) ([][]float64, []ta.Key) {
			var vals [][]float64
			var keys []ta.Key
			for j, name := range e.Inputs {
				v, ok := cols[name]
				switch {
				case name == "condition":
					v = cond
				case !ok && j%2 == 1:
					v = bars.Open
				case !ok:
					v = bars.Close
				}
				vals = append(vals, v[:n])
				keys = append(keys, memo.ValuesKey(v[:n]))
			}
			return vals, keys
		}
		fv, fk := in(bars.Len())
		for _, p := range catalogParamSets(e) {
			full, _, err := memo.Compute(e, fv, fk, p)
			if err != nil {
				t.Fatalf("%s%v: %v", e.Name, p, err)
			}
			for _, cut := range PrefixCuts(bars.Len(), e.Lookback(p)) {
				pv, pk := in(cut)
				pre, _, err := memo.Compute(e, pv, pk, p)
				if err != nil {
					t.Fatalf("%s%v over %d bars: %v", e.Name, p, cut, err)
				}
				for o := range full.Outputs {
					for i := 0; i < cut; i++ {
						if a, b := full.Outputs[o][i], pre.Outputs[o][i]; !same(a, b) {
							t.Errorf("ta.%s%v output %d at bar %d: %v over all bars, %v over the first %d", e.Name, p, o, i, a, b, cut)
							break
						}
					}
				}
			}
		}
	}
}

// catalogParamSets are the defaults, every parameter at its lower bound
// (where the bound is a usable number), and each moving-average type.
func catalogParamSets(e *ta.Entry) [][]float64 {
	sets := [][]float64{e.Defaults()}
	low := e.Defaults()
	for i, q := range e.Params {
		if q.Min > -1e6 && q.Min < 1e6 {
			low[i] = q.Min
		}
	}
	sets = append(sets, low)
	for i, q := range e.Params {
		if q.Type == ta.MAType {
			for m := range ta.MATypes {
				p := e.Defaults()
				p[i] = float64(m)
				sets = append(sets, p)
			}
		}
	}
	return sets
}

// TestProofCancelled: a cancelled proof is the caller's cancellation, not
// a lookahead.
func TestProofCancelled(t *testing.T) {
	s := mustLoad(t, sigSrc("pass"), Options{})
	bars := SmokeBars(300)
	_, tr, err := s.SignalsTrace(bg(t), bars)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = s.CheckLookahead(ctx, bars, tr)
	asError(t, err, KindCanceled)
}

// TestProofKeepsBoundedSeries: a strategy that builds series in a loop
// does not make the proof keep every intermediate one alive (each a value
// per bar): a traced run keeps at most trackCap of them, its prefix runs
// the same ones, and the proof still passes and still catches a leak
// among them. A plain Signals run keeps none.
func TestProofKeepsBoundedSeries(t *testing.T) {
	registerTestBuiltin(t, "peek", leakyPeek)
	bars := SmokeBars(50_000)
	limit := trackCap(bars.Len())
	// 400 series, past the cap of 335 (one per step: the proof's 36
	// prefixes rerun each, so more would only slow the test).
	loop := "def signals(bars):\n    acc = bars.close\n    for i in range(400):\n        acc = acc + (i + 1)\n    return {'long': acc > ta.sma(acc, 20)}\n"
	s := mustLoad(t, loop, Options{})
	_, tr, err := s.SignalsTrace(bg(t), bars)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.series) != limit {
		t.Fatalf("the run kept %d series, want its cap %d", len(tr.series), limit)
	}
	if got, err := s.CheckLookahead(bg(t), bars, tr); err != nil || !Passed(got) {
		t.Fatalf("%q %v", got, err)
	}
	r := newRun(s.memo, &bars)
	if r.tracing || r.trackCap != 0 {
		t.Fatal("a new run traces")
	}
	// A quiet leak among the kept series is still caught.
	leak := "def signals(bars):\n    unused = peek(bars.close) + 0\n    acc = bars.close\n    for i in range(400):\n        acc = acc + 1\n    return {'long': bars.close > ta.sma(bars.close, 10)}\n"
	s = mustLoad(t, leak, Options{})
	_, tr, err = s.SignalsTrace(bg(t), bars)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.CheckLookahead(bg(t), bars, tr)
	asError(t, err, KindLookahead)
}

// TestProofAfterBust: the engine stops calling on_bar once the account is
// bust, so the trace ends early; the proof checks the bars that were
// decided instead of refusing the backtest for a trace of "too few" bars.
func TestProofAfterBust(t *testing.T) {
	bars := SmokeBars(600)
	src := "def setup(ctx):\n    pass\ndef on_bar(ctx):\n    ctx.target(-80)\n"
	s := mustLoad(t, src, Options{})
	st, err := s.Begin(bg(t), bars)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	st.Record()
	res, err := backtest.Run(bg(t), bars, backtest.DefaultConfig(), backtest.Decisions{Stepper: st})
	if err != nil {
		t.Fatal(err)
	}
	tr, ok := st.Trace()
	if !ok || tr.steps.len() >= bars.Len() {
		t.Fatalf("the account did not go bust (%d of %d bars stepped, final equity %v): the test proves nothing", tr.steps.len(), bars.Len(), res.Metrics.FinalEquity)
	}
	if got, err := s.CheckLookahead(bg(t), bars, tr); err != nil || !Passed(got) {
		t.Fatalf("%q %v", got, err)
	}
	// A trace of more bars than were given, or of none, cannot be checked.
	if _, err := s.CheckLookahead(bg(t), bars.Slice(0, tr.steps.len()-1), tr); err == nil {
		t.Fatal("a trace longer than its bars passed")
	}
	if _, err := s.CheckLookahead(bg(t), bars, Trace{}); err == nil {
		t.Fatal("an empty trace passed")
	}
}

// TestProofOfLazyCrosses: crosses (lazy until used: lazyCross) are checked
// through their inputs and what uses them, and a traced run leaves nothing
// lazy for the prefix runs to compute from several goroutines (under
// -race this is also the test that the comparison does not race): a setup
// cross that on_bar never reads, signals whose crosses only fed the flags,
// and a leak whose only way out is a cross.
func TestProofOfLazyCrosses(t *testing.T) {
	registerTestBuiltin(t, "peek", leakyPeek)
	bars := SmokeBars(600)
	onBar := mustLoad(t, "def setup(ctx):\n    ctx.f = ta.sma(ctx.close, 5)\n    ctx.x = ta.cross_above(ctx.f, ta.sma(ctx.close, 20))\n"+
		"def on_bar(ctx):\n    if ctx.f[0] != None and ctx.f[0] > ctx.close[0]:\n        ctx.target(1)\n    else:\n        ctx.flat()\n", Options{})
	if got, err := onBar.CheckLookahead(bg(t), bars, stepAll(t, onBar, bars)); err != nil || !Passed(got) {
		t.Fatalf("on_bar with an unread setup cross: %q %v", got, err)
	}
	sig := mustLoad(t, "def signals(bars):\n    f, s = ta.sma(bars.close, 5), ta.sma(bars.close, 20)\n"+
		"    return {\"long\": ta.cross_above(f, s), \"exit\": ta.cross_below(f, s)}\n", Options{})
	_, tr, err := sig.SignalsTrace(bg(t), bars)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range tr.series {
		if s.lazy != nil {
			t.Fatalf("%s is still lazy in the trace", s.what)
		}
	}
	if got, err := sig.CheckLookahead(bg(t), bars, tr); err != nil || !Passed(got) {
		t.Fatalf("signals of crosses: %q %v", got, err)
	}
	leaky := mustLoad(t, "def signals(bars):\n    s = ta.sma(bars.close, 10)\n    return {\"long\": ta.cross_above(peek(bars.close), s), \"exit\": ta.cross_below(peek(bars.close), s)}\n", Options{})
	_, tr, err = leaky.SignalsTrace(bg(t), bars)
	if err != nil {
		t.Fatal(err)
	}
	_, err = leaky.CheckLookahead(bg(t), bars, tr)
	if e := asError(t, err, KindLookahead); !strings.Contains(e.Msg, `"long"`) && !strings.Contains(e.Msg, `"exit"`) {
		t.Fatalf("a leak out through crosses only: %v", e)
	}
}
