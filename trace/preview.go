package trace

// A preview's outcome (Entry.Outcome of a Preview entry): what its checks
// said, so a preview that failed them is told apart from a clean one. ""
// means the client-side guardrail passed and the node's dry run would
// accept (or was not asked).
const (
	PreviewGuardrailFailed = "guardrail_failed" // the client-side guardrail failed
	PreviewWouldReject     = "would_reject"     // the guardrail passed; the node's dry run would reject it
)

// PreviewFailed reports whether e is a preview whose checks failed.
func PreviewFailed(e Entry) bool {
	return e.Verdict == Preview && (e.Outcome == PreviewGuardrailFailed || e.Outcome == PreviewWouldReject)
}
