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
	s := node.Send(ctx, t.node, p, t.wait)
	o := tradeOutcome{Status: s.Status, Verb: p.Command.Verb, ClientOrderID: p.Command.ClientOrderID, Ticket: s.Ticket, Note: s.Note}
	if s.Outcome != nil {
		o = tradeOutcomeOf(*s.Outcome)
		o.Ticket, o.Verb, o.Note = s.Ticket, p.Command.Verb, s.Note
		if p.Command.ClientOrderID != "" {
			o.ClientOrderID = p.Command.ClientOrderID
		} // else the node's: the client order id of the order a cancel or modify named by its order id
	} else if s.Status == string(node.Pending) && s.Ticket != "" {
		o.Note += fmt.Sprintf(" (`ticket %s` reads it later.)", s.Ticket)
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
	case node.Pending: // resolved pending by the node: a real venue's answer was lost
		o.OrderID, o.Detail = res.OrderID, res.Detail
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
		return fmt.Errorf("%s is pending (ticket %s): %s", o.Verb, o.Ticket, node.PendingAdvice)
	}
	return fmt.Errorf("%s was not confirmed as sent: check the snapshot before trying again", o.Verb)
}
