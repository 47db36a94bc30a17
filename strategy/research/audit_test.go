package research

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"wicket/strategy/worker"
)

// TestAuditOfIsMarshal: auditOf writes the bytes json.Marshal writes for
// trialAudit (the ledger's rows are hashed as written, and readers
// decode them with encoding/json): numbers of every magnitude and
// exponent form, negative zero, undefined statistics (null), no blocks,
// a winner, and blocks json.Marshal refuses (its note instead).
func TestAuditOfIsMarshal(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	edge := []float64{0, math.Copysign(0, -1), 1, -1, 1e-6, 9.99e-7, 1e-7, 1.5e-300, 5e-324, 1e21, 9.99e20, 1e300, -2.5e-9,
		0.1, 1.0 / 3, math.MaxFloat64, math.SmallestNonzeroFloat64, 123456789.125}
	num := func() float64 {
		if rng.IntN(3) == 0 {
			return edge[rng.IntN(len(edge))]
		}
		return rng.NormFloat64() * math.Pow(10, float64(rng.IntN(60)-30))
	}
	stat := func() worker.Num {
		switch rng.IntN(8) {
		case 0:
			return worker.Num(math.NaN())
		case 1:
			return worker.Num(math.Inf(-1))
		}
		return worker.Num(num())
	}
	for i := range 3000 {
		tr := &worker.Trial{Stats: worker.ReturnStats{SR: stat(), Skew: stat(), Kurt: stat(), T: rng.IntN(1 << 20)}}
		nb := []int{0, 1, 16}[i%3]
		if i%7 == 0 {
			tr.Blocks = worker.Blocks{} // empty, not nil: omitted all the same
		}
		for range nb {
			tr.Blocks = append(tr.Blocks, worker.BlockStat{N: rng.IntN(5000), Sum: num(), SumSq: math.Abs(num())})
		}
		if i%11 == 0 && nb > 0 {
			tr.Blocks[nb-1].SumSq = []float64{math.NaN(), math.Inf(1)}[i%2]
		}
		winner := i%5 == 0
		want, err := json.Marshal(trialAudit{Stats: tr.Stats, Blocks: []worker.BlockStat(tr.Blocks), Winner: winner})
		if err != nil {
			want = mustJSON(trialAudit{Stats: tr.Stats, Blocks: []worker.BlockStat(tr.Blocks), Winner: winner})
		}
		if got := auditOf(tr, winner); !bytes.Equal(got, want) {
			t.Fatalf("case %d:\n got %s\nwant %s", i, got, want)
		}
	}
}

// TestParamsOfIsMarshal: a trial's knob values written directly are
// byte for byte what json.Marshal writes (mustJSON), for the values a
// trial holds (numbers, strings, bools, null) and for those paramsOf
// leaves to it: keys and strings JSON escapes, numbers it refuses, lists
// and objects.
func TestParamsOfIsMarshal(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	nums := []float64{0, math.Copysign(0, -1), 5, 20, 1e-7, 1e21, 0.1, 1.0 / 3, -2.5e-9, 123456789.125, math.NaN(), math.Inf(1)}
	strs := []string{"", "sma", "close", "a b", `q"uote`, `back\slash`, "<tag>", "a&b", "tab\there", "é", "\u2028", "\x7f"}
	keys := []string{"fast", "slow", "source", "mode", "x_1", "Long Name", "k<", "ключ"}
	value := func() any {
		switch rng.IntN(8) {
		case 0, 1, 2:
			return nums[rng.IntN(len(nums))]
		case 3:
			return rng.NormFloat64() * math.Pow(10, float64(rng.IntN(40)-20))
		case 4:
			return strs[rng.IntN(len(strs))]
		case 5:
			return rng.IntN(2) == 0
		case 6:
			return nil
		}
		return []any{1.0, "two"}
	}
	for i := range 3000 {
		m := map[string]any{}
		for range rng.IntN(5) {
			m[keys[rng.IntN(len(keys))]] = value()
		}
		if got, want := paramsOf(m), mustJSON(m); !bytes.Equal(got, want) {
			t.Fatalf("case %d %v:\n got %s\nwant %s", i, m, got, want)
		}
	}
}
