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
var signedHeaders = []string{headerProtocol, headerChunk, headerReply, headerWorker, headerError, headerHeld}

// signer signs and verifies frames with one cluster key. It is safe for
// concurrent use.
type signer struct {
	states sync.Pool // *macState keyed with the cluster key
}

// macState is an HMAC-SHA256 keyed with the cluster key and a buffer for
// a frame's head.
type macState struct {
	mac  hash.Hash
	head []byte
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
	s.states.New = func() any { return &macState{mac: hmac.New(sha256.New, k)} }
	return s, nil
}

// frameTag opens every frame, so that a signature made for anything
// else with the same key is never one of the cluster's.
const frameTag = "wicket research cluster message"

// frame is the signature over the canonical frame of a message: a tag,
// the subject, each of signedHeaders and the body, each written as its
// length (8 bytes, big-endian) and its bytes, so that no two messages
// share a frame.
func (s *signer) frame(subject string, h nats.Header, body []byte) [sha256.Size]byte {
	st := s.states.Get().(*macState)
	defer s.states.Put(st)
	head := appendField(st.head[:0], frameTag)
	head = appendField(head, subject)
	for _, k := range signedHeaders {
		head = appendField(head, h.Get(k))
	}
	head = binary.BigEndian.AppendUint64(head, uint64(len(body)))
	st.head = head
	st.mac.Reset()
	st.mac.Write(head)
	st.mac.Write(body)
	var sum [sha256.Size]byte
	st.mac.Sum(sum[:0])
	return sum
}

func appendField(b []byte, s string) []byte {
	return append(binary.BigEndian.AppendUint64(b, uint64(len(s))), s...)
}

// sign sets m's signature, after its subject, headers and body are final.
func (s *signer) sign(m *nats.Msg) {
	if m.Header == nil {
		m.Header = nats.Header{}
	}
	sum := s.frame(m.Subject, m.Header, m.Data)
	m.Header.Set(headerSignature, hex.EncodeToString(sum[:]))
}

// verify reports whether the signature in h is the one of the frame.
func (s *signer) verify(subject string, h nats.Header, body []byte) bool {
	sig := h.Get(headerSignature)
	var got [sha256.Size]byte
	if len(sig) != 2*sha256.Size {
		return false
	}
	if _, err := hex.Decode(got[:], []byte(sig)); err != nil {
		return false
	}
	want := s.frame(subject, h, body)
	return hmac.Equal(got[:], want[:])
}

// signed is a message on subject with body, signed.
func (s *signer) signed(subject string, body []byte) *nats.Msg {
	m := nats.NewMsg(subject)
	m.Data = body
	m.Header.Set(headerProtocol, protocol)
	s.sign(m)
	return m
}
