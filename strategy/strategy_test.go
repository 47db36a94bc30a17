package strategy

import (
	"math"
	"testing"
)

func TestPeriodsPerYear(t *testing.T) {
	for g, want := range map[Granularity]float64{"1m": 525600, "5m": 105120, "15m": 35040, "1h": 8760, "4h": 2190, "1d": 365, "2d": 0} {
		if got := g.PeriodsPerYear(); got != want {
			t.Errorf("%s: %v, want %v", g, got, want)
		}
	}
}

func TestParseSeries(t *testing.T) {
	sym, g, err := ParseSeries("BTC-USD@1h")
	if err != nil || sym != "BTC-USD" || g != "1h" {
		t.Fatalf("got %q %q %v", sym, g, err)
	}
	for _, bad := range []string{"BTC-USD", "@1h", "BTC@2h", "BTC@"} {
		if _, _, err := ParseSeries(bad); err == nil {
			t.Errorf("ParseSeries(%q) accepted", bad)
		}
	}
}

func TestSignalsTargets(t *testing.T) {
	s := Signals{
		Long:  []bool{true, false, true, false, true},
		Short: []bool{false, true, true, false, false},
		Exit:  []bool{false, false, false, true, true},
		Size:  []float64{0.5, 0.5, 0.5, 0.5, 0.5},
	}
	got := s.Targets(6)
	want := []float64{0.5, -0.5, math.NaN(), 0, 0, math.NaN()}
	for i := range want {
		if !(got[i] == want[i] || math.IsNaN(got[i]) && math.IsNaN(want[i])) {
			t.Errorf("bar %d: %v, want %v", i, got[i], want[i])
		}
	}
}

// TestTargetAtSizes: a constant size holds everywhere, a per-bar size is
// 1 past its end, no size is 1, and a short column is false past its end.
func TestTargetAtSizes(t *testing.T) {
	long := []bool{true, true, true}
	for _, tc := range []struct {
		size []float64
		want []float64
	}{
		{nil, []float64{1, 1, 1, math.NaN()}},
		{[]float64{0.25}, []float64{0.25, 0.25, 0.25, math.NaN()}},
		{[]float64{0.5, 0.75}, []float64{0.5, 0.75, 1, math.NaN()}},
	} {
		s := Signals{Long: long, Size: tc.size}
		for i, w := range tc.want {
			if g := s.TargetAt(i); math.Float64bits(g) != math.Float64bits(w) && !(math.IsNaN(g) && math.IsNaN(w)) {
				t.Errorf("size %v bar %d: %v, want %v", tc.size, i, g, w)
			}
		}
	}
}

// TestDigest: the digest is pinned (workers on other machines must
// compute the same one) and changes with any value.
func TestDigest(t *testing.T) {
	n := 20_000
	b := Bars{Time: make([]int64, n), Open: make([]float64, n), High: make([]float64, n), Low: make([]float64, n), Close: make([]float64, n), Volume: make([]float64, n)}
	for i := range n {
		b.Time[i] = int64(1_700_000_000 + 3600*i)
		b.Open[i], b.High[i], b.Low[i], b.Close[i], b.Volume[i] = float64(i), float64(i)+1, float64(i)-1, float64(i)+0.5, 1
	}
	const want = "349b5d5cb5ad921cc979c7f01494dc280aec273637a9b600658abb13132e9c5a"
	if got := b.Digest(); got != want {
		t.Errorf("digest %s, want %s", got, want)
	}
	b.Volume[n-1] = 2
	if b.Digest() == want {
		t.Error("the digest ignores the last volume")
	}
}

func BenchmarkDigest(b *testing.B) {
	n := 1_000_000
	bars := Bars{Time: make([]int64, n), Open: make([]float64, n), High: make([]float64, n), Low: make([]float64, n), Close: make([]float64, n), Volume: make([]float64, n)}
	for b.Loop() {
		bars.Digest()
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "bars/s")
}
