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
