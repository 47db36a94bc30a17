package deploy

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"time"
)

// ClientOrderIDPrefix starts the client order id of every order a
// deployment sends.
const ClientOrderIDPrefix = "wd-"

// ClientOrderID is the client order id of intent n of deployment id at
// the bar of time bar: "wd-" and 32 hex digits of a SHA-256 of the three,
// 35 characters (within Binance's 36 and the node's name rule). The same
// (deployment, bar, intent) always gives the same id, so an intent sent,
// lost in a crash and evaluated again is refused by the node as the
// duplicate it is.
func ClientOrderID(id string, bar time.Time, n int) string {
	h := sha256.New()
	h.Write([]byte(id))
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(bar.Unix()))
	binary.BigEndian.PutUint64(b[8:], uint64(n))
	h.Write(b[:])
	sum := h.Sum(nil)
	return ClientOrderIDPrefix + hex.EncodeToString(sum[:16])
}

// GroupIDLen is the length of the client order id of a command whose legs
// (or whose trigger the node fires) take ids with a suffix: "wd-" and 26
// hex digits, so the leg's id with the longest suffix (-stop, -fire)
// still travels to Binance (at most 36 characters).
const GroupIDLen = len(ClientOrderIDPrefix) + 26

// groupID is cid cut to GroupIDLen: a bracket's or a protective order's
// own id, as deterministic as cid.
func groupID(cid string) string { return cid[:min(len(cid), GroupIDLen)] }
