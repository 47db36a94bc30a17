package agent

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"wicket/node"
	"wicket/node/command"
)

// Orders belong to the caller that placed them. The HTTP server's
// sessions share one node and its control key, so without this any
// caller's session could modify or cancel another's orders, such as the
// stop leg of its bracket. Every session of one HTTP server shares one
// orderOwners: a submit_order the node took records its order (the
// entry, whose id a bracket's legs carry as their parent and group) and
// its client order id under the session's caller, and a modify_order or
// cancel_order whose order (or whose leg's entry) another caller placed
// is refused at its preview. Orders the operator or the human CLI
// placed (wicket trade, wicket node), or that were placed before this
// server started, have no owner here and stay writable; the operator and
// the CLI write any order, since they hold the node's key themselves.
// Over stdio one process is one caller, and over --no-auth every session
// is the one local operator: nothing is refused there.

// maxOwned bounds the orders remembered; past it, any one is forgotten.
const maxOwned = 1 << 16

type orderOwners struct {
	mu       sync.Mutex
	byOrder  map[string]string // node order id → caller
	byClient map[string]string // client order id → caller
}

func newOrderOwners() *orderOwners {
	return &orderOwners{byOrder: map[string]string{}, byClient: map[string]string{}}
}

// placed records that caller placed the order orderID (client order id
// clientOrderID); either may be empty.
func (o *orderOwners) placed(caller, orderID, clientOrderID string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, m := range []struct {
		ids map[string]string
		id  string
	}{{o.byOrder, orderID}, {o.byClient, clientOrderID}} {
		if m.id == "" {
			continue
		}
		if len(m.ids) >= maxOwned {
			for k := range m.ids {
				delete(m.ids, k)
				break
			}
		}
		m.ids[m.id] = caller
	}
}

// owner is who placed the order with any of ids (node order ids) or
// client order id cid; ok false when none is known.
func (o *orderOwners) owner(cid string, ids ...string) (string, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, id := range ids {
		if c, ok := o.byOrder[id]; ok && id != "" {
			return c, true
		}
	}
	for _, suffix := range []string{"", command.StopLegSuffix, command.TakeProfitLegSuffix} {
		if base, cut := strings.CutSuffix(cid, suffix); cut && base != "" {
			if c, ok := o.byClient[base]; ok {
				return c, true
			}
		}
	}
	return "", false
}

// recordPlaced notes the orders a submit_order's send placed.
func (tb *toolbox) recordPlaced(p node.Preview, r node.SendResult) {
	if tb.owners == nil || p.Command.Verb != command.SubmitOrder || (r.Status != string(node.Accepted) && r.Status != string(node.Pending)) {
		return
	}
	tb.owners.placed(tb.caller, r.OrderID, p.Command.ClientOrderID)
}

// foreignOrder is why cmd may not be sent from this session: it modifies
// or cancels an order another caller placed. "" means it may.
func (tb *toolbox) foreignOrder(ctx context.Context, cmd command.Command) string {
	if tb.owners == nil || (cmd.Verb != command.Modify && cmd.Verb != command.CancelOrder) || tb.Node == nil {
		return ""
	}
	ids := []string{cmd.OrderID}
	cid := cmd.ClientOrderID
	if snap, err := tb.Node.Snapshot(ctx, cmd.Venue, 0); err == nil {
		for _, v := range snap.Venues {
			for _, o := range v.OpenOrders {
				if (cmd.OrderID != "" && (o.ID == cmd.OrderID || o.Group == cmd.OrderID)) || (cid != "" && o.ClientOrderID == cid) {
					ids = append(ids, o.ID, o.Parent, o.Group)
					if cid == "" {
						cid = o.ClientOrderID
					}
				}
			}
		}
	}
	if owner, ok := tb.owners.owner(cid, ids...); !ok || owner == tb.caller {
		return ""
	}
	target := cmd.OrderID
	if target == "" {
		target = cmd.ClientOrderID
	}
	return fmt.Sprintf("order %s was placed by another caller's session: a caller modifies and cancels only the orders it placed; that caller, or the operator with `wicket trade`, can change it", target)
}
