package worker

import (
	"encoding/json"
	"math"
	"testing"
)

// TestNumJSON: a Num crosses the pipe as encoding/json writes a float64,
// byte for byte, reads back to the same bits, and is null when not finite.
func TestNumJSON(t *testing.T) {
	for _, f := range []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 1e-6, 9.99e-7, -1e-7, 1.5e-9, 1e-100, 5e-324,
		1e20, 1e21, -2.5e22, 123456789.123, 0.8123456789012345, math.MaxFloat64, math.SmallestNonzeroFloat64} {
		want, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Num(f).MarshalJSON()
		if err != nil || string(got) != string(want) {
			t.Errorf("%v: %s, want %s", f, got, want)
		}
		var back Num
		if err := back.UnmarshalJSON(got); err != nil || math.Float64bits(float64(back)) != math.Float64bits(f) {
			t.Errorf("%s reads back as %v (%v)", got, back, err)
		}
	}
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if got, _ := Num(f).MarshalJSON(); string(got) != "null" {
			t.Errorf("%v: %s, want null", f, got)
		}
	}
	var n Num
	if err := n.UnmarshalJSON([]byte("null")); err != nil || !math.IsNaN(float64(n)) {
		t.Errorf("null reads as %v (%v), want NaN", n, err)
	}
	if err := n.UnmarshalJSON([]byte(`"1"`)); err == nil {
		t.Error("a string read as a number")
	}
}
