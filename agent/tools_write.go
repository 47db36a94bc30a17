package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"wicket/gate"
	"wicket/node"
	"wicket/node/command"
	"wicket/trace"
)

// The write roster is the node's verb table: one gated write tool per verb.
// toolSpec.Write marks them, isWriteTool reads it, the read-only ring is its
// negation, and every one of them goes through the preview gate.

// pendingWrite is what a preview token binds: the preview, whose command
// is what a confirm executes. Only the command is intent; the reason and
// the checks ride along.
type pendingWrite node.Preview

// SameIntent compares the commands only.
func (p pendingWrite) SameIntent(confirming pendingWrite) error {
	return p.Command.SameIntent(confirming.Command)
}

var _ gate.Command[pendingWrite] = pendingWrite{}

// gateParams are the arguments every write tool adds to its command fields;
// the tool's description says how confirm and preview_token are used.
var gateParams = []param{
	{Name: "reason", Type: "string", Description: "why, for the node's audit trail (max 512 characters)"},
	{Name: "confirm", Type: "boolean"},
	{Name: "preview_token", Type: "string"},
}

func (tb *toolbox) writeTools() []*toolSpec {
	var out []*toolSpec
	for _, vs := range command.Specs() {
		vs := vs
		params := make([]param, 0, len(vs.Fields)+len(gateParams))
		for _, f := range vs.Fields {
			p := param{Name: f.Name, Type: "string", Description: f.Description, Required: f.Required}
			switch f.Kind {
			case command.Enum:
				p.Enum = f.Choices
			case command.Decimal:
				p.Type = ""
				p.Schema = map[string]any{"type": []string{"string", "number"}}
			}
			params = append(params, p)
		}
		params = append(params, gateParams...)
		out = append(out, &toolSpec{
			Name:        string(vs.Verb),
			Title:       writeTitle(string(vs.Verb)),
			Description: vs.Summary + " Preview, then confirm: true with the preview_token.",
			Ring:        ringLiveWrite,
			Write:       true,
			Hints:       hints{Destructive: true, OpenWorld: flag(true)},
			Params:      params,
			Output:      writeOutputSchema,
			Handle: func(ctx context.Context, c *call) *result {
				return tb.write(ctx, vs.Verb, c)
			},
		})
	}
	return out
}

func writeTitle(verb string) string {
	w := strings.ReplaceAll(verb, "_", " ")
	return strings.ToUpper(w[:1]) + w[1:]
}

// writeOutputSchema covers both shapes: a preview and a confirmed write.
// It names the fields a program acts on; the top level stays open for the
// rest (tool, reason, note, expires_at, ticket, venues), which
// docs/mcp-tools.md shows, because every write tool repeats this schema in
// tools/list.
var writeOutputSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"status":          map[string]any{"enum": []string{"preview", "accepted", "rejected", "pending"}},
		"command":         map[string]any{"type": "object"},
		"guardrail":       map[string]any{"type": "object"},
		"dry_run":         map[string]any{"type": []string{"object", "null"}},
		"preview_token":   map[string]any{"type": "string"},
		"client_order_id": map[string]any{"type": "string"}, // the order's, also when a cancel or modify named it by order_id
		"order_id":        map[string]any{"type": "string"},
		"code":            map[string]any{"type": "string"}, // why the node rejected it, for programs
		"attention":       map[string]any{"type": "string"}, // set when a venue is live: real money
	},
	"required": []string{"status", "command"},
}

// write runs one gated write: a preview unless the call carries both the
// JSON boolean confirm and a token issued for this exact command.
func (tb *toolbox) write(ctx context.Context, verb command.Verb, c *call) *result {
	tool := string(verb)
	cmd, extra, err := command.DecodeWith(tool, c.raw, "reason", gate.ConfirmArg, gate.TokenArg)
	if err != nil {
		return failErr(err)
	}
	cmd.Symbol = tb.guard.Listed(cmd.Venue, cmd.Symbol) // BTCUSDT names a venue's listed BTC-USD, in preview and confirm alike
	var reason string
	if raw, ok := extra["reason"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &reason); err != nil {
			return fail("argument %q must be a string", "reason")
		}
	}
	var loose map[string]any
	_ = json.Unmarshal(c.raw, &loose)
	tok, confirmed := gate.Confirmation(loose)
	if why := tb.foreignOrder(ctx, cmd); why != "" { // owners.go: another caller's order
		return refuse(why)
	}
	if !confirmed {
		return tb.preview(ctx, tool, cmd, reason, tok) // node.NewPreview sanitizes it, once
	}
	ctx = withRoundTrip(ctx, c.request.Params.MultiRoundTripParams, commandDigest(tool, c.raw)) // mrtr.go
	return tb.confirm(ctx, tool, cmd, tok)
}

