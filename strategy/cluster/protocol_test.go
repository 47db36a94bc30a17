package cluster

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"wicket/strategy/worker"
)

// TestAnswerOfAnotherVersion: an answer without the wire version (an
// older worker) or with another one is refused with an error that says
// to run one version everywhere, before its body is read.
func TestAnswerOfAnotherVersion(t *testing.T) {
	for _, v := range []string{"", "5", "7", "9"} {
		m := nats.NewMsg("x")
		m.Header.Set(headerWorker, "W1")
		if v != "" {
			m.Header.Set(headerProtocol, v)
		}
		m.Data = []byte(`{"trials":[{"blocks":[{"n":1,"s":0,"q":0}]}]}`)
		_, err := decodeAnswer(m)
		if err == nil || !strings.Contains(err.Error(), "run the same wicket version on every machine") || !strings.Contains(err.Error(), "(W1)") {
			t.Errorf("version %q: %v", v, err)
		}
	}
	m := nats.NewMsg("x")
	m.Header.Set(headerProtocol, protocol)
	body, err := json.Marshal(worker.SweepChunkResult{Trials: []worker.Trial{{Blocks: worker.Blocks{{N: 1, Sum: 1, SumSq: 2}}}}})
	if err != nil {
		t.Fatal(err)
	}
	m.Data = body
	res, err := decodeAnswer(m)
	if err != nil || len(res.Trials) != 1 || len(res.Trials[0].Blocks) != 1 || res.Trials[0].Blocks[0].Sum != 1 || res.Trials[0].Blocks[0].SumSq != 2 {
		t.Fatalf("this version's answer: %+v %v", res, err)
	}
}
