package ta

import (
	"math"
	"math/rand"
	"strings"
	"sync"
	"testing"

	"pgregory.net/rapid"
)

func randomWalk(n int, seed int64) columns {
	r := rand.New(rand.NewSource(seed))
	c := columns{}
	price := 100.0
	for i := 0; i < n; i++ {
		open := price
		price *= math.Exp(r.NormFloat64() * 0.01)
		hi := math.Max(open, price) * (1 + r.Float64()*0.005)
		lo := math.Min(open, price) * (1 - r.Float64()*0.005)
		c["open"] = append(c["open"], open)
		c["high"] = append(c["high"], hi)
		c["low"] = append(c["low"], lo)
		c["close"] = append(c["close"], price)
		c["volume"] = append(c["volume"], 1000+r.Float64()*1000)
	}
	return c
}

func slice(c columns, n int) columns {
	out := columns{}
	for k, v := range c {
		out[k] = v[:n]
	}
	return out
}

// TestShortInputs runs every entry on inputs from empty to just past its
// warm-up: never a panic, all missing while too short, a value once long
// enough.
func TestShortInputs(t *testing.T) {
	bars := randomWalk(200, 1)
	for _, e := range Builtin().Entries() {
		lb := e.Warmup
		for n := 0; n <= lb+2 && n <= 200; n++ {
			res, err := Compute(e, inputsFor(e, slice(bars, n)), e.Defaults())
			if err != nil {
				t.Fatalf("%s on %d bars: %v", e.Name, n, err)
			}
			for j, col := range res.Outputs {
				if len(col) != n {
					t.Fatalf("%s on %d bars: output %d has %d values", e.Name, n, j, len(col))
				}
				for i := 0; i < min(res.Start, n); i++ {
					if !math.IsNaN(col[i]) {
						t.Fatalf("%s on %d bars: %s[%d] = %v before Start %d", e.Name, n, e.Outputs[j], i, col[i], res.Start)
					}
				}
			}
			if e.raw {
				continue
			}
			if n <= lb && res.Start != n {
				t.Errorf("%s on %d bars (warm-up %d): Start %d, want %d (no values)", e.Name, n, lb, res.Start, n)
			}
			if n > lb && res.Start != lb {
				t.Errorf("%s on %d bars: Start %d, want %d", e.Name, n, res.Start, lb)
			}
		}
	}
}

// TestRandomParams: any parameters within the catalog bounds (periods kept
// small) compute without error, are missing exactly before Start, and
// Start is the catalog lookback.
func TestRandomParams(t *testing.T) {
	bars := randomWalk(300, 2)
	all := Builtin().Entries()
	rapid.Check(t, func(rt *rapid.T) {
		e := all[rapid.IntRange(0, len(all)-1).Draw(rt, "entry")]
		p := make([]float64, len(e.Params))
		for i, q := range e.Params {
			switch q.Type {
			case Int, MAType:
				hi := math.Min(q.Max, q.Min+40)
				p[i] = float64(rapid.IntRange(int(q.Min), int(hi)).Draw(rt, q.Name))
			default:
				lo, hi := math.Max(q.Min, -3), math.Min(q.Max, 3)
				p[i] = rapid.Float64Range(lo, hi).Draw(rt, q.Name)
			}
		}
		n := rapid.IntRange(0, 300).Draw(rt, "n")
		if e.check != nil && e.check(p) != nil {
			if _, err := Compute(e, inputsFor(e, slice(bars, n)), p); err == nil {
				rt.Fatalf("%s%v: accepted a combination its check refuses", e.Name, p)
			}
			return
		}
		res, err := Compute(e, inputsFor(e, slice(bars, n)), p)
		if err != nil {
			rt.Fatalf("%s%v on %d bars: %v", e.Name, p, n, err)
		}
		if !e.raw {
			want := min(e.Lookback(p), n)
			if n <= e.Lookback(p) {
				want = n
			}
			if res.Start != want {
				rt.Fatalf("%s%v on %d bars: Start %d, want %d", e.Name, p, n, res.Start, want)
			}
		}
		for j, col := range res.Outputs {
			for i := 0; i < min(res.Start, n); i++ {
				if !math.IsNaN(col[i]) {
					rt.Fatalf("%s%v: %s[%d] = %v before Start %d", e.Name, p, e.Outputs[j], i, col[i], res.Start)
				}
			}
		}
	})
}

