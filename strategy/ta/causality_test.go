package ta

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
)

// The causality property: a function's output on the first k bars is the
// first k values of its output on all the bars, bit for bit, for every k.
// A function that breaks it read a later bar (as go-talib's MFI did when
// the first window's money flow was under 1.0: every value came one bar
// early).

// hostileSeries are short series built to reach the branches where a
// function's start, or a special case, depends on the data: a flat
// zero-volume start, flat stretches, zero volumes, NaN gaps, leading NaNs
// (a chained indicator's warm-up), prices of 1e-4 and a single bar.
func hostileSeries() map[string]columns {
	r := rand.New(rand.NewSource(28))
	build := func(n int, start, tick float64, flat func(int) bool, gap func(int) bool, zeroVol func(int) bool) columns {
		c := columns{}
		price := start
		for i := 0; i < n; i++ {
			open := price
			var hi, lo float64
			vol := math.Round(1000 + 1000*r.Float64())
			if flat(i) {
				hi, lo, vol = price, price, 0
			} else {
				price = math.Max(tick, math.Round(price*math.Exp(0.01*r.NormFloat64())/tick)*tick)
				hi = math.Round(math.Max(open, price)*(1+0.004*r.Float64())/tick) * tick
				lo = math.Max(tick, math.Round(math.Min(open, price)*(1-0.004*r.Float64())/tick)*tick)
			}
			if zeroVol(i) {
				vol = 0
			}
			o, h, l, cl := open, hi, lo, price
			if gap(i) {
				o, h, l, cl, vol = math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN()
			}
			c["open"] = append(c["open"], o)
			c["high"] = append(c["high"], h)
			c["low"] = append(c["low"], l)
			c["close"] = append(c["close"], cl)
			c["volume"] = append(c["volume"], vol)
			c["periods"] = append(c["periods"], float64(1+(i*7)%40))
		}
		return c
	}
	never := func(int) bool { return false }
	return map[string]columns{
		"zero-volume start": build(56, 100, 1e-4, func(i int) bool { return i < 6 }, never, func(i int) bool { return i < 9 }),
		"flat stretches":    build(56, 100, 1e-4, func(i int) bool { return (i >= 10 && i < 25) || (i >= 38 && i < 44) }, never, func(i int) bool { return i%11 == 0 }),
		"NaN gaps":          build(56, 100, 1e-4, never, func(i int) bool { return i == 20 || (i >= 35 && i < 38) }, never),
		"leading NaNs":      build(56, 100, 1e-4, never, func(i int) bool { return i < 7 }, never),
		"prices of 1e-4":    build(56, 1e-4, 1e-9, func(i int) bool { return i >= 30 && i < 36 }, never, never),
		"a single bar":      build(1, 100, 1e-4, never, never, never),
	}
}

// causalParams are the parameter sets the property runs at: the defaults
// and every integer at its lower bound (the shortest warm-ups, so the
// short series reach every function's output).
func causalParams(e *Entry) [][]float64 {
	sets := [][]float64{e.Defaults()}
	lo := e.Defaults()
	changed := false
	for i, q := range e.Params {
		if q.Type == Int && q.Min != q.Default {
			lo[i], changed = q.Min, true
		}
	}
	if changed && e.CheckParams(lo) == nil {
		sets = append(sets, lo)
	}
	return sets
}

// prefixDiff compares e's outputs on the first k bars with full's, bit for
// bit (any NaN is the same as any NaN), and describes the first difference.
func prefixDiff(e *Entry, in [][]float64, p []float64, full Result, k int) (string, error) {
	pre := make([][]float64, len(in))
	for i, col := range in {
		pre[i] = col[:k]
	}
	res, err := Compute(e, pre, p)
	if err != nil {
		return "", err
	}
	for j, col := range res.Outputs {
		for i := 0; i < k; i++ {
			a, b := full.Outputs[j][i], col[i]
			if math.Float64bits(a) != math.Float64bits(b) && !(math.IsNaN(a) && math.IsNaN(b)) {
				return fmt.Sprintf("%s[%d] is %v over all %d bars but %v over the first %d", e.Outputs[j], i, a, len(in[0]), b, k), nil
			}
		}
	}
	return "", nil
}

// TestCausalEveryPrefix: every catalog function, on every prefix of every
// hostile series and on random prefixes of a long one, gives its output on
// all the bars, bit for bit.
func TestCausalEveryPrefix(t *testing.T) {
	type run struct {
		name string
		bars columns
		cuts func(n int) []int
	}
	every := func(n int) []int {
		c := make([]int, n)
		for k := range c {
			c[k] = k + 1
		}
		return c
	}
	var runs []run
	for name, bars := range hostileSeries() {
		runs = append(runs, run{name, bars, every})
	}
	long := randomWalk(3000, 28)
	for i := 1000; i < 1200; i++ { // a flat zero-volume stretch
		for _, k := range []string{"open", "high", "low", "close"} {
			long[k][i] = long["close"][999]
		}
		long["volume"][i] = 0
	}
	r := rand.New(rand.NewSource(1))
	runs = append(runs, run{"3000 bars", long, func(n int) []int {
		c := []int{999, 1001, 1199, 1201, n - 1}
		for len(c) < 8 {
			c = append(c, 1+r.Intn(n-1))
		}
		return c
	}})
	checked := 0
	for _, e := range Builtin().Entries() {
		for _, p := range causalParams(e) {
			for _, ru := range runs {
				in := inputsFor(e, ru.bars)
				n := len(in[0])
				full, err := Compute(e, in, p)
				if err != nil {
					t.Fatalf("%s%v on %s: %v", e.Name, p, ru.name, err)
				}
				for _, k := range ru.cuts(n) {
					why, err := prefixDiff(e, in, p, full, k)
					if err != nil {
						t.Fatalf("%s%v on %s, first %d bars: %v", e.Name, p, ru.name, k, err)
					}
					if why != "" {
						t.Errorf("%s%v on %s: %s", e.Name, p, ru.name, why)
						break
					}
					checked++
				}
			}
		}
	}
	t.Logf("%d prefixes checked", checked)
}
