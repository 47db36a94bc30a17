package strategy

import (
	"crypto/sha256"
	"encoding/hex"
)

// Digest is a content digest of the bars (count, times and every price
// column), the same in every process: the sweep's caller and its workers
// agree on bars by it without sending them.
func (b Bars) Digest() string {
	h := sha256.New()
	b.WriteEncoded(h) //nolint:errcheck // a hash does not fail
	return hex.EncodeToString(h.Sum(nil))
}
