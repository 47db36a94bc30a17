package agent_test

import (
	"encoding/json"
	"fmt"
	"testing"
)

// TestResearchAnswerSizes: run_sweep by default (top 10 of a 64-point
// grid) and run_walk_forward by default (5 window summaries) answer under
// 8 KB, like run_backtest, with their link; the full results are at it.
func TestResearchAnswerSizes(t *testing.T) {
	proj := seededProject(t)
	s := startMCP(t, nil, proj)
	src := templateSource(t, s, "sma_cross")
	grid := `{"fast":[3,5,8,10,12,15,20,25],"slow":[30,40,50,60,80,100,150,200]}`
	for _, tc := range []struct{ tool, args string }{
		{"run_sweep", fmt.Sprintf(`{"source":%q,"series":"BTC-USD@1h","grid":%s}`, src, grid)},
		{"run_walk_forward", fmt.Sprintf(`{"source":%q,"series":"BTC-USD@1h","grid":%s}`, src, grid)},
	} {
		r := s.call(t, tc.tool, tc.args)
		b, _ := json.Marshal(r)
		ans := object(t, r)
		link, ok := runLinkOf(r)
		if !ok || len(b) >= 8192 {
			t.Errorf("%s: %d bytes, link %v", tc.tool, len(b), ok)
		}
		var n int
		switch tc.tool {
		case "run_sweep":
			n = len(ans["top"].([]any))
		default:
			n = len(ans["windows"].([]any))
		}
		full := resourceJSON(t, s, link.URI)
		fb, _ := json.Marshal(full)
		t.Logf("%s default answer: %d bytes, %d entries; the run's resource: %d bytes", tc.tool, len(b), n, len(fb))
		if (tc.tool == "run_sweep" && n != 10) || (tc.tool == "run_walk_forward" && n != 5) {
			t.Errorf("%s: %d entries", tc.tool, n)
		}
	}
}