func TestCheckParams(t *testing.T) {
	sma, _ := Builtin().Lookup("sma")
	macd, _ := Builtin().Lookup("macd")
	for _, tc := range []struct {
		e    *Entry
		p    []float64
		want string
	}{
		{sma, []float64{1}, "period = 1 is out of range [2, 100000]"},
		{sma, []float64{2.5}, "period must be a whole number"},
		{sma, []float64{math.NaN()}, "period must be a finite number"},
		{sma, []float64{10, 3}, "takes 1 parameters, got 2"},
		{macd, []float64{12, 26, 0}, "signal = 0 is out of range [1, 100000]"},
	} {
		err := tc.e.CheckParams(tc.p)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s%v: %v, want %q", tc.e.Name, tc.p, err, tc.want)
		}
	}
	if _, err := Compute(sma, [][]float64{{1, 2, 3}, {1}}, []float64{2}); err == nil || !strings.Contains(err.Error(), "takes 1 input series, got 2") {
		t.Errorf("two inputs to sma: %v", err)
	}
	cor, _ := Builtin().Lookup("correl")
	if _, err := Compute(cor, [][]float64{{1, 2, 3}, {1, 2}}, []float64{2}); err == nil || !strings.Contains(err.Error(), "same bars") {
		t.Errorf("inputs of different length: %v", err)
	}
}

// TestChaining: an indicator of an indicator starts where its input does,
// and equals the indicator computed on the input's valid part.
func TestChaining(t *testing.T) {
	bars := randomWalk(300, 3)
	rsi, _ := Builtin().Lookup("rsi")
	sma, _ := Builtin().Lookup("sma")
	r, err := Compute(rsi, [][]float64{bars["close"]}, []float64{14})
	if err != nil {
		t.Fatal(err)
	}
	s, err := Compute(sma, [][]float64{r.Outputs[0]}, []float64{10})
	if err != nil {
		t.Fatal(err)
	}
	if s.Start != 14+9 {
		t.Fatalf("sma(rsi) starts at %d, want %d", s.Start, 14+9)
	}
	direct, _ := Compute(sma, [][]float64{r.Outputs[0][14:]}, []float64{10})
	for i := s.Start; i < 300; i++ {
		if s.Outputs[0][i] != direct.Outputs[0][i-14] {
			t.Fatalf("bar %d: %v, want %v", i, s.Outputs[0][i], direct.Outputs[0][i-14])
		}
	}
	// Index outputs count from the first bar, not from the first valid input.
	mi, _ := Builtin().Lookup("maxindex")
	m, _ := Compute(mi, [][]float64{r.Outputs[0]}, []float64{5})
	for i := m.Start; i < 300; i++ {
		k := int(m.Outputs[0][i])
		if k > i || k <= i-5 {
			t.Fatalf("maxindex[%d] = %d, outside the window", i, k)
		}
		for j := i - 4; j <= i; j++ {
			if r.Outputs[0][j] > r.Outputs[0][k] {
				t.Fatalf("maxindex[%d] = %d but bar %d is higher", i, k, j)
			}
		}
	}
}

