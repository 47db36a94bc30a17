package main

import (
	"context"
	"fmt"
	"time"

	"wicket/node"
	"wicket/node/command"
	"wicket/node/guardrail"
)

// tradeTicketWait is how long a sent command awaits its own ticket: the
// same 2 s as the agent's write tools.
const tradeTicketWait = 2 * time.Second

// tradeNode is what the trade surface needs of a node; *node.Client is one.
type tradeNode interface {
	Snapshot(ctx context.Context, venue string, events int) (*node.Snapshot, error)
	DryRun(ctx context.Context, env command.Envelope) (node.Verdict, error)
	Submit(ctx context.Context, env command.Envelope) (string, error)
	Ticket(ctx context.Context, id string, wait time.Duration) (node.Outcome, error)
}

var _ tradeNode = (*node.Client)(nil)

// tradeClient previews and sends commands the way the agent's write tools do:
// Resolve with the injected id source, the client-side guardrail over a
// fresh snapshot, the node's dry run; then Submit and a 2 s ticket wait.
type tradeClient struct {
	node  tradeNode
	guard *guardrail.Guardrail
	newID func() string // client order id source (command.NewID in production)
	wait  time.Duration // ticket wait (tradeTicketWait in production)
}

// tradePreview is what a person sees before answering send? [y/N]. Its
// Command is the exact command that is sent on yes.
type tradePreview struct {
	Command   command.Command  `json:"command"`
	Reason    string           `json:"reason,omitempty"`
	Guardrail guardrail.Report `json:"guardrail"`
	DryRun    *node.Verdict    `json:"dry_run"`
	Notes     []string         `json:"notes,omitempty"`
}

// preview resolves cmd and checks it. Nothing is sent.
func (t *tradeClient) preview(ctx context.Context, cmd command.Command, reason string) tradePreview {
	resolved := cmd.Resolve(t.newID)
	p := tradePreview{Command: resolved, Reason: command.SanitizeReason(reason)}
	var view guardrail.View
	if snap, err := t.node.Snapshot(ctx, resolved.Venue, 0); err != nil {
		p.Notes = append(p.Notes, "the node could not be read for marks and positions ("+err.Error()+"); the guardrail ran without them")
	} else {
		view = snap
	}
	p.Guardrail = t.guard.Check(resolved, view)
	if v, err := t.node.DryRun(ctx, command.NewEnvelope(resolved, p.Reason)); err != nil {
		p.Notes = append(p.Notes, "no dry run was asked of the node: "+err.Error())
	} else {
		p.DryRun = &v
	}
	return p
}

// Outcome statuses beyond the node's own (accepted, rejected, pending).
const tradeSendFailed = "send_failed" // Submit failed: the node may or may not have the command

// tradeOutcome is what came of sending a preview, told truthfully.
type tradeOutcome struct {
	Status        string               `json:"status"` // accepted, rejected, pending or send_failed
	Verb          command.Verb         `json:"verb"`
	ClientOrderID string               `json:"client_order_id,omitempty"`
	Ticket        string               `json:"ticket,omitempty"`
	OrderID       string               `json:"order_id,omitempty"`
	Detail        string               `json:"detail,omitempty"`
	Code          string               `json:"code,omitempty"`
	Reason        string               `json:"reason,omitempty"` // why the node rejected it
	ExistingOrder *node.Order          `json:"existing_order,omitempty"`
	TradingState  command.TradingState `json:"trading_state,omitempty"`
	Note          string               `json:"note,omitempty"`
}

// send submits the previewed command with its reason and awaits its own
// ticket.
func (t *tradeClient) send(ctx context.Context, p tradePreview) tradeOutcome {
	o := tradeOutcome{Verb: p.Command.Verb, ClientOrderID: p.Command.ClientOrderID}
	ticket, err := t.node.Submit(ctx, command.NewEnvelope(p.Command, p.Reason))
	if err != nil {
		o.Status = tradeSendFailed
		o.Note = fmt.Sprintf("the node did not take the command: %v. It may or may not have been received: check the snapshot before trying again "+
			"(a retried submit_order with the same client_order_id is refused as a duplicate)", err)
		return o
	}
	o.Ticket = ticket
	res, err := t.node.Ticket(ctx, ticket, t.wait)
	switch {
	case err != nil:
		o.Status = string(node.Pending)
		o.Note = "the command was sent (ticket " + ticket + ") but its outcome could not be read: " + err.Error() + ". Check the snapshot; do not resend."
	case res.Status == node.Accepted || res.Status == node.Rejected:
		o = tradeOutcomeOf(res)
		o.Ticket, o.Verb = ticket, p.Command.Verb
		if p.Command.ClientOrderID != "" {
			o.ClientOrderID = p.Command.ClientOrderID
		} // else the node's: the client order id of the order a cancel or modify named by its order id
	default:
		o.Status = string(node.Pending)
		o.Note = fmt.Sprintf("the node has not finished this command within %s (ticket %s). Check the snapshot, or `ticket %s`, for its result rather than sending it again.",
			t.wait, ticket, ticket)
	}
	return o
}

// tradeOutcomeOf reads a ticket's outcome as the trade surface tells it.
func tradeOutcomeOf(res node.Outcome) tradeOutcome {
	o := tradeOutcome{Status: string(res.Status), Verb: res.Verb, ClientOrderID: res.ClientOrderID, Ticket: res.Ticket}
	switch res.Status {
	case node.Accepted:
		o.OrderID, o.Detail, o.TradingState = res.OrderID, res.Detail, res.TradingState
	case node.Rejected:
		o.Code, o.Reason, o.ExistingOrder = res.Code, res.Reason, res.ExistingOrder
	}
	return o
}

// err is nil for an accepted outcome and one line saying what happened
// otherwise; the caller prints the outcome first.
func (o tradeOutcome) err() error {
	switch o.Status {
	case string(node.Accepted):
		return nil
	case string(node.Rejected):
		return fmt.Errorf("the node rejected %s: %s", o.Verb, o.Reason)
	case string(node.Pending):
		return fmt.Errorf("%s is pending (ticket %s): check the snapshot before sending it again", o.Verb, o.Ticket)
	}
	return fmt.Errorf("%s was not confirmed as sent: check the snapshot before trying again", o.Verb)
}
