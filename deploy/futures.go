package deploy

import (
	"wicket/internal/project"
	"wicket/node"
)

// orderID is the client order id a deployment's order goes out under at
// venue vc: cid, but at a margined venue (binance-futures) cut to
// GroupIDLen as a bracket's is, since an order there that takes the
// position through zero is sent split under cid-close and cid-open
// (node/server's flip.go), and those must still travel to the venue
// (Binance takes 36 characters). The cut id is as deterministic as cid.
func orderID(vc project.Venue, cid string) string {
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
