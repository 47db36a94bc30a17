// Package wire is the JSON-RPC layer wicket puts in front of mcp-go on
// both of its transports (stdio in package agent, Streamable HTTP in
// agent/front). It fixes what the library gets wrong on the wire:
//   - request ids come back exactly as sent: every request id is swapped
//     for a session-unique string before mcp-go sees it (mcp-go decodes
//     numbers through float64, so 2^53+1 would come back changed) and
//     swapped back in the response;
//   - a request the client cancelled gets no response;
//   - batches are answered element by element where the negotiated
//     protocol version has them (2025-03-26 and before) and refused with
//     -32600 where it does not;
//   - valid JSON that is not a message, and a message over the size
//     bound, are answered -32600 with the message's own id where it shows.
//
// wire reads and rewrites bytes only: it must never decide what a
// message may do (access, the preview gate), never keep a message's body
// beyond the call that passes it, and never import a domain package.
package wire

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
)

// IDs is one session's id table.
type IDs struct {
	prefix string // "wk-<random>:" — no client id collides with it

	mu        sync.Mutex
	next      int64
	orig      map[string]json.RawMessage // surrogate → the id as the client sent it
	byOrig    map[string]string          // compacted original → surrogate (cancellation)
	cancelled map[string]bool            // surrogates whose response is dropped
	batch     map[string]*Batch          // surrogates whose response joins a batch
	codes     map[string]int             // surrogates whose error response gets this code (recode)
	idle      chan struct{}              // closed and replaced when orig empties
}

// NewIDs is an empty id table with a fresh surrogate prefix.
func NewIDs() *IDs {
	var r [4]byte
	_, _ = rand.Read(r[:])
	return &IDs{
		prefix: "wk-" + hex.EncodeToString(r[:]) + ":",
		orig:   map[string]json.RawMessage{}, byOrig: map[string]string{},
		cancelled: map[string]bool{}, batch: map[string]*Batch{}, codes: map[string]int{},
	}
}

// Message is the part of an incoming JSON-RPC message the wire reads.
type Message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// IsRequest reports a message with a method and a non-null id.
func (m *Message) IsRequest() bool {
	return m.Method != "" && len(m.ID) > 0 && string(bytes.TrimSpace(m.ID)) != "null"
}

// Compact is raw without insignificant space (raw itself if it is not JSON).
func Compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// Inbound rewrites one incoming message for mcp-go: a request's id becomes
// a surrogate (returned), a cancellation names the surrogate of the
// request it cancels and marks it. Anything else passes unchanged.
func (w *IDs) Inbound(body []byte, m *Message, into *Batch) ([]byte, string) {
	if m.IsRequest() {
		w.mu.Lock()
		w.next++
		sur := w.prefix + strconv.FormatInt(w.next, 10)
		w.orig[sur] = append(json.RawMessage(nil), m.ID...)
		w.byOrig[Compact(m.ID)] = sur
		if into != nil {
			w.batch[sur] = into
		}
		w.mu.Unlock()
		return replaceField(body, "id", strconv.Quote(sur)), sur
	}
	if m.Method == string(mcp.MethodNotificationCancelled) {
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(m.Params, &p) == nil && len(p.RequestID) > 0 {
			w.mu.Lock()
			sur, ok := w.byOrig[Compact(p.RequestID)]
			if ok {
				w.cancelled[sur] = true
			}
			w.mu.Unlock()
			if ok {
				return ReplaceParam(body, m.Params, "requestId", strconv.Quote(sur)), ""
			}
		}
	}
	return body, ""
}

// Outbound restores the original id of a response mcp-go wrote. drop is
// true when the response must not be written: its request was cancelled,
// or it belongs to a batch (which is written whole, by done).
func (w *IDs) Outbound(p []byte) (out []byte, drop bool, done *Batch) {
	sur, ok := surrogateOf(p, w.prefix)
	if !ok {
		return p, false, nil
	}
	w.mu.Lock()
	orig, known := w.orig[sur]
	cancelled := w.cancelled[sur]
	b := w.batch[sur]
	code, recoded := w.codes[sur]
	w.forget(sur)
	w.mu.Unlock()
	if !known {
		return p, false, nil
	}
	out = bytes.Replace(p, []byte(`"id":`+strconv.Quote(sur)), append([]byte(`"id":`), orig...), 1)
	if recoded {
		out = bytes.Replace(out, []byte(`"code":`+strconv.Itoa(mcp.INTERNAL_ERROR)+`,`), []byte(`"code":`+strconv.Itoa(code)+`,`), 1)
	}
	if cancelled {
		if b != nil && b.Add(nil) {
			return nil, true, b
		}
		return nil, true, nil
	}
	if b != nil {
		if b.Add(bytes.TrimSpace(out)) {
			return nil, true, b
		}
		return nil, true, nil
	}
	return out, false, nil
}

