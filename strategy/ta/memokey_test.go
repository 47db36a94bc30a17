package ta

import "testing"

// TestKeySameInEveryMemo: a provenance key is the same in two memos (two
// worker processes sharing results name them alike), and differs with
// the name, an input or a parameter.
func TestKeySameInEveryMemo(t *testing.T) {
	a, b := NewMemo(0), NewMemo(0)
	in := []Key{{Hi: 1, Lo: 2}}
	k := a.Key("ta.sma", in, []float64{20})
	if b.Key("ta.sma", in, []float64{20}) != k {
		t.Fatal("two memos key one provenance differently")
	}
	for _, other := range []Key{
		a.Key("ta.ema", in, []float64{20}),
		a.Key("ta.sma", []Key{{Hi: 1, Lo: 3}}, []float64{20}),
		a.Key("ta.sma", in, []float64{21}),
		a.Key("ta.sma", in, nil),
	} {
		if other == k {
			t.Fatal("a different provenance has the same key")
		}
	}
}
