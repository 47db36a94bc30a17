package research

import (
	"math"
	"testing"
	"time"

	"wicket/strategy/worker"
)

// BenchmarkEmbargoRescore: rescoring one in-sample trial of 2,000 bars
// without an embargoed tenth of them (what an embargo adds per
// combination per window, beside shipping its returns).
func BenchmarkEmbargoRescore(b *testing.B) {
	const n = 2000
	r := make([]float64, n)
	keep := make([]bool, n)
	for i := range r {
		r[i] = 0.001 * math.Sin(float64(i))
		keep[i] = i%10 != 0
	}
	rs := rescorer{capital: 10000, periodsPerYear: 365, bar: 24 * time.Hour, blocks: PBOBlocks}
	for b.Loop() {
		t := worker.Trial{Returns: r}
		if err := rs.rescore(&t, keep); err != nil {
			b.Fatal(err)
		}
	}
}
