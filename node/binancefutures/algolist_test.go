package binancefutures

import (
	"encoding/json"
	"testing"
)

// TestAlgoList: open algo orders read from a bare list or a wrapped one.
func TestAlgoList(t *testing.T) {
	for _, raw := range []string{
		`[{"algoId":7,"clientAlgoId":"x","actualOrderId":""}]`,
		`{"total":1,"orders":[{"algoId":7,"clientAlgoId":"x","actualOrderId":"12"}]}`,
	} {
		list, err := algoList(json.RawMessage(raw))
		if err != nil || len(list) != 1 || list[0].AlgoID != 7 || list[0].ClientAlgoID != "x" {
			t.Errorf("%s: %+v %v", raw, list, err)
		}
	}
	if list, err := algoList(json.RawMessage(`{"total":0}`)); err != nil || len(list) != 0 {
		t.Errorf("an empty answer: %+v %v", list, err)
	}
}
