package cluster

import (
	"bytes"
	"encoding/gob"
	"encoding/json"
	"fmt"

	"wicket/strategy/worker"
)

// A chunk's result crosses the cluster in gob (encodeResult), not JSON:
// the strategy worker hands its cluster worker the result in the pool's
// binary form (the pool decodes it into a worker.SweepChunkResult), and
// the cluster worker encodes that for the sweep. A 100-combination
// chunk's result took the strategy worker about 1.4 ms to write in JSON,
// its cluster worker 1 ms to check and the sweep 2.3 ms to read; in gob
// it is about 0.5 ms to write and 0.45 ms to read. A trial's values (a
// map of any) travel as their JSON, so they read back as they did from
// the JSON answer (numbers as float64); its metrics are the JSON the
// backtest wrote, which the pool checked. Only a signed answer is read
// (Dispatcher.onReply): gob never reads a message of unknown origin.

// wireResult is a result as it travels: the trials' values apart.
type wireResult struct {
	Result worker.SweepChunkResult
	Values [][]byte // each trial's values, JSON; nil: none
}

// encodeResult is res on the wire. What never travels (Called, Refused)
// is left out.
func encodeResult(res worker.SweepChunkResult) ([]byte, error) {
	res.Called, res.Refused = 0, 0
	w := wireResult{Values: make([][]byte, len(res.Trials))}
	trials := make([]worker.Trial, len(res.Trials))
	for i, t := range res.Trials {
		if t.Values != nil {
			v, err := json.Marshal(t.Values)
			if err != nil {
				return nil, err
			}
			w.Values[i] = v
		}
		t.Values = nil
		trials[i] = t
	}
	res.Trials = trials
	w.Result = res
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(&w); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// decodeResult reads a result encodeResult wrote.
func decodeResult(data []byte) (worker.SweepChunkResult, error) {
	var w wireResult
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&w); err != nil {
		return worker.SweepChunkResult{}, err
	}
	res := w.Result
	if len(w.Values) != len(res.Trials) {
		return worker.SweepChunkResult{}, fmt.Errorf("values for %d trials of %d", len(w.Values), len(res.Trials))
	}
	for i, v := range w.Values {
		if v != nil {
			if err := json.Unmarshal(v, &res.Trials[i].Values); err != nil {
				return worker.SweepChunkResult{}, fmt.Errorf("trial %d's values: %w", i, err)
			}
		}
	}
	return res, nil
}
