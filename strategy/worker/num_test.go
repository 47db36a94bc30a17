package worker

import (
	"bytes"
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

// TestBlocksJSON: blocks cross the wire bit for bit (negative zero,
// infinities and NaN included), as a base64 string; the array form
// reads too, and malformed input is an error.
func TestBlocksJSON(t *testing.T) {
	in := Trial{Blocks: Blocks{
		{N: 1096, Sum: -0.15327570470230278, SumSq: 0.014383793172548646},
		{N: 0, Sum: math.Copysign(0, -1), SumSq: math.Inf(1)},
		{N: math.MaxUint32, Sum: math.NaN(), SumSq: 5e-324},
	}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"blocks":"`)) {
		t.Fatalf("blocks not one string: %s", b)
	}
	var out Trial
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Blocks) != len(in.Blocks) {
		t.Fatalf("%d blocks back, want %d", len(out.Blocks), len(in.Blocks))
	}
	for i, x := range in.Blocks {
		y := out.Blocks[i]
		if x.N != y.N || math.Float64bits(x.Sum) != math.Float64bits(y.Sum) || math.Float64bits(x.SumSq) != math.Float64bits(y.SumSq) {
			t.Fatalf("block %d: %+v back as %+v", i, x, y)
		}
	}
	if b, _ := json.Marshal(Trial{}); bytes.Contains(b, []byte("blocks")) {
		t.Fatalf("no blocks written as %s", b)
	}
	var arr Trial
	if err := json.Unmarshal([]byte(`{"blocks":[{"n":3,"s":0.5,"q":0.25}]}`), &arr); err != nil || len(arr.Blocks) != 1 || arr.Blocks[0] != (BlockStat{N: 3, Sum: 0.5, SumSq: 0.25}) {
		t.Fatalf("array form: %+v %v", arr.Blocks, err)
	}
	for _, bad := range []string{`{"blocks":"!!"}`, `{"blocks":"AAAA"}`, `{"blocks":3}`} {
		if err := json.Unmarshal([]byte(bad), &arr); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	if _, err := json.Marshal(Blocks{{N: -1}}); err == nil {
		t.Error("a negative count was written")
	}
}
