package node

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"time"
)

// Request signing. Every request carries four headers: the key id
// ("observe" or "control"), a unix-seconds timestamp, a nonce used once, and
//
//	hex(HMAC-SHA256(key, method + "\n" + target + "\n" + timestamp + "\n" + nonce + "\n" + hex(sha256(body))))
//
// where target is the request path with its query string ("/v1/snapshot?venue=paper").
// The node refuses a bad signature, a timestamp more than Window away from
// its clock, and a nonce it has already seen. Only the control key may
// write.
const (
	HeaderKey       = "X-Wicket-Key"
	HeaderTimestamp = "X-Wicket-Timestamp"
	HeaderNonce     = "X-Wicket-Nonce"
	HeaderSignature = "X-Wicket-Signature"

	KeyObserve = "observe" // reads
	KeyControl = "control" // reads and writes

	Window = 30 * time.Second
)

// Sign computes the signature of one request.
func Sign(key, method, target, timestamp, nonce string, body []byte) string {
	sum := sha256.Sum256(body)
	m := hmac.New(sha256.New, []byte(key))
	m.Write([]byte(method + "\n" + target + "\n" + timestamp + "\n" + nonce + "\n" + hex.EncodeToString(sum[:])))
	return hex.EncodeToString(m.Sum(nil))
}

// Timestamp formats t as the timestamp header does.
func Timestamp(t time.Time) string { return strconv.FormatInt(t.Unix(), 10) }

// NewNonce is the production nonce source: 16 random bytes, hex.
func NewNonce() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return hex.EncodeToString(b)
}
