package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"wicket/trace"
)

// call is one admitted tools/call as a handler sees it.
type call struct {
	tool    string
	args    args
	raw     json.RawMessage
	request mcp.CallToolRequest
}

// result is what a handler returns: structured content (or an error text)
// plus what the trace records about it.
type result struct {
	structured any           // a JSON object, also sent as text
	images     [][]byte      // PNG images, sent as image content after the JSON
	errText    string        // non-empty: an isError result
	cause      error         // the error behind errText, when there is one
	verdict    trace.Verdict // zero means trace.OK

	// trace fields for gated writes
	token, clientOrderID, ticket, outcome string
	approval, approvedBy                  string // confirmed writes under --approval (loop.go)

	input   *mcp.CallToolResult // non-nil: an input_required result (mrtr.go)
	summary string              // non-empty: the text content instead of the JSON (compact.go)
	links   []mcp.Content       // resource links after the text (runs.go)
}

// ok is a successful result carrying v as structured content.
func ok(v any) *result { return &result{structured: v} }

// fail is an admitted call that failed.
func fail(format string, a ...any) *result {
	return &result{errText: fmt.Sprintf(format, a...), verdict: trace.Error}
}

// failErr is fail with an error's text.
func failErr(err error) *result {
	return &result{errText: err.Error(), cause: err, verdict: trace.Error}
}

// cancelled is the result of a call whose context ended before it
// finished (the client sent notifications/cancelled, or went away): an
// error, traced as such, never ok, whatever partial answer the handler
// made (which is not sent).
func cancelled(ctx context.Context) *result {
	why := "the client cancelled it or went away"
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		why = "its deadline passed"
	}
	c := fail("cancelled before it finished (%s); nothing was answered", why)
	c.cause = ctx.Err()
	c.outcome = "cancelled"
	return c
}

// refuse is a call a gate said no to; nothing was attempted.
func refuse(text string) *result { return &result{errText: text, verdict: trace.Refused} }

// toMCP renders the result: structured content plus the same JSON as text,
// or an isError text.
func (r *result) toMCP() *mcp.CallToolResult {
	if r.input != nil {
		return r.input
	}
	if r.errText != "" {
		return mcp.NewToolResultError(r.errText)
	}
	b, err := json.Marshal(r.structured)
	if err != nil {
		return mcp.NewToolResultError("internal error: cannot encode the result: " + err.Error())
	}
	text := string(b)
	if r.summary != "" { // a large result: a short text, the JSON only once (compact.go)
		text = r.summary
	}
	out := &mcp.CallToolResult{
		Content:           append([]mcp.Content{mcp.NewTextContent(text)}, r.links...),
		StructuredContent: json.RawMessage(b),
	}
	for _, img := range r.images {
		out.Content = append(out.Content, mcp.NewImageContent(encodeBase64(img), "image/png"))
	}
	return out
}

// addNotes puts argument notes (e.g. a stringified object accepted) into
// a successful result as "arguments_note".
func (r *result) addNotes(notes []string) {
	if len(notes) == 0 || r.errText != "" {
		return
	}
	m, ok := r.structured.(map[string]any)
	if !ok {
		b, err := json.Marshal(r.structured)
		if err != nil || json.Unmarshal(b, &m) != nil || m == nil {
			return
		}
	}
	m["arguments_note"] = strings.Join(notes, "; ")
	r.structured = m
}