// TestMACDPaths: two independent code paths agree: MACD (our TA-Lib
// seeding) and MACDEXT with EMA legs (go-talib EMAs started where TA-Lib
// starts them). APO with EMA is not the MACD line in TA-Lib: its EMAs start
// at their own lookbacks (see TestAPOProperty).
func TestMACDPaths(t *testing.T) {
	x := randomWalk(400, 4)["close"]
	get := func(name string, p ...float64) Result {
		e, _ := Builtin().Lookup(name)
		r, err := Compute(e, [][]float64{x}, p)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, c := range [][3]float64{{12, 26, 9}, {5, 35, 5}, {26, 12, 9}, {3, 4, 1}} {
		m := get("macd", c[0], c[1], c[2])
		ext := get("macdext", c[0], 1, c[1], 1, c[2], 1)
		if m.Start != ext.Start {
			t.Fatalf("%v: macd starts at %d, macdext at %d", c, m.Start, ext.Start)
		}
		for i := m.Start; i < len(x); i++ {
			for j := 0; j < 3; j++ {
				if d := math.Abs(m.Outputs[j][i] - ext.Outputs[j][i]); d > 1e-9*math.Abs(m.Outputs[j][i])+1e-12 {
					t.Fatalf("%v bar %d output %d: macd %v, macdext %v", c, i, j, m.Outputs[j][i], ext.Outputs[j][i])
				}
			}
		}
	}
}

func TestHelpers(t *testing.T) {
	nan := math.NaN()
	run := func(name string, in [][]float64, p ...float64) []float64 {
		e, ok := Builtin().Lookup(name)
		if !ok {
			t.Fatalf("no %s", name)
		}
		if p == nil {
			p = e.Defaults()
		}
		r, err := Compute(e, in, p)
		if err != nil {
			t.Fatal(err)
		}
		return r.Outputs[0]
	}
	for _, tc := range []struct {
		name string
		got  []float64
		want []float64
	}{
		{"cross_above", run("cross_above", [][]float64{{1, 2, 3, 2, 3, 4}, {2, 2, 2, 2, 2, 2}}), []float64{nan, 0, 1, 0, 1, 0}},
		{"cross_below", run("cross_below", [][]float64{{3, 2, 1, 2, 1, 1}, {2, 2, 2, 2, 2, 2}}), []float64{nan, 0, 1, 0, 1, 0}},
		{"cross_above warm-up", run("cross_above", [][]float64{{nan, nan, 1, 3}, {2, 2, 2, 2}}), []float64{nan, nan, nan, 1}},
		{"highest", run("highest", [][]float64{{1, 3, 2, 5, 4}}, 3), []float64{nan, nan, 3, 5, 5}},
		{"lowest", run("lowest", [][]float64{{1, 3, 2, 5, 4}}, 2), []float64{nan, 1, 2, 2, 4}},
		{"highest 1", run("highest", [][]float64{{1, 3, 2}}, 1), []float64{1, 3, 2}},
		{"shift", run("shift", [][]float64{{1, 2, 3, 4}}, 2), []float64{nan, nan, 1, 2}},
		{"shift 0", run("shift", [][]float64{{1, nan, 3}}, 0), []float64{1, nan, 3}},
		{"shift past end", run("shift", [][]float64{{1, 2}}, 5), []float64{nan, nan}},
		{"nz", run("nz", [][]float64{{nan, 2, nan}}, -1), []float64{-1, 2, -1}},
		{"barssince", run("barssince", [][]float64{{0, 0, 1, 0, 0, 1, nan}}), []float64{nan, nan, 0, 1, 2, 0, 1}},
	} {
		if len(tc.got) != len(tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, tc.got, tc.want)
			continue
		}
		for i := range tc.want {
			if !(tc.got[i] == tc.want[i] || math.IsNaN(tc.got[i]) && math.IsNaN(tc.want[i])) {
				t.Errorf("%s: %v, want %v", tc.name, tc.got, tc.want)
				break
			}
		}
	}
	e, _ := Builtin().Lookup("shift")
	if err := e.CheckParams([]float64{-1}); err == nil {
		t.Error("shift by -1 accepted: that reads the future")
	}
}

