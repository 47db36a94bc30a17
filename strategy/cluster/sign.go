package cluster

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"sync"

	"github.com/nats-io/nats.go"

	"wicket/internal/project"
)

// Every message of the cluster (a chunk, an answer, a heartbeat, a ping,
// a cancel, a bars announcement) is signed with the cluster key: an
// HMAC-SHA256 over its canonical frame, carried in headerSignature. A
// message whose signature is missing or wrong is refused: a chunk is not
// run, an answer is not taken (it is counted, and the chunk's genuine
// answer is still awaited), a heartbeat, a ping, a cancel or an
// announcement is ignored.
const headerSignature = "Wicket-Signature"

// MinKeyLen is the shortest cluster key accepted, in bytes.
const MinKeyLen = 32

// signedHeaders are the headers a signature covers, in this order; a
// header a message lacks counts as empty.
var signedHeaders = []string{headerProtocol, headerChunk, headerReply, headerWorker, headerError}

// signer signs and verifies frames with one cluster key. It is safe for
// concurrent use.
type signer struct {
	macs sync.Pool // hash.Hash: HMAC-SHA256 keyed with the cluster key
}

// newSigner checks key and returns its signer.
func newSigner(key []byte) (*signer, error) {
	if len(key) == 0 {
		return nil, fmt.Errorf("the research cluster needs its cluster key, the same on every machine of the cluster: set %s in the environment or secrets.env (`wicket init` writes one into settings/secrets.env; copy its value to each worker machine, or make one with `openssl rand -hex 32`)", project.KeyCluster)
	}
	if len(key) < MinKeyLen {
		return nil, fmt.Errorf("the cluster key %s is %d characters, fewer than %d: give it at least %d random ones (`openssl rand -hex 32`), the same on every machine of the cluster", project.KeyCluster, len(key), MinKeyLen, MinKeyLen)
	}
	k := append([]byte(nil), key...)
	s := &signer{}
	s.macs.New = func() any { return hmac.New(sha256.New, k) }
	return s, nil
}

// frameTag opens every frame, so that a signature made for anything
// else with the same key is never one of the cluster's.
const frameTag = "wicket research cluster message"

// frame is the signature over the canonical frame of a message: a tag,
// the subject, each of signedHeaders and the body, each written as its
// length (8 bytes, big-endian) and its bytes, so that no two messages
// share a frame.
func (s *signer) frame(subject string, h nats.Header, body []byte) []byte {
	mac := s.macs.Get().(hash.Hash)
	defer s.macs.Put(mac)
	mac.Reset()
	var n [8]byte
	field := func(b []byte) {
		binary.BigEndian.PutUint64(n[:], uint64(len(b)))
		mac.Write(n[:])
		mac.Write(b)
	}
	field([]byte(frameTag))
	field([]byte(subject))
	for _, k := range signedHeaders {
		field([]byte(h.Get(k)))
	}
	field(body)
	return mac.Sum(nil)
}

// sign sets m's signature, after its subject, headers and body are final.
func (s *signer) sign(m *nats.Msg) {
	if m.Header == nil {
		m.Header = nats.Header{}
	}
	m.Header.Set(headerSignature, hex.EncodeToString(s.frame(m.Subject, m.Header, m.Data)))
}

// verify reports whether the signature in h is the one of the frame.
func (s *signer) verify(subject string, h nats.Header, body []byte) bool {
	got, err := hex.DecodeString(h.Get(headerSignature))
	if err != nil || len(got) != sha256.Size {
		return false
	}
	return hmac.Equal(got, s.frame(subject, h, body))
}

// signed is a message on subject with body, signed.
func (s *signer) signed(subject string, body []byte) *nats.Msg {
	m := nats.NewMsg(subject)
	m.Data = body
	m.Header.Set(headerProtocol, protocol)
	s.sign(m)
	return m
}