// forget drops a surrogate; w.mu is held.
func (w *IDs) forget(sur string) {
	if orig, ok := w.orig[sur]; ok {
		if w.byOrig[Compact(orig)] == sur {
			delete(w.byOrig, Compact(orig))
		}
	}
	delete(w.orig, sur)
	delete(w.cancelled, sur)
	delete(w.batch, sur)
	delete(w.codes, sur)
	if len(w.orig) == 0 && w.idle != nil {
		close(w.idle)
		w.idle = nil
	}
}

// RestoreSubscriptionID puts the client's own id back where a
// subscriptions/listen stream (protocol 2026-07-28) names its request in
// _meta: mcp-go tags the acknowledgement, the stream's notifications and
// its final result with the id it saw, a surrogate. Call it before
// Outbound, which forgets the surrogate with the final result.
func (w *IDs) RestoreSubscriptionID(p []byte) []byte {
	key := []byte(`"` + mcp.MetaKeySubscriptionID + `":"` + w.prefix)
	from := 0
	for range 4 { // a message names its subscription once or twice
		i := bytes.Index(p[from:], key)
		if i < 0 {
			return p
		}
		start := from + i + len(key) - len(w.prefix) - 1 // the value's opening quote
		end := bytes.IndexByte(p[start+1:], '"')
		if end < 0 {
			return p
		}
		end += start + 2 // past the closing quote
		w.mu.Lock()
		orig, ok := w.orig[string(p[start+1:end-1])]
		w.mu.Unlock()
		if !ok {
			return p
		}
		p = append(append(append([]byte(nil), p[:start]...), orig...), p[end:]...)
		from = start + len(orig)
	}
	return p
}

// Recode gives the error response of the request whose surrogate this is
// code instead of mcp-go's -32603.
func (w *IDs) Recode(sur string, code int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.orig[sur]; ok {
		w.codes[sur] = code
	}
}

// IsCancelled reports whether the client cancelled the request whose
// surrogate this is.
func (w *IDs) IsCancelled(sur string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.cancelled[sur]
}

// Outstanding is how many requests await their response.
func (w *IDs) Outstanding() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.orig)
}

// Idle is closed once no request is outstanding.
func (w *IDs) Idle() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.orig) == 0 {
		c := make(chan struct{})
		close(c)
		return c
	}
	if w.idle == nil {
		w.idle = make(chan struct{})
	}
	return w.idle
}

// surrogateOf finds the surrogate id of a response mcp-go wrote; its
// layout is {"jsonrpc":"2.0","id":"<surrogate>",...}, and an SSE event
// carries the same JSON after "data: ".
func surrogateOf(p []byte, prefix string) (string, bool) {
	key := []byte(`"id":"` + prefix)
	i := bytes.Index(p, key)
	if i < 0 {
		return "", false
	}
	rest := p[i+len(`"id":"`):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return "", false
	}
	return string(rest[:j]), true
}

// replaceField sets a top-level member of a JSON object, keeping the rest
// of the bytes as they are.
func replaceField(body []byte, field, value string) []byte {
	var obj map[string]json.RawMessage
	if json.Unmarshal(body, &obj) != nil {
		return body
	}
	obj[field] = json.RawMessage(value)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // keep the client's text as it was (a strategy's "<" stays "<")
	if enc.Encode(obj) != nil {
		return body
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// ReplaceParam sets a member of a message's params (params are the
// message's own), keeping the rest of the bytes as they are.
func ReplaceParam(body []byte, params json.RawMessage, field, value string) []byte {
	return replaceField(body, "params", string(replaceField(params, field, value)))
}

// Batch collects the responses of one batch.
type Batch struct {
	mu      sync.Mutex
	want    int
	replies [][]byte
}

// Reply records a reply the batch need not wait for (an element refused
// before it reached mcp-go).
func (b *Batch) Reply(reply []byte) {
	b.mu.Lock()
	b.replies = append(b.replies, reply)
	b.mu.Unlock()
}

// Expect counts one more request whose response the batch waits for.
func (b *Batch) Expect() {
	b.mu.Lock()
	b.want++
	b.mu.Unlock()
}

// Waiting is how many responses the batch still waits for.
func (b *Batch) Waiting() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.want
}

// Add records one reply (nil: a dropped one) and reports whether the batch
// is complete.
func (b *Batch) Add(reply []byte) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if reply != nil {
		b.replies = append(b.replies, reply)
	}
	b.want--
	return b.want == 0
}

// Encode renders the batch's replies as one JSON array; nil when there is
// none (a batch of notifications gets no response).
func (b *Batch) Encode() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.replies) == 0 {
		return nil
	}
	return append(append([]byte{'['}, bytes.Join(b.replies, []byte{','})...), ']')
}

// BatchesAllowed reports whether a negotiated protocol version has
// JSON-RPC batches: 2025-03-26 added them, 2025-06-18 removed them.
func BatchesAllowed(version string) bool {
	return version != "" && version <= mcp.ProtocolVersion20250326
}

