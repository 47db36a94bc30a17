package trade

import (
	"context"
	"fmt"
	"time"

	"wicket/node"
	"wicket/node/command"
	"wicket/node/guardrail"
)

// tradeTicketWait is how long a sent command awaits its own ticket: the
// same as the agent's write tools.
const tradeTicketWait = node.TicketWait

// tradeNode is what the trade surface needs of a node.
type tradeNode = node.Conn

// tradeClient previews and sends commands through node.NewPreview and
// node.Send, the steps the agent's write tools take too.
type tradeClient struct {
	node  tradeNode
	guard *guardrail.Guardrail
	newID func() string // client order id source (command.NewID in production)
	wait  time.Duration // ticket wait (tradeTicketWait in production)
}

// tradePreview is what a person sees before answering send? [y/N]. Its
// Command is the exact command that is sent on yes.
type tradePreview = node.Preview

// preview resolves cmd and checks it. Nothing is sent.
func (t *tradeClient) preview(ctx context.Context, cmd command.Command, reason string) tradePreview {
	return node.NewPreview(ctx, t.node, t.guard, cmd, reason, t.newID)
}

// Outcome statuses beyond the node's own (accepted, rejected, pending).
const tradeSendFailed = node.SendFailed // Submit failed: the node may or may not have the command

// tradeOutcome is what came of sending a preview, or of reading a ticket:
// node.SendResult, the shape the agent's write tools render too.
type tradeOutcome struct{ node.SendResult }

// send submits the previewed command with its reason and awaits its own
// ticket.
func (t *tradeClient) send(ctx context.Context, p tradePreview) tradeOutcome {
	o := tradeOutcome{node.Send(ctx, t.node, p, t.wait)}
	if o.Status == string(node.Pending) && o.Detail == "" && o.Ticket != "" {
		o.Advice += fmt.Sprintf(" (`ticket %s` reads it later.)", o.Ticket)
	}
	return o
}

// tradeTicketOutcome is ticket id's outcome as the trade surface tells it.
func tradeTicketOutcome(id string, res node.Outcome) tradeOutcome {
	res.Ticket = id
	return tradeOutcome{node.ResultOf(res)}
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
		return fmt.Errorf("%s is pending (ticket %s): %s", o.Verb, o.Ticket, node.PendingAdvice)
	}
	return fmt.Errorf("%s was not confirmed as sent: check the snapshot before trying again", o.Verb)
}
