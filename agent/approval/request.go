// Package approval puts a confirmed write in front of a person before it is
// sent. It describes a waiting command in plain words (the same text for an
// MCP elicitation and for `wicket approve`) and runs the operator queue: a
// server waits on a unix socket (0600) in the project's settings/state/,
// and `wicket approve` at a terminal lists what every server of the project
// has waiting and approves or declines each, signing every answer with the
// operator key (sign.go).
//
// approval never sends a command itself, never approves on a timeout or an
// error (only an explicit decision approves), never takes an answer the
// operator key did not sign, never holds that key on the server's side
// (only its public half), and never listens on anything but a unix socket
// of the operator's own user.
package approval

import (
	"fmt"
	"strings"
	"time"

	"wicket/node/command"
)

// Outcomes, as the trace records them.
const (
	Accepted    = "accepted"
	Declined    = "declined"
	Timeout     = "timeout"
	Unsupported = "unsupported"
)

// Request is one confirmed write waiting for a person, with the facts its
// preview showed.
type Request struct {
	ID        string `json:"id"`      // the preview token
	Session   string `json:"session"` // the MCP session that asks
	Tool      string `json:"tool"`
	Command   string `json:"command"` // the resolved command in plain words
	Reason    string `json:"reason,omitempty"`
	Guardrail string `json:"guardrail"` // the client-side check, in words
	DryRun    string `json:"dry_run"`   // the node's dry run, in words
	Venue     string `json:"venue"`     // the venue's environment and armed state
	// Attention is said before anything else when the command touches a
	// live venue (real money); empty otherwise.
	Attention string    `json:"attention,omitempty"`
	Expires   time.Time `json:"expires"`    // the decision must come before this
	Server    int       `json:"server_pid"` // filled by the queue
	Project   string    `json:"project,omitempty"`
}

// ElicitIntro is the line an elicitation puts before the facts.
const ElicitIntro = "The agent asks to send this command. Approve only if you want it sent now."

// Describe is the request in plain words, one fact a line; a live venue's
// attention line comes first.
func (r Request) Describe(now time.Time) string {
	return r.lead() + r.facts(now)
}

// Elicitation is the message an MCP elicitation shows: the live venue's
// attention line first, then ElicitIntro, then the facts.
func (r Request) Elicitation(now time.Time) string {
	return r.lead() + ElicitIntro + "\n" + r.facts(now)
}

func (r Request) lead() string {
	if r.Attention == "" {
		return ""
	}
	return r.Attention + "\n"
}

func (r Request) facts(now time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", r.Command)
	if r.Reason != "" {
		fmt.Fprintf(&b, "reason given: %s\n", r.Reason)
	}
	fmt.Fprintf(&b, "guardrail: %s\n", r.Guardrail)
	fmt.Fprintf(&b, "dry run: %s\n", r.DryRun)
	fmt.Fprintf(&b, "venue: %s\n", r.Venue)
	left := r.Expires.Sub(now).Round(time.Second)
	if left < 0 {
		left = 0
	}
	fmt.Fprintf(&b, "decide within %s (until %s); no decision sends nothing", left, r.Expires.UTC().Format("15:04:05 UTC"))
	return b.String()
}

// priceWords says at what price an order of c's type trades, so a person
// approving a stop never reads "at market".
func priceWords(c command.Command) string {
	stopLimit := func() string {
		w := "stop at " + c.StopPrice.String()
		if !c.LimitPrice.IsZero() {
			w += " then limit at " + c.LimitPrice.String()
		}
		return w
	}
	switch c.Type {
	case command.Limit:
		return "limit at " + c.Price.String()
	case command.Stop, command.StopLimit:
		return stopLimit()
	case command.TrailingStop:
		if !c.TrailPercent.IsZero() {
			return "trailing stop " + c.TrailPercent.String() + "% behind the best price"
		}
		return "trailing stop " + c.TrailAmount.String() + " behind the best price"
	case command.OCO:
		return "one-cancels-other: limit at " + c.Price.String() + " or " + stopLimit()
	}
	return "at market"
}

// Words renders a command in plain words.
func Words(c command.Command) string {
	var s string
	switch c.Verb {
	case command.SubmitOrder:
		s = fmt.Sprintf("submit_order: %s %s %s %s, %s, on venue %s", c.Side, c.Quantity, c.Symbol, priceWords(c), c.TIF(), c.Venue)
	case command.CancelOrder:
		s = fmt.Sprintf("cancel_order: cancel order %s on venue %s", orderRef(c), c.Venue)
	case command.Modify:
		var ch []string
		if !c.Quantity.IsZero() {
			ch = append(ch, "quantity to "+c.Quantity.String())
		}
		if !c.Price.IsZero() {
			ch = append(ch, "price to "+c.Price.String())
		}
		s = fmt.Sprintf("modify: change order %s on venue %s: %s", orderRef(c), c.Venue, strings.Join(ch, " and "))
	case command.Flatten:
		what := "every position"
		if c.Symbol != "" {
			what = "the " + c.Symbol + " position"
		}
		s = fmt.Sprintf("flatten: close %s on venue %s at market", what, c.Venue)
	case command.MarketExit:
		v := c.Venue
		if v == "" {
			v = "every venue"
		} else {
			v = "venue " + v
		}
		s = fmt.Sprintf("market_exit: cancel every open order and close every position on %s at market", v)
	case command.MassCancel:
		what := "every open order"
		if c.Symbol != "" {
			what = "every open " + c.Symbol + " order"
		}
		s = fmt.Sprintf("mass_cancel: cancel %s on venue %s", what, c.Venue)
	case command.SetTradingState:
		s = fmt.Sprintf("set_trading_state: set the node's trading state to %s", c.State)
	default:
		s = c.String()
	}
	if c.Verb == command.SubmitOrder && c.ClientOrderID != "" {
		s += " (client order id " + c.ClientOrderID + ")"
	}
	return s
}

func orderRef(c command.Command) string {
	if c.OrderID != "" {
		return c.OrderID
	}
	return "with client order id " + c.ClientOrderID
}
