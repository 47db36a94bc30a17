package trace_test

import (
	"testing"

	"wicket/trace"
)

// TestSummarizePreviewFailed (issue 44, item 15): a preview whose checks
// failed is counted apart from a clean one, per tool, per session and in
// all.
func TestSummarizePreviewFailed(t *testing.T) {
	s := trace.Summarize([]trace.Entry{
		{Session: "s", Tool: "submit_order", Verdict: trace.Preview},
		{Session: "s", Tool: "submit_order", Verdict: trace.Preview, Outcome: trace.PreviewGuardrailFailed},
		{Session: "s", Tool: "cancel_order", Verdict: trace.Preview, Outcome: trace.PreviewWouldReject},
		{Session: "s", Tool: "submit_order", Verdict: trace.OK, Outcome: "rejected"},
	})
	if s.Preview != 3 || s.PreviewFailed != 2 || s.Sessions[0].PreviewFailed != 2 {
		t.Errorf("counts %+v, session %+v", s.Counts, s.Sessions[0].Counts)
	}
	for _, tool := range s.Tools {
		if tool.PreviewFailed != 1 {
			t.Errorf("%s: %+v", tool.Tool, tool.Counts)
		}
	}
}
