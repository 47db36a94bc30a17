package node

import (
	"context"
	"fmt"
	"strings"
	"time"

	"wicket/internal/project"
	"wicket/node/command"
	"wicket/node/guardrail"
)

// Writing to a node is the same two steps on every surface (the agent's
// write tools and the human trade REPL): a Preview that resolves and checks
// a command and sends nothing, then Send, which submits exactly the
// previewed command and awaits its own ticket. Both surfaces call these, so
// a command reaches the node the same way whoever typed it.

// Conn is what writing needs of a node; *Client is one.
type Conn interface {
	Snapshot(ctx context.Context, venue string, events int) (*Snapshot, error)
	DryRun(ctx context.Context, env command.Envelope) (Verdict, error)
	Submit(ctx context.Context, env command.Envelope) (string, error)
	Ticket(ctx context.Context, id string, wait time.Duration) (Outcome, error)
}

var _ Conn = (*Client)(nil)

// TicketWait is how long Send awaits a command's own ticket.
const TicketWait = 2 * time.Second

// Preview is a command resolved and checked, before anything is sent. Its
// Command is exactly what Send submits.
type Preview struct {
	// Venues are the command's venues as the node's snapshot showed them
	// (kind, environment, armed): one, or every venue for a market_exit
	// without one. Empty when the node could not be read.
	Venues    []PreviewVenue   `json:"venues,omitempty"`
	Command   command.Command  `json:"command"`
	Reason    string           `json:"reason,omitempty"`
	Guardrail guardrail.Report `json:"guardrail"`
	DryRun    *Verdict         `json:"dry_run"` // nil when the node could not be asked
	Notes     []string         `json:"notes,omitempty"`
}

// PreviewVenue is what a preview shows of a venue: whether the order would
// be real money, and whether the node would send it now.
type PreviewVenue struct {
	Name        string    `json:"name"`
	Kind        string    `json:"kind"`
	Environment string    `json:"environment"`
	Armed       bool      `json:"armed"`
	ArmedUntil  time.Time `json:"armed_until,omitzero"`
	MarkSource  string    `json:"mark_source,omitempty"`
	// Spellings are the venue's (Venue.Spellings): a symbol it spells
	// its own way, with both spellings.
	Spellings map[string]project.Spelling `json:"spellings,omitempty"`
}

// Attention is the line a preview leads with when the command touches a
// live venue (real money), or "" when it does not.
func (p Preview) Attention() string {
	var parts []string
	for _, v := range p.Venues {
		if v.Environment != "live" {
			continue
		}
		state := "armed until " + v.ArmedUntil.UTC().Format(time.RFC3339)
		if !v.Armed {
			state = "disarmed, so the node will refuse it until an operator arms it at a terminal"
		}
		parts = append(parts, fmt.Sprintf("LIVE VENUE %s (%s live): this is real money; %s", v.Name, v.Kind, state))
	}
	return strings.Join(parts, "; ")
}

// NewPreview resolves cmd (a submit_order without a client order id gets
// "wk-" + newID(); a symbol in the venue's own spelling becomes the venue's
// listed one, Guardrail.Listed), runs the client-side guardrail over a
// fresh snapshot of its venue and asks the node for a dry run. It never sends the command;
// a node that cannot be read or asked is noted, not an error.
func NewPreview(ctx context.Context, conn Conn, g *guardrail.Guardrail, cmd command.Command, reason string, newID func() string) Preview {
	cmd.Symbol = g.Listed(cmd.Venue, cmd.Symbol) // the venue's own spelling (BTCUSDT) names its listed BTC-USD
	resolved := cmd.Resolve(newID)
	p := Preview{Command: resolved, Reason: command.SanitizeReason(reason)}
	var view guardrail.View
	if snap, err := conn.Snapshot(ctx, resolved.Venue, 0); err != nil {
		p.Notes = append(p.Notes, "the node could not be read for marks and positions ("+err.Error()+"); the guardrail ran without them")
	} else {
		view = snap
		for _, v := range snap.Venues {
			if resolved.Venue == "" || v.Name == resolved.Venue {
				p.Venues = append(p.Venues, PreviewVenue{Name: v.Name, Kind: v.Kind, Environment: v.Environment,
					Armed: v.Armed, ArmedUntil: v.ArmedUntil, MarkSource: v.MarkSource, Spellings: v.Spellings})
			}
		}
	}
	p.Guardrail = g.Check(resolved, view)
	if !p.Guardrail.OK {
		p.Notes = append(p.Notes, "the client-side guardrail failed: the node enforces the same limits and is expected to reject this command; change it and preview again")
	}
	if v, err := conn.DryRun(ctx, command.NewEnvelope(resolved, p.Reason)); err != nil {
		p.Notes = append(p.Notes, "no dry run was asked of the node: "+err.Error())
	} else {
		p.DryRun = &v
	}
	return p
}

