package cluster

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"wicket/strategy/worker"
)

// TestResultCrossesTheClusterAsJSONWouldHave: a chunk's result reads back
// from its gob form as it read back from the JSON the cluster carried
// before: knob values as JSON gives them (numbers as float64), metrics
// byte for byte, NaN scores as NaN, blocks, returns and counts intact;
// what never travels (Called, Refused) does not.
func TestResultCrossesTheClusterAsJSONWouldHave(t *testing.T) {
	res := worker.SweepChunkResult{
		Trials: []worker.Trial{
			{Values: map[string]any{"fast": 5, "slow": 20.5, "mode": "long", "on": true, "none": nil},
				Metrics: json.RawMessage(`{"sharpe":1.25,"trades":12}`),
				Scores:  worker.Scores{Sharpe: 1.25, Calmar: worker.Num(math.NaN())},
				Stats:   worker.ReturnStats{SR: 0.1, T: 500}, Trades: 12, Warmup: 20,
				Returns: worker.Returns{0.01, -0.02}, Blocks: worker.Blocks{{N: 3, Sum: 0.5, SumSq: 0.25}}},
			{Error: "division by zero"},
		},
		Bars:     worker.BarsSeen{Digest: "ab", Count: 500, First: 1, Last: 2},
		Computed: map[string]uint64{"sma": 7},
		Seconds:  0.5, Work: 0.4, Called: 3, Refused: 2,
	}
	body, err := encodeResult(res)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeResult(body)
	if err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(res)
	var want worker.SweepChunkResult
	if err := json.Unmarshal(js, &want); err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(float64(got.Trials[0].Scores.Calmar)) {
		t.Errorf("a NaN score read %v", got.Trials[0].Scores.Calmar)
	}
	// NaN is never equal to itself: compare the rest.
	got.Trials[0].Scores.Calmar, want.Trials[0].Scores.Calmar = 0, 0
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read back\n%+v\nwant (as from JSON)\n%+v", got, want)
	}
	if got.Called != 0 || got.Refused != 0 {
		t.Errorf("Called %v and Refused %d travelled", got.Called, got.Refused)
	}
	if _, err := decodeResult(body[:len(body)/2]); err == nil {
		t.Error("half a result read without an error")
	}
}
