package node

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
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

// KeyOperator is the audit trail's key id for a change the operator key
// signed (arming). The operator key is an Ed25519 key pair, separate from
// the observe and control keys: the node holds only its public half, and
// the agent's process (wicket mcp) never holds its private half.
const KeyOperator = "operator"

// ArmStatement is what the operator key signs to arm: the action, what is
// armed (Target "venue" and its Name), for how long, the name typed to
// confirm, and the challenge the node issued for it (ArmInfo.Challenge),
// which binds the signature to one node, one venue and one use.
type ArmStatement struct {
	Action    string `json:"action"`
	Target    string `json:"target"`
	Name      string `json:"name"`
	For       string `json:"for"`
	Confirm   string `json:"confirm"`
	Challenge string `json:"challenge"`
}

// armDomain prefixes every signed arming statement, so no other signed
// text of wicket's can pass for one.
const armDomain = "wicket operator arm v1\n"

// Message is the exact bytes the operator key signs.
func (s ArmStatement) Message() []byte {
	b, _ := json.Marshal(s) // strings only: cannot fail
	return append([]byte(armDomain), b...)
}

// SignOperator signs s with the operator's private key (base64).
func SignOperator(key ed25519.PrivateKey, s ArmStatement) string {
	return base64.StdEncoding.EncodeToString(ed25519.Sign(key, s.Message()))
}

// VerifyOperator reports whether sig is pub's signature of s.
func VerifyOperator(pub ed25519.PublicKey, s ArmStatement, sig string) bool {
	b, err := base64.StdEncoding.DecodeString(sig)
	if err != nil || len(pub) != ed25519.PublicKeySize || len(b) != ed25519.SignatureSize {
		return false
	}
	return ed25519.Verify(pub, s.Message(), b)
}
