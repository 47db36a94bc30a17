package cluster

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

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

// Every signed message is also bound to its sweep (headerSweep: the
// dispatcher that sent it, or whose chunk it answers; empty on a
// heartbeat), numbered by its sender (headerSeq) and stamped with when it
// stops being good (headerExpires, Unix milliseconds by the sender's
// clock), all under the signature: a message read off the server and
// published again is refused once it expires, a worker runs a chunk id
// once (Worker.ranOnce), and a sweep takes a worker's heartbeat only
// with a higher sequence number than the last it saw of that worker.
const (
	headerSweep   = "Wicket-Sweep"
	headerSeq     = "Wicket-Seq"
	headerExpires = "Wicket-Expires"
)

// How long each kind of message is good for after it is signed. A chunk
// lives as long as the stream keeps it; a heartbeat for little more than
// the time a sweep counts a worker present after it (the clocks of the
// cluster's machines must agree within that: keep them synchronised);
// an answer, a ping, a cancel or an announcement is read at once.
const (
	chunkLife     = chunksMaxAge
	heartbeatLife = 10 * time.Second
	answerLife    = 10 * time.Minute
	noticeLife    = time.Minute
)

// lifeOf is how long a message on subject is good for.
func lifeOf(subject string) time.Duration {
	switch {
	case strings.HasPrefix(subject, chunkPrefix), strings.HasPrefix(subject, tailPrefix):
		return chunkLife
	case subject == presenceSubj:
		return heartbeatLife
	case strings.HasPrefix(subject, resultPrefix):
		return answerLife
	}
	return noticeLife
}

// signedHeaders are the headers a signature covers, in this order; a
// header a message lacks counts as empty.
var signedHeaders = []string{headerProtocol, headerChunk, headerReply, headerWorker, headerError, headerHeld, headerSweep, headerSeq, headerExpires}

// signer signs and verifies frames with one cluster key. It is safe for
// concurrent use.
type signer struct {
	states sync.Pool // *macState keyed with the cluster key
	now    func() time.Time
	seq    atomic.Uint64 // the messages it signed
	sweep  string        // headerSweep of the messages it signs that name none (a dispatcher's id)
}

// macState is an HMAC-SHA256 keyed with the cluster key and a buffer for
// a frame's head.
type macState struct {
	mac  hash.Hash
	head []byte
}

// newSigner checks key and returns its signer, which reads the clock now.
func newSigner(key []byte, now func() time.Time) (*signer, error) {
	if len(key) == 0 {
		return nil, fmt.Errorf("the research cluster needs its cluster key, the same on every machine of the cluster: set %s in the environment or secrets.env (`wicket init` writes one into settings/secrets.env; copy its value to each worker machine, or make one with `openssl rand -hex 32`)", project.KeyCluster)
	}
	if len(key) < MinKeyLen {
		return nil, fmt.Errorf("the cluster key %s is %d characters, fewer than %d: give it at least %d random ones (`openssl rand -hex 32`), the same on every machine of the cluster", project.KeyCluster, len(key), MinKeyLen, MinKeyLen)
	}
	k := append([]byte(nil), key...)
	if now == nil {
		now = time.Now
	}
	s := &signer{now: now}
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
// It numbers m, names the signer's sweep when m names none, and stamps
// its expiry when m has none (a tail copy keeps its chunk's).
func (s *signer) sign(m *nats.Msg) {
	if m.Header == nil {
		m.Header = nats.Header{}
	}
	if m.Header.Get(headerSweep) == "" && s.sweep != "" {
		m.Header.Set(headerSweep, s.sweep)
	}
	if m.Header.Get(headerExpires) == "" {
		m.Header.Set(headerExpires, strconv.FormatInt(s.now().Add(lifeOf(m.Subject)).UnixMilli(), 10))
	}
	m.Header.Set(headerSeq, strconv.FormatUint(s.seq.Add(1), 10))
	sum := s.frame(m.Subject, m.Header, m.Data)
	m.Header.Set(headerSignature, hex.EncodeToString(sum[:]))
}

// verify reports whether the signature in h is the one of the frame, and
// the message has not expired.
func (s *signer) verify(subject string, h nats.Header, body []byte) bool {
	return !s.expired(h) && s.signedFrame(subject, h, body)
}

// expiresAt is a message's expiry (Unix milliseconds); 0 when it has none.
func expiresAt(h nats.Header) int64 {
	exp, err := strconv.ParseInt(h.Get(headerExpires), 10, 64)
	if err != nil {
		return 0
	}
	return exp
}

// expired reports whether the message whose headers are h has expired,
// or carries no expiry.
func (s *signer) expired(h nats.Header) bool { return s.now().UnixMilli() > expiresAt(h) }

// signedFrame reports whether the signature in h is the one of the frame,
// expired or not.
func (s *signer) signedFrame(subject string, h nats.Header, body []byte) bool {
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
