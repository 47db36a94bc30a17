package agent_test

import (
	"path/filepath"
	"regexp"
	"testing"

	"wicket/node/nodetest"
	"wicket/trace"
)

// TestTracePreviewChecks (issue 44, item 15): a preview whose guardrail
// failed is traced as such, and `wicket trace stats` counts it apart from
// a clean preview of the same tool.
func TestTracePreviewChecks(t *testing.T) {
	n := nodetest.NewServer(t)
	proj := newProject(t)
	dir := filepath.Join(t.TempDir(), "trace")
	s := startMCP(t, nodeEnv(n), proj, "--node", n.Addr, "--trace-dir", dir)
	clean := object(t, s.call(t, "submit_order", `{"venue":"paper","symbol":"BTC-USD","side":"buy","type":"market","quantity":"0.01"}`))
	failed := object(t, s.call(t, "submit_order", `{"venue":"paper","symbol":"BTC-USD","side":"buy","type":"market","quantity":"100000"}`))
	if g, _ := clean["guardrail"].(map[string]any); g["ok"] != true {
		t.Fatalf("the clean preview failed its guardrail: %v", clean["guardrail"])
	}
	if g, _ := failed["guardrail"].(map[string]any); g["ok"] != false {
		t.Fatalf("the oversized preview passed its guardrail: %v", failed["guardrail"])
	}
	var outcomes []string
	for _, e := range readTrace(t, dir) {
		if e.Verdict == trace.Preview {
			outcomes = append(outcomes, e.Outcome)
		}
	}
	if len(outcomes) != 2 || outcomes[0] != "" || outcomes[1] != trace.PreviewGuardrailFailed {
		t.Errorf("traced preview outcomes %q, want \"\" and %q", outcomes, trace.PreviewGuardrailFailed)
	}
	out := runWicket(t, nil, "trace", "stats", "--dir", dir)
	if !regexp.MustCompile(`(?m)^submit_order\s+0\s+2\s+1\s+0\s+0\s+2\s*$`).MatchString(out) {
		t.Errorf("trace stats does not count 2 previews, 1 with failed checks:\n%s", out)
	}
}
