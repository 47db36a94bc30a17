package deploy

import (
	"time"
	"wicket/internal/project"
	"wicket/node"
)

// intentID is the client order id intent n of deployment id at bar goes
// out under at venue vc, for a single series and a portfolio's legs alike:
// ClientOrderID, but at a margined venue (binance-futures) cut to
// GroupIDLen as a bracket's is, since an order there that takes the
// position through zero is sent split under <id>-close and <id>-open
// (node/server's flip.go), and those must still travel to the venue
// (Binance takes 36 characters). The cut id is as deterministic as the
// whole one.
func intentID(vc project.Venue, id string, bar time.Time, n int) string {
	cid := ClientOrderID(id, bar, n)
	if vc.Kind == project.KindBinanceFutures {
		return groupID(cid)
	}
	return cid
}

// sentAs says whether the node's order cid is the deployment's order
// sent: cid itself, or one of the two orders a split flip sent for it.
func sentAs(sent, cid string) bool {
	return cid == sent || cid == sent+node.FlipCloseSuffix || cid == sent+node.FlipOpenSuffix
}
