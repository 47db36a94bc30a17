package worker

import (
	"encoding/json"
	"math"
	"testing"
)

// TestReturnsWire: returns cross the wire bit for bit as base64 (NaN,
// signed zero and the smallest subnormal included), and the array form
// still reads.
func TestReturnsWire(t *testing.T) {
	in := Returns{0.1, -0.2, math.Copysign(0, -1), 5e-324, math.NaN(), 1e300}
	b, err := json.Marshal(Trial{Returns: in})
	if err != nil {
		t.Fatal(err)
	}
	var out Trial
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Returns) != len(in) {
		t.Fatalf("%d returns back, want %d: %s", len(out.Returns), len(in), b)
	}
	for i := range in {
		if math.Float64bits(out.Returns[i]) != math.Float64bits(in[i]) {
			t.Errorf("return %d: %v, want %v", i, out.Returns[i], in[i])
		}
	}
	var arr Trial
	if err := json.Unmarshal([]byte(`{"returns":[0.5,-1]}`), &arr); err != nil || len(arr.Returns) != 2 || arr.Returns[1] != -1 {
		t.Errorf("array form: %v %v", arr.Returns, err)
	}
	if err := json.Unmarshal([]byte(`{"returns":"AAA"}`), &arr); err == nil {
		t.Error("a base64 string of a partial double was read")
	}
}
