package script

import (
	"math/rand/v2"
	"testing"

	"wicket/strategy/ta"
)

// TestCatalogPrefixExactLong is the catalog's prefix property (see
// TestCatalogPrefixExact) on a long series, at float parameters drawn off
// any grid, at the cuts the proof itself draws over the whole span: a
// function whose values drift from a prefix run's only late in a long
// series, or only at a fractional parameter, would make the proof refuse a
// causal strategy (issue 44 item 9).
func TestCatalogPrefixExactLong(t *testing.T) {
	const n = 20_000
	bars := SmokeBars(n)
	cols := map[string][]float64{"open": bars.Open, "high": bars.High, "low": bars.Low, "close": bars.Close, "volume": bars.Volume}
	cond := make([]float64, n)
	for i := range cond {
		if bars.Close[i] > bars.Open[i] {
			cond[i] = 1
		}
	}
	rng := rand.New(rand.NewPCG(44, 9))
	memo := ta.NewMemo(0)
	for _, e := range ta.Builtin().Entries() {
		in := func(m int) ([][]float64, []ta.Key) {
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
				vals = append(vals, v[:m])
				keys = append(keys, memo.ValuesKey(v[:m]))
			}
			return vals, keys
		}
		p := e.Defaults()
		floats := false
		for i, q := range e.Params {
			if q.Type != ta.Float {
				continue
			}
			lo, hi := max(q.Min, -100), min(q.Max, 100)
			if q.Min > -1e6 && q.Max < 1e6 && hi > lo {
				p[i] = lo + (hi-lo)*(0.1+0.8*rng.Float64()) // off any step
				floats = true
			}
		}
		fv, fk := in(n)
		full, _, err := memo.Compute(e, fv, fk, p)
		if err != nil {
			t.Fatalf("%s%v: %v", e.Name, p, err)
		}
		cuts := append(PrefixCuts(n, e.Lookback(p)), DrawnPrefixCuts(n, e.Lookback(p), rng.Uint64())...)
		if !floats {
			cuts = cuts[:4+8] // the fixed ones and 8 drawn: the float ones are the point
		}
		for _, cut := range cuts {
			pv, pk := in(cut)
			pre, _, err := memo.Compute(e, pv, pk, p)
			if err != nil {
				t.Fatalf("%s%v over %d bars: %v", e.Name, p, cut, err)
			}
			for o := range full.Outputs {
				for i := 0; i < cut; i++ {
					if a, b := full.Outputs[o][i], pre.Outputs[o][i]; !same(a, b) {
						t.Errorf("ta.%s%v output %d at bar %d: %v over all %d bars, %v over the first %d", e.Name, p, o, i, a, n, b, cut)
						break
					}
				}
			}
		}
	}
}

// TestProofLongFloatRankTop: causal strategies pass the whole proof over a
// long series with float knobs off their step, and portfolio strategies
// reading across assets with u.rank and u.top pass it over a long
// calendar; the same cross-sectional reads over a leaked series are
// caught there.
func TestProofLongFloatRankTop(t *testing.T) {
	bars := SmokeBars(40_000)
	for _, src := range []string{
		"k = param.float('k', 1.5, min=0.1, max=5.0)\ndef signals(bars):\n    m = ta.sma(bars.close, 30)\n    d = ta.stddev(bars.close, 30)\n    return {'long': bars.close < m - d * k, 'exit': bars.close > m, 'size': 0.37}\n",
		"k = param.float('k', 1.5, min=0.1, max=5.0)\ndef setup(ctx):\n    ctx.m = ta.ema(ctx.close, 40)\n    ctx.kept = 0.0\ndef on_bar(ctx):\n    ctx.kept = ctx.kept * 0.9 + ctx.close[0] * 0.1\n    if ctx.m[0] != None and ctx.kept > ctx.m[0] * (1 + k / 1000):\n        ctx.target(0.63)\n    else:\n        ctx.flat()\n",
	} {
		s := mustLoad(t, src, Options{Overrides: map[string]any{"k": 1.2345678}})
		var tr Trace
		if s.Style() == StyleSignals {
			_, tr, _ = s.SignalsTrace(bg(t), bars)
		} else {
			tr = stepAll(t, s, bars)
		}
		if check, err := s.CheckLookahead(bg(t), bars, tr); err != nil || !Passed(check) {
			t.Errorf("%s: %q %v", s.Style(), check, err)
		}
	}

	registerTestBuiltin(t, "late_sma", lateSMA)
	assets := SmokeUniverse([]string{"A-USD@1h", "B-USD@1h", "C-USD@1h", "D-USD@1h"}, 6000)
	lateFrom, lateTo = 6000*55/100, 6000-40
	head := "universe = [\"A-USD@1h\", \"B-USD@1h\", \"C-USD@1h\", \"D-USD@1h\"]\nw = param.float('w', 0.5, min=0.0, max=1.0)\ndef signals(u):\n"
	for _, c := range []struct {
		name, body string
		leaks      bool
	}{
		{"top of momentum", "    r = u.top({a: ta.roc(u[a].close, 20) for a in u.assets}, 2)\n    return {a: r[a] * w for a in u.assets}", false},
		{"rank of momentum", "    r = u.rank({a: ta.roc(u[a].close, 20) for a in u.assets})\n    return {a: (r[a] > 2) * w for a in u.assets}", false},
		{"top of a late leak", "    r = u.top({a: late_sma(u[a].close, 5) - u[a].close for a in u.assets}, 1)\n    return {a: r[a] * w for a in u.assets}", true},
		{"rank of a late leak", "    r = u.rank({a: late_sma(u[a].close, 5) - u[a].close for a in u.assets})\n    return {a: (r[a] > 3) * w for a in u.assets}", true},
	} {
		s := mustLoad(t, head+c.body+"\n", Options{Overrides: map[string]any{"w": 0.4321}})
		_, tr, err := s.WeightsTrace(bg(t), assets)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		check, err := s.CheckPortfolioLookahead(bg(t), assets, tr)
		switch {
		case !c.leaks && (err != nil || !Passed(check)):
			t.Errorf("%s: %q, %v", c.name, check, err)
		case c.leaks && err == nil:
			t.Errorf("%s: the late leak passed the proof (%s)", c.name, check)
		case c.leaks:
			if e := asError(t, err, KindLookahead); e.Bar < lateFrom {
				t.Errorf("%s: caught at bar %d, before the leak starts", c.name, e.Bar)
			}
		}
	}
}
