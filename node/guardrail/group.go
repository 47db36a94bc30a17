package guardrail

// GroupView is a View that also knows compound orders: a cancel_order that
// names a leg of an oco or bracket that is no longer open — a bracket's
// filled entry, whose order id is the group's — cancels the group's open
// legs at the node, so the client-side check finds it the same way.
type GroupView interface {
	View
	// GroupOpenLeg is the first open leg of the compound order one of
	// whose legs the ids name (the node's id or the client's), when that
	// leg is not open itself.
	GroupOpenLeg(venue, orderID, clientOrderID string) (Order, bool)
}

// groupCancel checks a cancel_order whose named order is not open but
// names a compound order with an open leg; false when it does not.
func (r *run) groupCancel() bool {
	gv, ok := r.view.(GroupView)
	if !ok {
		return false
	}
	leg, ok := gv.GroupOpenLeg(r.c.Venue, r.c.OrderID, r.c.ClientOrderID)
	if !ok {
		return false
	}
	return r.add("order", true, "group %s: the named leg is no longer open, so this cancels the group's open legs (the first: %s %s %s %s %s)",
		leg.Group, leg.ID, leg.Type, leg.Side, leg.Quantity, leg.Symbol)
}