// BatchRefusal is the -32600 answer to a batch the version does not allow.
func BatchRefusal(version string) []byte {
	why := "this session has not negotiated a protocol version yet (initialize cannot be batched)"
	if version != "" {
		why = fmt.Sprintf("protocol version %s has no JSON-RPC batches (2025-03-26 had them; 2025-06-18 removed them)", version)
	}
	return Error(json.RawMessage("null"), mcp.INVALID_REQUEST, "batch refused: "+why+"; send one message at a time")
}

// ShapeRefusal answers valid JSON that is not a JSON-RPC message with
// -32600 (never -32700, which is for text that is not JSON): a bare value
// instead of an object, or an id that is not a string, a number or null.
// ok is false for anything else (an object with a fine id, an array, or
// text that is not JSON), which goes on as before.
func ShapeRefusal(body []byte) ([]byte, bool) {
	t := bytes.TrimSpace(body)
	if len(t) == 0 || t[0] == '[' || !json.Valid(t) {
		return nil, false
	}
	if t[0] != '{' {
		return Error(json.RawMessage("null"), mcp.INVALID_REQUEST,
			"invalid request: a JSON-RPC message is an object with jsonrpc, method and (for a request) id"), true
	}
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(t, &m) != nil || len(m.ID) == 0 {
		return nil, false
	}
	switch bytes.TrimSpace(m.ID)[0] {
	case '"', 'n', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return nil, false
	}
	return Error(json.RawMessage("null"), mcp.INVALID_REQUEST,
		"invalid request: id must be a string, a number or null"), true
}

// LineTooLong is the -32600 answer to a message over the size limit. It
// carries the message's own id when what was read of it (head) shows one;
// else null.
func LineTooLong(limit int, head []byte) []byte {
	var sc IDScan
	sc.Feed(head)
	return TooLongFor(limit, sc.ID())
}

// TooLongFor is LineTooLong's answer for a known id.
func TooLongFor(limit int, id json.RawMessage) []byte {
	return Error(id, mcp.INVALID_REQUEST,
		fmt.Sprintf("message too large: over the %s limit of this server (wicket mcp --max-message); it was skipped unread", SizeText(limit)))
}

// IDScan finds the top-level "id" of a JSON object fed to it in pieces,
// without keeping the object: only the id's own bytes are kept (at most
// maxScannedID). It reads JSON's structure (strings, nesting), not its
// values; an id that is not a string, a number or null is not an id.
type IDScan struct {
	started, done  bool
	depth          int
	inStr, esc     bool
	expectKey      bool
	key            []byte // the depth-1 key being read (bounded)
	keyIsID        bool   // the last key read was "id"
	capture        bool
	val            []byte
	found, invalid bool
}

const maxScannedID = 256

// Feed reads the next piece of the object.
func (s *IDScan) Feed(p []byte) {
	for _, c := range p {
		if s.done {
			return
		}
		s.step(c)
	}
}

func (s *IDScan) step(c byte) {
	if !s.started {
		switch c {
		case ' ', '\t', '\r', '\n':
		case '{':
			s.started, s.depth, s.expectKey = true, 1, true
		default:
			s.done = true
		}
		return
	}
	if s.capture {
		if len(s.val) < maxScannedID {
			s.val = append(s.val, c)
		} else {
			s.invalid = true
		}
	}
	if s.inStr {
		switch {
		case s.esc:
			s.esc = false
		case c == '\\':
			s.esc = true
		case c == '"':
			s.inStr = false
			if s.depth == 1 && s.expectKey {
				s.expectKey, s.keyIsID = false, string(s.key) == "id"
			}
		default:
			if s.depth == 1 && s.expectKey && len(s.key) < 3 {
				s.key = append(s.key, c)
			}
		}
		return
	}
	switch c {
	case '"':
		s.inStr = true
		if s.depth == 1 && s.expectKey {
			s.key = s.key[:0]
		}
	case ':':
		if s.depth == 1 && s.keyIsID {
			s.capture, s.val, s.keyIsID = true, s.val[:0], false
		}
	case '{', '[':
		s.depth++
	case '}', ']', ',':
		if s.depth == 1 && s.capture {
			s.capture = false
			s.val = s.val[:len(s.val)-1] // the delimiter
			s.found = true
		}
		if c == ',' {
			s.expectKey = s.depth == 1
			return
		}
		if s.depth--; s.depth == 0 {
			s.done = true
		}
	}
}

// ID is the id found, or null.
func (s *IDScan) ID() json.RawMessage {
	v := bytes.TrimSpace(s.val)
	if !s.found || s.invalid || len(v) == 0 || !json.Valid(v) {
		return json.RawMessage("null")
	}
	switch v[0] {
	case '"', 'n', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return append(json.RawMessage(nil), v...)
	}
	return json.RawMessage("null")
}

// Error is a JSON-RPC error response.
func Error(id json.RawMessage, code int, message string) []byte {
	b, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      id,
		"error":   map[string]any{"code": code, "message": message},
	})
	return b
}

// SizeText says a byte count in the largest whole unit.
func SizeText(n int) string {
	switch {
	case n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
