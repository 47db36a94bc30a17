package approval

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"time"
)

// An answer to a request is signed with the operator key (an Ed25519 key
// pair): `wicket approve` holds the private half, the server waiting for
// the answer only the public half, and it takes no answer without a good
// signature. The signature covers the request's id, the digest of the
// request as the operator was shown it, the answer and who gave it, so it
// answers exactly one command once.

// Digest is the hex SHA-256 of the request's facts as `wicket approve`
// shows them: id, session, tool, the command in words, reason, guardrail,
// dry run, venue, attention, deadline, server and project.
func (r Request) Digest() string {
	b, _ := json.Marshal(struct {
		ID, Session, Tool, Command, Reason, Guardrail, DryRun, Venue, Attention, Expires, Project string
		Server                                                                                    int
	}{r.ID, r.Session, r.Tool, r.Command, r.Reason, r.Guardrail, r.DryRun, r.Venue, r.Attention,
		r.Expires.UTC().Format(time.RFC3339Nano), r.Project, r.Server}) // strings and an int: cannot fail
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// answerDomain prefixes every signed answer, so no other signed text of
// wicket's can pass for one.
const answerDomain = "wicket operator approval v1\n"

func answerMessage(id, digest string, approve bool, by string) []byte {
	b, _ := json.Marshal(struct {
		ID      string `json:"id"`
		Digest  string `json:"digest"`
		Approve bool   `json:"approve"`
		By      string `json:"by"`
	}{id, digest, approve, by})
	return append([]byte(answerDomain), b...)
}

// SignAnswer signs the operator's answer to r with key (base64).
func SignAnswer(key ed25519.PrivateKey, r Request, approve bool, by string) string {
	return base64.StdEncoding.EncodeToString(ed25519.Sign(key, answerMessage(r.ID, r.Digest(), approve, by)))
}

// verifyAnswer reports whether sig is pub's signature of the answer to r.
func verifyAnswer(pub ed25519.PublicKey, r Request, approve bool, by, sig string) bool {
	b, err := base64.StdEncoding.DecodeString(sig)
	if err != nil || len(pub) != ed25519.PublicKeySize || len(b) != ed25519.SignatureSize {
		return false
	}
	return ed25519.Verify(pub, answerMessage(r.ID, r.Digest(), approve, by), b)
}
