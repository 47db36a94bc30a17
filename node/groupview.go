package node

import "wicket/node/guardrail"

var _ guardrail.GroupView = (*Snapshot)(nil)

// GroupOpenLeg is the first open leg of the compound order a leg of which
// orderID or clientOrderID names, when that leg is not open itself: what
// the node's cancel_order targets then (guardrail.GroupView). A bracket's
// filled entry is named by the group's id; its client order id is the
// bracket's.
func (s *Snapshot) GroupOpenLeg(venue, orderID, clientOrderID string) (guardrail.Order, bool) {
	v := s.venue(venue)
	if v == nil {
		return guardrail.Order{}, false
	}
	for _, g := range v.Groups {
		named := orderID != "" && g.ID == orderID
		for _, l := range g.Legs {
			if (orderID != "" && l.OrderID == orderID) || (clientOrderID != "" && l.ClientID == clientOrderID) {
				named = named || l.Status != OrderOpen
			}
		}
		if !named {
			continue
		}
		for _, o := range v.OpenOrders {
			if o.Group == g.ID && o.Status == OrderOpen {
				return o.View(), true
			}
		}
	}
	return guardrail.Order{}, false
}
