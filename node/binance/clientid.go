package binance

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"wicket/node"
)

// Binance's newClientOrderId: at most 36 characters of [.A-Z:/a-z0-9_-].
var venueIDRE = regexp.MustCompile(`^[.A-Z:/a-z0-9_-]{1,36}$`)

// wk-<uuid> (the node's mint) ↔ wk<32 hex>; a replacement appends .<n>;
// a linked leg's or a fired trigger's suffix (node.StopLegSuffix,
// node.TakeProfitLegSuffix, node.FireSuffix) travels as -s, -t or -f, and
// a split flip's two orders (node.FlipCloseSuffix, node.FlipOpenSuffix)
// as -c and -o.
var (
	nodeMintRE  = regexp.MustCompile(`^wk-([0-9a-f]{8})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{12})(-stop|-tp|-fire|-close|-open)?$`)
	venueMintRE = regexp.MustCompile(`^wk([0-9a-f]{32})(\.[0-9a-z])?$`)
	venueLegRE  = regexp.MustCompile(`^wk([0-9a-f]{32})-([stf])$`)
	// A caller's own id (not minted) is replaced as <id>:<n>, so its
	// base keeps at most 34 characters; an id of that form is reserved.
	callerReplRE = regexp.MustCompile(`^(.{1,34}):([1-9a-z])$`)
	venueFlipRE  = regexp.MustCompile(`^wk([0-9a-f]{32})-([co])$`)
	legSuffixes  = map[string]string{node.StopLegSuffix: "-s", node.TakeProfitLegSuffix: "-t", node.FireSuffix: "-f", "-s": node.StopLegSuffix, "-t": node.TakeProfitLegSuffix, "-f": node.FireSuffix,
		node.FlipCloseSuffix: "-c", node.FlipOpenSuffix: "-o", "-c": node.FlipCloseSuffix, "-o": node.FlipOpenSuffix}
)

// ClientID is the node's client order id as Binance carries it: wk-<uuid>
// becomes wk<32 hex>; any other id that fits Binance's rule travels as it
// is. It is an error for an id that cannot travel (or that would read back
// as a minted one).
func ClientID(nodeID string) (string, error) {
	if m := nodeMintRE.FindStringSubmatch(nodeID); m != nil {
		return "wk" + strings.Join(m[1:6], "") + legSuffixes[m[6]], nil
	}
	if venueMintRE.MatchString(nodeID) || venueLegRE.MatchString(nodeID) || venueFlipRE.MatchString(nodeID) || callerReplRE.MatchString(nodeID) || !venueIDRE.MatchString(nodeID) {
		return "", fmt.Errorf("client_order_id %q cannot travel to binance (at most 36 characters of [.A-Z:/a-z0-9_-], not of the form wk<32 hex>, not ending in :<digit or letter>, which a replacement appends); let the node mint one", nodeID)
	}
	return nodeID, nil
}

// NodeID reverses ClientID (and strips a replacement's suffix).
func NodeID(venueID string) string {
	if m := venueLegRE.FindStringSubmatch(venueID); m != nil {
		return NodeID("wk"+m[1]) + legSuffixes["-"+m[2]]
	}
	if m := venueFlipRE.FindStringSubmatch(venueID); m != nil {
		return NodeID("wk"+m[1]) + legSuffixes["-"+m[2]]
	}
	if m := venueMintRE.FindStringSubmatch(venueID); m != nil {
		h := m[1]
		return "wk-" + h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
	}
	if m := callerReplRE.FindStringSubmatch(venueID); m != nil {
		return m[1]
	}
	return venueID
}

// replacementID is the id of the n-th replacement of an order (n ≥ 1): a
// minted id's is wk<32 hex>.<n>, a caller's own <id>:<n>.
func replacementID(venueID string, n int) (string, error) {
	if venueLegRE.MatchString(venueID) {
		return "", fmt.Errorf("order %s is a leg of an order list, which binance cannot replace alone (it would cancel the list); cancel the oco and submit a new one", venueID)
	}
	if n > 35 {
		return "", fmt.Errorf("order %s cannot be modified again at binance (35 replacements at most); cancel it and submit a new one", venueID)
	}
	if m := venueMintRE.FindStringSubmatch(venueID); m != nil {
		return "wk" + m[1] + "." + strconv.FormatInt(int64(n), 36), nil
	}
	base := NodeID(venueID)
	if len(base) > 34 {
		return "", fmt.Errorf("order %s cannot be modified at binance: its client order id has %d characters and a replacement needs two more than 34 (binance takes 36); cancel it and submit a new one", venueID, len(base))
	}
	return base + ":" + strconv.FormatInt(int64(n), 36), nil
}

// replacementOf reports a venue client id's replacement number.
func replacementOf(venueID string) (int, bool) {
	var suffix string
	if m := venueMintRE.FindStringSubmatch(venueID); m != nil && m[2] != "" {
		suffix = m[2][1:]
	} else if m := callerReplRE.FindStringSubmatch(venueID); m != nil && !venueMintRE.MatchString(venueID) {
		suffix = m[2]
	}
	if suffix == "" {
		return 0, false
	}
	n, err := strconv.ParseInt(suffix, 36, 64)
	return int(n), err == nil && n > 0
}