func TestCatalogShape(t *testing.T) {
	c := Builtin()
	counts := map[Category]int{}
	talibCount := 0
	for _, e := range c.Entries() {
		counts[e.Category]++
		if e.TALib != "" {
			talibCount++
		}
		if e.Summary == "" || len(e.Outputs) == 0 || e.WarmupRule == "" {
			t.Errorf("%s: incomplete entry", e.Name)
		}
		for _, p := range e.Params {
			if p.Doc == "" || p.Min > p.Default || p.Default > p.Max {
				t.Errorf("%s.%s: missing doc or default outside [min, max]", e.Name, p.Name)
			}
		}
	}
	if talibCount < 60 {
		t.Errorf("%d TA-Lib functions, want at least 60", talibCount)
	}
	for _, k := range Categories {
		if counts[k] == 0 {
			t.Errorf("category %q is empty", k)
		}
	}
	got, err := c.Filter("volatility", "")
	if err != nil || len(got) != counts[Volatility] {
		t.Errorf("Filter(volatility): %d entries, %v", len(got), err)
	}
	got, _ = c.Filter("", "MACD")
	if len(got) != 3 {
		t.Errorf("Filter name MACD: %d entries, want macd, macdext, macdfix", len(got))
	}
	if _, err := c.Filter("oscillator", ""); err == nil || !strings.Contains(err.Error(), "valid: overlap, momentum") {
		t.Errorf("Filter(oscillator): %v", err)
	}
}

func TestMemo(t *testing.T) {
	m := NewMemo(0)
	x := randomWalk(1000, 5)["close"]
	kx := m.ValuesKey(x)
	if kx != m.ValuesKey(append([]float64(nil), x...)) {
		t.Fatal("equal contents, different keys")
	}
	if kx == m.ValuesKey(x[:999]) || m.ValuesKey(nil) == m.ValuesKey([]float64{0}) {
		t.Fatal("different contents, same key")
	}
	sma, _ := Builtin().Lookup("sma")
	for i := 0; i < 10; i++ {
		if _, _, err := m.Compute(sma, [][]float64{x}, []Key{kx}, []float64{20}); err != nil {
			t.Fatal(err)
		}
	}
	_, k30, _ := m.Compute(sma, [][]float64{x}, []Key{kx}, []float64{30})
	_, k20, _ := m.Compute(sma, [][]float64{x}, []Key{kx}, []float64{20})
	if k20 == k30 {
		t.Fatal("different parameters, same key")
	}
	s := m.Stats()
	if s.Computed["sma"] != 2 || s.Hits != 10 || s.Misses != 2 || s.Entries != 2 {
		t.Fatalf("stats %+v, want sma computed twice, 10 hits", s)
	}
	if _, _, err := m.Compute(sma, [][]float64{x}, []Key{kx}, []float64{0}); err == nil {
		t.Fatal("bad parameter accepted")
	}
	if m.Stats().Entries != 2 {
		t.Fatal("an error was cached")
	}
}

func TestMemoEviction(t *testing.T) {
	m := NewMemo(3 * (100*8 + 64))
	for i := 0; i < 5; i++ {
		k := m.Key("col", nil, []float64{float64(i)})
		m.Do(k, "col", func() (Result, error) { return Result{Outputs: [][]float64{make([]float64, 100)}}, nil })
	}
	s := m.Stats()
	if s.Entries != 3 || s.Bytes > 3*(100*8+64) {
		t.Fatalf("%+v: want 3 entries within budget", s)
	}
	// The most recent survive; the oldest was evicted and is computed again.
	m.Do(m.Key("col", nil, []float64{4}), "col", func() (Result, error) { t.Fatal("recent entry recomputed"); return Result{}, nil })
	again := false
	m.Do(m.Key("col", nil, []float64{0}), "col", func() (Result, error) { again = true; return Result{}, nil })
	if !again {
		t.Fatal("evicted entry served from cache")
	}
	// Larger than the whole budget: computed, returned, not cached.
	big := m.Key("big", nil, nil)
	for i := 0; i < 2; i++ {
		m.Do(big, "big", func() (Result, error) { return Result{Outputs: [][]float64{make([]float64, 10000)}}, nil })
	}
	if got := m.Stats().Computed["big"]; got != 2 {
		t.Fatalf("oversized result computed %d times, want 2 (never cached)", got)
	}
}

