package agent_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"wicket/node/nodetest"
)

// maxDefaultAnswer is the bound on a default answer (the whole tools/call
// result: text, structured content and links), docs/spec agent.md
// "Results sized for a context window".
const maxDefaultAnswer = 8192

// TestDefaultAnswerSizes (issue 44, item 16): every read tool's default
// answer stays under 8 KB on a busy node and the seeded project — the node
// holds positions in every paper symbol, resting orders, a bracket's legs
// and more events than the default shows — and no answer repeats a large
// structured content in its text. node_snapshot was 19,388 bytes and
// list_templates 15,920 before: their text was the JSON again.
func TestDefaultAnswerSizes(t *testing.T) {
	n := nodetest.NewServer(t)
	proj := seededProject(t)
	runWicket(t, nil, "--project", proj, "strategy", "new", "mine", "--from", "sma_cross")
	s := startMCP(t, nodeEnv(n), proj, "--node", n.Addr)

	place := func(cmd string) {
		t.Helper()
		if _, r := previewThenConfirm(t, s, cmd); r.IsError || object(t, r)["status"] != "accepted" {
			t.Fatalf("%s: %s", cmd, text(r))
		}
	}
	for _, sym := range []string{"BTC-USD", "ETH-USD", "SOL-USD", "SPY"} {
		place(fmt.Sprintf(`"venue":"paper","symbol":%q,"side":"buy","type":"market","quantity":"1","reason":"size test"`, sym))
		place(fmt.Sprintf(`"venue":"paper","symbol":%q,"side":"buy","type":"limit","price":"95","quantity":"1","reason":"a resting order"`, sym))
		place(fmt.Sprintf(`"venue":"paper","symbol":%q,"side":"sell","type":"stop","stop_price":"50","quantity":"0.5","reason":"half protected"`, sym))
	}
	place(`"venue":"paper","symbol":"BTC-USD","side":"buy","type":"bracket","quantity":"0.1","take_profit":"108","stop_price":"92","reason":"a bracket"`)

	for _, tc := range []struct{ tool, args string }{
		{"node_snapshot", `{}`},
		{"list_templates", `{}`},
		{"list_indicators", `{}`},
		{"list_series", `{}`},
		{"list_strategies", `{}`},
		{"research_history", `{}`},
		{"discover_params", `{"name":"mine"}`},
		{"validate_strategy", `{"name":"mine"}`},
		{"list_templates", `{"name":"sma_cross"}`},
	} {
		r := s.call(t, tc.tool, tc.args)
		if r.IsError {
			t.Errorf("%s %s: %s", tc.tool, tc.args, text(r))
			continue
		}
		b, _ := json.Marshal(r)
		sc, _ := json.Marshal(r.StructuredContent)
		t.Logf("%s %s: %d bytes (structured content %d, text %d)", tc.tool, tc.args, len(b), len(sc), len(text(r)))
		if len(b) >= maxDefaultAnswer {
			t.Errorf("%s %s: the default answer is %d bytes, over %d", tc.tool, tc.args, len(b), maxDefaultAnswer)
		}
		if len(sc) > 2048 && strings.Contains(text(r), string(sc[:512])) {
			t.Errorf("%s %s: the text repeats the %d-byte structured content", tc.tool, tc.args, len(sc))
		}
	}
	// The snapshot's default shows some events, not the node's whole log,
	// and says how to see more.
	snap := object(t, s.call(t, "node_snapshot", `{}`))
	if ev, _ := snap["events"].([]any); len(ev) == 0 {
		t.Errorf("the default snapshot shows no events: %v", keys(snap))
	}
	if _, ok := snap["venues"].([]any); !ok {
		t.Errorf("the default snapshot lost its venues: %v", keys(snap))
	}
}
