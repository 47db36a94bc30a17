package intrabar

import (
	"testing"

	"pgregory.net/rapid"
)

// TestStepProperties checks, on random bars and orders, what holds for
// every fill: it lies inside the bar's range; a limit fills at its price
// or better; a stop at its stop or worse, and at the stop unless gapped
// at the open; at most one order of a group fills; a child fills only
// after its parent.
func TestStepProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		price := func(label string) Float { return Float(rapid.IntRange(80, 120).Draw(t, label)) }
		o, a, b, c := price("open"), price("a"), price("b"), price("close")
		hi, lo := max(o, a, b, c), min(o, a, b, c)
		bar := Bar[Float]{o, hi, lo, c}
		rule := Rule(rapid.IntRange(0, 1).Draw(t, "rule"))
		n := rapid.IntRange(1, 6).Draw(t, "orders")
		orders := make([]Order[Float], n)
		for i := range orders {
			od := Order[Float]{
				Kind:  Kind(rapid.IntRange(1, 4).Draw(t, "kind")),
				Side:  Side(rapid.IntRange(1, 2).Draw(t, "side")),
				Limit: price("limit"), Stop: price("stop"),
				Group: rapid.IntRange(0, 2).Draw(t, "group"),
			}
			if od.Kind == TrailingStop {
				od = Trailing(od.Side, Float(rapid.IntRange(1, 5).Draw(t, "trail")), false, price("anchor"))
			}
			if i > 0 && rapid.Bool().Draw(t, "child") {
				od.Parent = rapid.IntRange(1, i).Draw(t, "parent")
			}
			orders[i] = od
		}
		before := append([]Order[Float](nil), orders...)
		fills := Step(bar, rule, orders, nil)
		filled := map[int]bool{}
		groups := map[int]bool{}
		for _, f := range fills {
			od := before[f.Order]
			if f.Price < lo || f.Price > hi {
				t.Fatalf("fill %+v outside the bar %+v", f, bar)
			}
			if od.Group != 0 {
				if groups[od.Group] {
					t.Fatalf("two fills in group %d: %+v", od.Group, fills)
				}
				groups[od.Group] = true
			}
			if od.Parent != 0 && !filled[od.Parent-1] {
				t.Fatalf("order %d filled before its parent %d: %+v", f.Order, od.Parent-1, fills)
			}
			filled[f.Order] = true
			buy := od.Side == Buy
			switch od.Kind {
			case Limit, StopLimit:
				if (buy && f.Price > od.Limit) || (!buy && f.Price < od.Limit) {
					t.Fatalf("limit %+v filled beyond its limit at %v", od, f.Price)
				}
			case Stop:
				if (buy && f.Price < od.Stop) || (!buy && f.Price > od.Stop) {
					t.Fatalf("stop %+v filled better than its stop at %v", od, f.Price)
				}
				if f.Price != od.Stop && (f.Leg != 0 && od.Parent == 0) {
					t.Fatalf("stop %+v filled off its stop at %v without a gap at the open", od, f.Price)
				}
			}
		}
		for i, od := range orders {
			if od.Done && !od.Cancelled && !filled[i] {
				t.Fatalf("order %d is done but neither filled nor cancelled", i)
			}
		}
	})
}

// BenchmarkStepBracket is a resting bracket's cost per bar: the exits of a
// long that never fill, on bars that stay between them.
func BenchmarkStepBracket(b *testing.B) {
	orders := []Order[Float]{
		{Kind: Limit, Side: Sell, Limit: 130, Group: 1},
		{Kind: Stop, Side: Sell, Stop: 70, Group: 1},
	}
	bars := []Bar[Float]{{100, 103, 98, 101}, {101, 102, 97, 98}, {98, 104, 96, 103}}
	var fills []Fill[Float]
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		fills = Step(bars[i%len(bars)], Path, orders, fills[:0])
	}
	if len(fills) != 0 {
		b.Fatal(fills)
	}
}