func TestMemoConcurrent(t *testing.T) {
	m := NewMemo(0)
	x := randomWalk(5000, 6)["close"]
	kx := m.ValuesKey(x)
	e, _ := Builtin().Lookup("ema")
	var wg sync.WaitGroup
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := 2; p < 12; p++ {
				if _, _, err := m.Compute(e, [][]float64{x}, []Key{kx}, []float64{float64(p)}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if got := m.Stats().Computed["ema"]; got != 10 {
		t.Fatalf("ema computed %d times by 16 goroutines, want 10 (once per period)", got)
	}
}

// TestAPOProperty: TA-Lib defines APO as MA(fast) - MA(slow), both of the
// chosen kind over the whole series (and PPO as their difference over the
// slow one, in percent), so ta.apo(c, f, s, t) equals ta.<t>(c, f) -
// ta.<t>(c, s) bit for bit wherever it has a value, for every kind and
// any periods (swapped ones included).
func TestAPOProperty(t *testing.T) {
	x := randomWalk(600, 9)["close"]
	run := func(rt *rapid.T, name string, p ...float64) Result {
		e, ok := Builtin().Lookup(name)
		if !ok {
			rt.Fatalf("no %s", name)
		}
		r, err := Compute(e, [][]float64{x}, p)
		if err != nil {
			rt.Fatalf("%s%v: %v", name, p, err)
		}
		return r
	}
	rapid.Check(t, func(rt *rapid.T) {
		f := float64(rapid.IntRange(2, 60).Draw(rt, "fast"))
		s := float64(rapid.IntRange(2, 60).Draw(rt, "slow"))
		kind := rapid.IntRange(0, 8).Draw(rt, "matype")
		apo := run(rt, "apo", f, s, float64(kind))
		ppo := run(rt, "ppo", f, s, float64(kind))
		// The kind's own function where it takes just a period, else ta.ma.
		leg := func(period float64) Result {
			switch name := MATypes[kind]; name {
			case "mama":
				return run(rt, "ma", period, float64(kind))
			case "t3":
				return run(rt, "t3", period, 0.7)
			default:
				return run(rt, name, period)
			}
		}
		fast, slow := leg(math.Min(f, s)), leg(math.Max(f, s))
		if apo.Start != max(fast.Start, slow.Start) {
			rt.Fatalf("apo(%v, %v, %s) starts at %d, its legs at %d and %d", f, s, MATypes[kind], apo.Start, fast.Start, slow.Start)
		}
		for i := apo.Start; i < len(x); i++ {
			d := fast.Outputs[0][i] - slow.Outputs[0][i]
			if got := apo.Outputs[0][i]; got != d {
				rt.Fatalf("apo(%v, %v, %s)[%d] = %v, %s(%v) - %s(%v) = %v", f, s, MATypes[kind], i, got, MATypes[kind], math.Min(f, s), MATypes[kind], math.Max(f, s), d)
			}
			if sl := slow.Outputs[0][i]; !isZero(sl) {
				if got, want := ppo.Outputs[0][i], (d/sl)*100; got != want {
					rt.Fatalf("ppo(%v, %v, %s)[%d] = %v, want %v", f, s, MATypes[kind], i, got, want)
				}
			}
		}
	})
}

// TestCausal: every entry is causal — its value at a bar is the same
// whether the series ends there or runs on (what the lookahead prefix
// proof relies on), bit for bit, at the defaults and at the lower bounds.
func TestCausal(t *testing.T) {
	bars := randomWalk(400, 10)
	for _, e := range Builtin().Entries() {
		for _, p := range [][]float64{e.Defaults(), lowerBounds(e)} {
			if e.CheckParams(p) != nil {
				continue
			}
			full, err := Compute(e, inputsFor(e, bars), p)
			if err != nil {
				t.Fatalf("%s%v: %v", e.Name, p, err)
			}
			for _, k := range []int{e.Lookback(p) + 1, 150, 399} {
				if k > 400 {
					continue
				}
				part, err := Compute(e, inputsFor(e, slice(bars, k)), p)
				if err != nil {
					t.Fatalf("%s%v on %d bars: %v", e.Name, p, k, err)
				}
				for j := range part.Outputs {
					for i := 0; i < k; i++ {
						a, b := part.Outputs[j][i], full.Outputs[j][i]
						if a != b && !(math.IsNaN(a) && math.IsNaN(b)) {
							t.Fatalf("%s%v: %s[%d] is %v on %d bars, %v on 400", e.Name, p, e.Outputs[j], i, a, k, b)
						}
					}
				}
			}
		}
	}
}

func lowerBounds(e *Entry) []float64 {
	p := e.Defaults()
	for i, q := range e.Params {
		if q.Type == Int {
			p[i] = q.Min
		}
	}
	return p
}

// TestMemoHelpersKeepToTheirSegment: helper results (crosses) share an
// eighth of the budget among themselves and never evict indicators.
func TestMemoHelpersKeepToTheirSegment(t *testing.T) {
	sma, _ := Builtin().Lookup("sma")
	cross, _ := Builtin().Lookup("cross_above")
	n := 1000
	col := int64(n*8 + 64)
	m := NewMemo(8 * col) // room for 8 columns; helpers get one
	x := make([]float64, n)
	for i := range x {
		x[i] = float64(i % 17)
	}
	kx := m.ValuesKey(x)
	smas := make([][]float64, 6)
	keys := make([]Key, 6)
	for p := range smas {
		res, k, err := m.Compute(sma, [][]float64{x}, []Key{kx}, []float64{float64(p + 2)})
		if err != nil {
			t.Fatal(err)
		}
		smas[p], keys[p] = res.Outputs[0], k
	}
	for a := range smas {
		for b := range smas {
			if _, _, err := m.Compute(cross, [][]float64{smas[a], smas[b]}, []Key{keys[a], keys[b]}, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	before := m.Stats().Computed["sma"]
	for p := range smas {
		m.Compute(sma, [][]float64{x}, []Key{kx}, []float64{float64(p + 2)})
	}
	if got := m.Stats().Computed["sma"]; got != before {
		t.Errorf("36 crosses evicted %d of 6 indicators", got-before)
	}
	if s := m.Stats(); s.Bytes > 8*col {
		t.Errorf("%d bytes held, budget %d", s.Bytes, 8*col)
	}
}

// TestMemoColumns checks that Columns is what a Memo keeps: that many
// indicator columns of a length all stay cached, and where no helper of
// that length fits the helpers' eighth, one more evicts the first.
func TestMemoColumns(t *testing.T) {
	sma, _ := Builtin().Lookup("sma")
	const limit = 1 << 20
	for _, n := range []int{1_000, 15_000, 20_000, 60_000} {
		cols := Columns(limit, n)
		x := make([]float64, n)
		m := NewMemo(limit)
		kx := m.ValuesKey(x)
		for p := 0; p <= cols; p++ {
			if _, _, err := m.Compute(sma, [][]float64{x}, []Key{kx}, []float64{float64(p + 2)}); err != nil {
				t.Fatal(err)
			}
		}
		held := m.Stats().Entries
		if held < cols {
			t.Errorf("%d bars: %d columns held, Columns says %d", n, held, cols)
		}
		if exact := int64(n)*8+64 > limit/8; exact && held != cols {
			t.Errorf("%d bars: %d columns held, Columns says %d", n, held, cols)
		}
	}
	if got := Columns(48<<20, 1_000_000); got != 6 {
		t.Errorf("a worker's memo holds %d million-bar columns, want 6", got)
	}
}