// preview resolves the command, checks it, asks the node for a dry run and
// issues a token. Nothing is sent.
func (tb *toolbox) preview(ctx context.Context, tool string, cmd command.Command, reason, ignoredToken string) *result {
	if r := tb.needNode(); r != nil {
		return r
	}
	rec := tb.loop.recorder(tb.Node) // loop.go: keeps the snapshot (the preview's mark)
	p := node.NewPreview(ctx, rec, tb.guard, cmd, reason, tb.newID)
	out := map[string]any{
		"status":    "preview",
		"tool":      tool,
		"command":   p.Command,
		"guardrail": p.Guardrail,
		"dry_run":   p.DryRun,
	}
	if p.Reason != "" {
		out["reason"] = p.Reason
	}
	if len(p.Venues) > 0 {
		out["venues"] = p.Venues
	}
	if a := p.Attention(); a != "" {
		out["attention"] = a // the first key of the JSON text: a live venue is said first
	}
	tok, expires, err := tb.previews.Issue(tool, pendingWrite(p))
	if err != nil {
		return failErr(err)
	}
	notes := append(p.Notes, tb.loop.quoted(string(tok), expires, p, rec)...) // loop.go: approval and budget notes
	if ignoredToken != "" {
		notes = append(notes, "a preview_token was given without confirm: true (the JSON boolean), so this is a new preview; the earlier token stays valid until it expires")
	}
	notes = append(notes, fmt.Sprintf("Nothing was sent. To execute exactly this command, call %s again with the same arguments plus "+
		`"confirm": true and "preview_token": %q before %s. Any change to the command needs a new preview.`,
		tool, tok, expires.UTC().Format(time.RFC3339)))
	out["note"] = strings.Join(notes, ". ")
	out["preview_token"] = string(tok)
	out["expires_at"] = expires.UTC().Format(time.RFC3339Nano)
	if p.Command.ClientOrderID != "" {
		out["client_order_id"] = p.Command.ClientOrderID
	}
	r := &result{structured: out, verdict: trace.Preview, token: string(tok), clientOrderID: p.Command.ClientOrderID}
	switch { // the trace tells a preview that failed its checks from a clean one
	case !p.Guardrail.OK:
		r.outcome = trace.PreviewGuardrailFailed
	case p.DryRun != nil && !p.DryRun.WouldAccept:
		r.outcome = trace.PreviewWouldReject
	}
	return r
}

// confirm takes the token (single use, before anything runs), sends the
// stored command and awaits its own ticket.
func (tb *toolbox) confirm(ctx context.Context, tool string, cmd command.Command, tok string) *result {
	if r := tb.needNode(); r != nil {
		return r
	}
	if r, ok := tb.loop.resume(ctx, tool, tok, func(p node.Preview) *result { return tb.send(ctx, tool, p, tok) }); ok {
		return r // mrtr.go: the retry that carries the person's answer
	}
	token, err := gate.ParseToken(tok)
	if err == nil {
		var stored pendingWrite
		stored, err = tb.previews.Take(tool, token, pendingWrite{Command: cmd})
		if err == nil {
			return tb.loop.gated(ctx, tool, node.Preview(stored), tok, func() *result { // loop.go: budget, approval
				return tb.send(ctx, tool, node.Preview(stored), tok)
			})
		}
	}
	r := refuse(err.Error())
	r.token = tok
	r.clientOrderID = cmd.ClientOrderID
	return r
}

// send executes a stored preview's command and reports its outcome
// truthfully, rendering node.Send's result: accepted, rejected (with the
// node's reason) or pending (with what to do: never resend).
func (tb *toolbox) send(ctx context.Context, tool string, p node.Preview, tok string) *result {
	r := node.Send(ctx, tb.Node, p, node.TicketWait)
	tb.recordPlaced(p, r) // owners.go
	if r.Status == node.SendFailed {
		f := fail("%s", r.Advice)
		f.token, f.clientOrderID = tok, p.Command.ClientOrderID
		return f
	}
	out := map[string]any{"status": r.Status, "tool": tool, "command": p.Command, "ticket": r.Ticket}
	for k, v := range map[string]string{"client_order_id": r.ClientOrderID, "note": r.Advice, "order_id": r.OrderID,
		"detail": r.Detail, "code": r.Code} {
		if v != "" {
			out[k] = v
		}
	}
	if r.Status == string(node.Rejected) {
		out["reason"] = r.Reason
		if r.ExistingOrder != nil {
			out["existing_order"] = r.ExistingOrder
		}
	}
	return &result{structured: out, verdict: trace.OK, token: tok, clientOrderID: r.ClientOrderID, ticket: r.Ticket, outcome: r.Status}
}
