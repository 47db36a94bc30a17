package nodetest

import (
	"context"
	"time"

	"wicket/node"
	"wicket/node/command"
)

// Send submits env through c and awaits its own ticket for up to wait, as
// a test wants it in one call: the error is nil only when the node
// accepted the command (Err). Production code sends through node.Send,
// the one write path, which never turns a pending ticket into an error.
func Send(ctx context.Context, c *node.Client, env command.Envelope, wait time.Duration) (node.Outcome, error) {
	id, err := c.Submit(ctx, env)
	if err != nil {
		return node.Outcome{}, err
	}
	o, err := c.Ticket(ctx, id, wait)
	if err != nil {
		return node.Outcome{Ticket: id, Status: node.Pending}, err
	}
	return o, Err(o)
}

// Err is nil for an accepted ticket, a *node.Error of kind KindRejected
// (with the node's reason) for a rejected one, and of kind KindTimeout for
// one still pending.
func Err(o node.Outcome) error {
	switch o.Status {
	case node.Accepted:
		return nil
	case node.Rejected:
		return &node.Error{Kind: node.KindRejected, Code: o.Code, Message: o.Reason}
	}
	return &node.Error{Kind: node.KindTimeout, Code: "pending",
		Message: "ticket " + o.Ticket + " is still pending; " + node.PendingAdvice}
}
