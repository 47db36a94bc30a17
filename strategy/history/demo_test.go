package history

import (
	"hash/fnv"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"wicket/strategy"
)

func fingerprint(b strategy.Bars) uint64 {
	h := fnv.New64a()
	var buf [8]byte
	put := func(u uint64) {
		for i := range buf {
			buf[i] = byte(u >> (8 * i))
		}
		h.Write(buf[:])
	}
	for i := range b.Time {
		put(uint64(b.Time[i]))
		for _, x := range []float64{b.Open[i], b.High[i], b.Low[i], b.Close[i], b.Volume[i]} {
			put(math.Float64bits(x))
		}
	}
	return h.Sum64()
}

func TestDemoBars(t *testing.T) {
	for _, sym := range DemoSymbols {
		h, d := DemoBars(sym)
		h2, d2 := DemoBars(sym)
		if fingerprint(h) != fingerprint(h2) || fingerprint(d) != fingerprint(d2) {
			t.Errorf("%s: two generations differ", sym.Symbol)
		}
		if h.Series != sym.Symbol+"@1h" || d.Series != sym.Symbol+"@1d" {
			t.Errorf("series names %s %s", h.Series, d.Series)
		}
		// Spans: 1h from 2023-01-01 (two years, 2024 a leap year), 1d from 2015-01-01, both to DemoEnd.
		if h.Len() != 17544 || d.Len() != 3653 {
			t.Errorf("%s: %d hourly and %d daily bars", sym.Symbol, h.Len(), d.Len())
		}
		if got := time.Unix(h.Time[0], 0).UTC(); !got.Equal(DemoHourlyStart) {
			t.Errorf("%s: hourly starts %v", sym.Symbol, got)
		}
		if got := time.Unix(d.Time[0], 0).UTC(); !got.Equal(DemoDailyStart) {
			t.Errorf("%s: daily starts %v", sym.Symbol, got)
		}
		if end := time.Unix(h.Time[h.Len()-1], 0).Add(time.Hour); !end.Equal(DemoEnd) {
			t.Errorf("%s: hourly ends %v", sym.Symbol, end)
		}
		if end := time.Unix(d.Time[d.Len()-1], 0).Add(24 * time.Hour); !end.Equal(DemoEnd) {
			t.Errorf("%s: daily ends %v", sym.Symbol, end)
		}
		if rows := Validate(h, 1); len(rows) > 0 {
			t.Errorf("%s@1h invalid: %v", sym.Symbol, rows[0])
		}
		if rows := Validate(d, 1); len(rows) > 0 {
			t.Errorf("%s@1d invalid: %v", sym.Symbol, rows[0])
		}
		if h.Close[h.Len()-1] != sym.Last || d.Close[d.Len()-1] != sym.Last {
			t.Errorf("%s: last closes %v %v, want %v", sym.Symbol, h.Close[h.Len()-1], d.Close[d.Len()-1], sym.Last)
		}
		// Where they overlap, each day agrees with its 24 hours.
		off := int(DemoHourlyStart.Sub(DemoDailyStart).Hours() / 24)
		for day := off; day < d.Len(); day += 97 {
			hs := (day - off) * 24
			hi, lo := 0.0, math.Inf(1)
			for i := hs; i < hs+24; i++ {
				hi, lo = max(hi, h.High[i]), min(lo, h.Low[i])
			}
			if d.Open[day] != h.Open[hs] || d.Close[day] != h.Close[hs+23] || d.High[day] != hi || d.Low[day] != lo {
				t.Errorf("%s: day %d disagrees with its hours", sym.Symbol, day)
			}
		}
		// A regime-switching walk, not a straight line: both rising and
		// falling years.
		up, down := 0, 0
		for y := 365; y < d.Len(); y += 365 {
			if d.Close[y] > d.Close[y-365] {
				up++
			} else {
				down++
			}
		}
		if up == 0 || down == 0 {
			t.Errorf("%s: %d rising and %d falling years", sym.Symbol, up, down)
		}
	}
}

func TestSeedDemoIdempotent(t *testing.T) {
	s := openTemp(t)
	// An imported series of a demo name is left alone.
	mine := synth(5, 1_700_000_000, 3600)
	if err := s.Write(ctx, "SPY@1h", mine, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	first, err := SeedDemo(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != 2*len(DemoSymbols) {
		t.Fatalf("results %+v", first)
	}
	skipped := 0
	for _, r := range first {
		if r.Skipped {
			skipped++
			if r.Series != "SPY@1h" || r.Bars != 5 {
				t.Errorf("skipped %+v", r)
			}
		}
	}
	if skipped != 1 {
		t.Errorf("%d skipped, want 1", skipped)
	}
	list1, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	btc1, err := s.Load("BTC-USD@1h", time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	second, err := SeedDemo(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	list2, _ := s.List()
	btc2, _ := s.Load("BTC-USD@1h", time.Time{}, time.Time{})
	if diff := cmp.Diff(first, second); diff != "" {
		t.Errorf("second seed reported differently:\n%s", diff)
	}
	if diff := cmp.Diff(list1, list2); diff != "" {
		t.Errorf("second seed changed the list:\n%s", diff)
	}
	if fingerprint(btc1) != fingerprint(btc2) {
		t.Error("second seed changed BTC-USD@1h")
	}
	if b, _ := s.Load("SPY@1h", time.Time{}, time.Time{}); fingerprint(b) != fingerprint(mine) {
		t.Error("seed overwrote an imported series")
	}
	c, _, err := s.LastClose("BTC-USD@1h")
	if err != nil || c != 60000 {
		t.Errorf("BTC-USD@1h last close %v %v", c, err)
	}
}

func BenchmarkDemoBars(b *testing.B) {
	for b.Loop() {
		DemoBars(DemoSymbols[0])
	}
}

// TestDemoBarsGap: demo bars open away from the previous close (so next-open
// and this-close fills differ), with small gaps, and the hourly closes are
// those of the walk.
func TestDemoBarsGap(t *testing.T) {
	for _, sym := range DemoSymbols {
		h, d := DemoBars(sym)
		for _, b := range []strategy.Bars{h, d} {
			gapped, largest := 0, 0.0
			for i := 1; i < b.Len(); i++ {
				if b.Open[i] != b.Close[i-1] {
					gapped++
				}
				largest = max(largest, math.Abs(math.Log(b.Open[i]/b.Close[i-1])))
			}
			if frac := float64(gapped) / float64(b.Len()-1); frac < 0.9 {
				t.Errorf("%s: only %.0f%% of bars open away from the previous close", b.Series, 100*frac)
			}
			if largest > 0.05 {
				t.Errorf("%s: an opening gap of %.1f%% is implausible", b.Series, 100*largest)
			}
		}
	}
}
