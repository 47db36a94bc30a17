package script

import (
	"math"
	"testing"

	"go.starlark.net/starlark"
)

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
