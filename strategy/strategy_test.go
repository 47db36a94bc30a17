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
