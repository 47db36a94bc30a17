package script

import (
	"math"
	"os"
	"testing"

	"go.starlark.net/starlark"

	"wicket/strategy"
)

// maxStepAllocs is the measured figure TestOnBarStepAllocs holds a Step to.
const maxStepAllocs = 10.0

// TestOnBarReadsBoxOncePerBar: on_bar's usual reads, s[0] and s[1] of a
// series at each bar, box one new value per bar (s[1] is the value s[0]
// was at the bar before), and every read is the series' value there, None
// outside its history and in a gap.
func TestOnBarReadsBoxOncePerBar(t *testing.T) {
	const n = 64
	vals := make([]float64, n)
	for i := range vals {
		vals[i] = 100 + float64(i)/8
	}
	vals[20] = math.NaN()
	r := newRun(nil, nil)
	r.n = n
	s := &Series{vals: vals, run: r}
	zero, one := starlark.MakeInt(0), starlark.MakeInt(1)
	want := func(pos int) starlark.Value { return s.elem(pos) }
	for i := 0; i < n; i++ {
		r.cursor = i
		for k, key := range []starlark.Value{zero, one, zero, one} {
			got, found, err := s.Get(key)
			if err != nil || !found {
				t.Fatalf("bar %d, s[%d]: %v, %v", i, k%2, found, err)
			}
			if w := want(i - k%2); got != w {
				t.Fatalf("bar %d, s[%d] = %v, want %v", i, k%2, got, w)
			}
		}
	}
	bar := 0
	allocs := testing.AllocsPerRun(200, func() {
		r.cursor = 30 + bar%30 // past the gap; bar by bar, as on_bar reads
		bar++
		if _, _, err := s.Get(zero); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.Get(one); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 1 {
		t.Fatalf("reading s[0] and s[1] at each bar makes %.1f allocations a bar, want at most 1", allocs)
	}
}

// TestOnBarStepAllocs bounds what one Step of the sma_cross_bar template
// allocates, averaged over bars with and without a cross: the interpreter's
// own (on_bar's frame, the tuple of four reads and its unpacking, the
// arguments of each comparison) and one boxed value per series read. The
// ctx, its builtins and the bar view are made once per run, not per bar; a
// per-bar allocation of ours that comes back fails this.
func TestOnBarStepAllocs(t *testing.T) {
	text, err := os.ReadFile("../templates/star/sma_cross_bar.star")
	if err != nil {
		t.Fatal(err)
	}
	const n = 4000
	bars := SmokeBars(n)
	s := mustLoad(t, string(text), Options{})
	st, err := s.Begin(bg(t), bars)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	acct := strategy.Account{Cash: 10000, Equity: 10000}
	for i := 0; i < st.Warmup()+1; i++ {
		if _, err := st.Step(i, acct); err != nil {
			t.Fatal(err)
		}
	}
	i, crosses := st.Warmup()+1, 0
	allocs := testing.AllocsPerRun(n-i-1, func() {
		in, err := st.Step(i, acct)
		if err != nil {
			t.Fatal(err)
		}
		if in.Kind != strategy.None {
			crosses++
		}
		i++
	})
	if crosses == 0 {
		t.Fatal("no bar crossed: the average covers no intent")
	}
	t.Logf("%.2f allocations a bar, %d bars of %d with an intent", allocs, crosses, n)
	if allocs > maxStepAllocs {
		t.Fatalf("one on_bar step of sma_cross_bar makes %.2f allocations, want at most %.1f", allocs, maxStepAllocs)
	}
}
