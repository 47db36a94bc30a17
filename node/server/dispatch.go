package server

import (
	"fmt"
	"strings"
	"time"

	"wicket/node"
	"wicket/node/command"
	"wicket/node/paper"
)

// venueVerbs is what a kind of venue does for each write verb that names
// a venue; dispatch is the one switch over the verbs, for paper and real
// venues alike. Each method runs on the fold, after the node's checks
// passed. A paper venue applies the command at once (its events left for
// the caller to commit) and returns nil. A real venue journals the
// command's intent and returns the calls its lane makes (laneCall), or nil
// when the command is already finished (refused, or held by the node).
type venueVerbs interface {
	submit(c command.Command) laneCall
	cancel(c command.Command) laneCall
	modify(c command.Command) laneCall
	massCancel(c command.Command) laneCall
	flatten(c command.Command) laneCall
	marketExit(c command.Command) laneCall
}

// laneCall is a real venue's calls for one command, made on its lane; it
// returns what is applied on the fold once they are answered.
type laneCall func() (answer func())

// dispatch runs write command c on venue kind v.
func dispatch(c command.Command, v venueVerbs) laneCall {
	switch c.Verb {
	case command.SubmitOrder:
		return v.submit(c)
	case command.CancelOrder:
		return v.cancel(c)
	case command.Modify:
		return v.modify(c)
	case command.MassCancel:
		return v.massCancel(c)
	case command.Flatten:
		return v.flatten(c)
	case command.MarketExit:
		return v.marketExit(c)
	}
	return nil
}

// paperVerbs runs the verbs on the paper venues, at once, describing each
// in out.
type paperVerbs struct {
	e   *engine
	now time.Time
	out *node.Outcome
}

var _ venueVerbs = paperVerbs{}

func (p paperVerbs) submit(c command.Command) laneCall {
	e, out, now := p.e, p.out, p.now
	legs := c.Legs()
	var group string
	if len(legs) > 1 {
		group = e.nextOrderID()
	}
	var details []string
	for _, l := range legs {
		id := e.nextOrderID()
		o := paperOrder(l.Command, id, group)
		if group != "" {
			o.Leg = l.Name
		}
		if l.Exit {
			o.Parent = group // a bracket's entry is its first leg
		}
		e.venues[c.Venue].Place(o, now, e.emit)
		e.describeOrder(out, c.Venue, id)
		details = append(details, out.Detail)
		if group != "" {
			out.OrderIDs = append(out.OrderIDs, id)
		}
	}
	if group != "" {
		o, _ := e.venues[c.Venue].Order(group)
		out.OrderID, out.Order, out.ClientOrderID = o.ID, &o, c.ClientOrderID
		out.Detail = fmt.Sprintf("oco %s, one leg cancels the other: %s", group, strings.Join(details, "; "))
		if c.Type == command.Bracket {
			out.Detail = fmt.Sprintf("bracket %s, its exits active once the entry fills, one cancelling the other: %s", group, strings.Join(details, "; "))
		}
	}
	return nil
}

func (p paperVerbs) cancel(c command.Command) laneCall {
	e, out, now := p.e, p.out, p.now
	o, _ := e.find(c.Venue, c.OrderID, c.ClientOrderID)
	if o.Group != "" {
		out.Canceled = e.venues[c.Venue].CancelGroup(o.Group, fmt.Sprintf("canceled by cancel_order (%s %s)", groupType(e.venues[c.Venue], o.Group), o.Group), now, e.emit)
		e.describeOrder(out, c.Venue, o.ID)
		out.Detail = fmt.Sprintf("canceled %s %s: %s", groupType(e.venues[c.Venue], o.Group), o.Group, strings.Join(out.Canceled, ", "))
		return nil
	}
	e.must(e.venues[c.Venue].Cancel(o.ID, "canceled by cancel_order", now, e.emit))
	e.describeOrder(out, c.Venue, o.ID)
	return nil
}

func (p paperVerbs) modify(c command.Command) laneCall {
	e, out, now := p.e, p.out, p.now
	o, _ := e.find(c.Venue, c.OrderID, c.ClientOrderID)
	if v, ok := e.venues[c.Venue].(*paper.Venue); ok {
		e.must(v.Amend(o.ID, c, now, e.emit))
	} else {
		e.must(e.venues[c.Venue].Modify(o.ID, c.Quantity, c.Price, now, e.emit))
	}
	e.describeOrder(out, c.Venue, o.ID)
	return nil
}

func (p paperVerbs) massCancel(c command.Command) laneCall {
	p.out.Canceled = p.e.cancelWhere(c.Venue, c.Symbol, c.Side, "mass_cancel", p.now)
	p.out.Detail = fmt.Sprintf("canceled %d order(s) on %s", len(p.out.Canceled), c.Venue)
	return nil
}

func (p paperVerbs) flatten(c command.Command) laneCall {
	p.out.OrderIDs = p.e.flatten(c.Venue, flattenSymbols(p.e.venues[c.Venue], c), "flatten", p.now)
	p.out.Detail = fmt.Sprintf("flattened %d position(s) on %s", len(p.out.OrderIDs), c.Venue)
	return nil
}

// marketExit exits venue c.Venue, or without one every paper venue.
func (p paperVerbs) marketExit(c command.Command) laneCall {
	e, out := p.e, p.out
	names := e.paperNames()
	if c.Venue != "" {
		names = []string{c.Venue}
	}
	for _, name := range names {
		out.Canceled = append(out.Canceled, e.cancelWhere(name, "", "", "market_exit", p.now)...)
		out.OrderIDs = append(out.OrderIDs, e.flatten(name, e.venues[name].Held(), "market_exit", p.now)...)
	}
	out.Detail = fmt.Sprintf("canceled %d order(s) and flattened %d position(s) on %s", len(out.Canceled), len(out.OrderIDs), strings.Join(names, ", "))
	return nil
}