// PendingAdvice is the one wording of what to do about a command whose
// outcome is not known yet: every surface says it the same way.
const PendingAdvice = "check node_snapshot for the order and do not resend it (a retried submit_order with the same client_order_id is refused as a duplicate)"

// SendFailed is a SendResult's status when Submit itself failed: the node
// may or may not have the command.
const SendFailed = "send_failed"

// SendResult is what came of a send (or of reading a ticket), told
// truthfully, in the one shape every surface renders. Status is accepted
// or rejected as the node answered, pending (the ticket did not resolve
// within the wait or could not be read, or the node resolved it pending
// because a real venue's answer was lost), or SendFailed. Reason, the
// node's why of a rejection, is made safe to show here, once. Advice, set
// exactly when the outcome is not known (pending, SendFailed), says what to
// do, always in PendingAdvice's words: never resend.
type SendResult struct {
	Status        string               `json:"status"`
	Verb          command.Verb         `json:"verb"`
	ClientOrderID string               `json:"client_order_id,omitempty"`
	Ticket        string               `json:"ticket,omitempty"`
	OrderID       string               `json:"order_id,omitempty"`
	Detail        string               `json:"detail,omitempty"`
	Code          string               `json:"code,omitempty"`
	Reason        string               `json:"reason,omitempty"`
	ExistingOrder *Order               `json:"existing_order,omitempty"`
	TradingState  command.TradingState `json:"trading_state,omitempty"`
	Advice        string               `json:"advice,omitempty"`
}

// ResultOf is a ticket's outcome as a SendResult.
func ResultOf(o Outcome) SendResult {
	r := SendResult{Status: string(o.Status), Verb: o.Verb, ClientOrderID: o.ClientOrderID, Ticket: o.Ticket}
	switch o.Status {
	case Accepted:
		r.OrderID, r.Detail, r.TradingState = o.OrderID, o.Detail, o.TradingState
	case Rejected:
		r.Code, r.Reason, r.ExistingOrder = o.Code, command.SanitizeReason(o.Reason), o.ExistingOrder
	default: // pending; resolved so by the node, a real venue's answer was lost and the detail says so
		r.Status, r.OrderID, r.Detail = string(Pending), o.OrderID, o.Detail
		r.Advice = o.Detail
		if r.Advice == "" {
			r.Advice = fmt.Sprintf("the node has not finished ticket %s yet; %s", o.Ticket, PendingAdvice)
		}
	}
	return r
}

// Send submits the previewed command with its reason and awaits its own
// ticket for up to wait. It never resends.
func Send(ctx context.Context, conn Conn, p Preview, wait time.Duration) SendResult {
	r := SendResult{Status: SendFailed, Verb: p.Command.Verb, ClientOrderID: p.Command.ClientOrderID}
	ticket, err := conn.Submit(ctx, command.Envelope{Command: p.Command, Reason: p.Reason}) // NewPreview sanitized the reason
	if err != nil {
		r.Advice = fmt.Sprintf("the node did not take the command: %v. It may or may not have been received: %s", err, PendingAdvice)
		return r
	}
	res, err := conn.Ticket(ctx, ticket, wait)
	switch {
	case err != nil:
		r.Status, r.Ticket = string(Pending), ticket
		r.Advice = "the command was sent (ticket " + ticket + ") but its outcome could not be read: " + err.Error() + "; " + PendingAdvice
	case res.Status != Accepted && res.Status != Rejected && res.Detail == "":
		r.Status, r.Ticket = string(Pending), ticket
		r.Advice = fmt.Sprintf("the node has not finished this command within %s (ticket %s); %s", wait, ticket, PendingAdvice)
	default:
		cid := r.ClientOrderID
		r = ResultOf(res)
		r.Ticket, r.Verb = ticket, p.Command.Verb
		if cid != "" {
			r.ClientOrderID = cid
		} // else the node's: the client order id of the order a cancel or modify named by its order id
	}
	return r
}
