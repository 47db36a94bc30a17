package worker

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"wicket/strategy/backtest"
	"wicket/strategy/history"
	"wicket/strategy/scriptapi"
)

// The wire format: each message is a frame, a 4-byte big-endian length
// followed by that many bytes: a 4-byte big-endian header length, the
// header (a Request or a Response without its body, as JSON) and the
// body (the JSON the sender encoded, as it is; a sweep chunk's answer to
// a request with Binary set is in sweepwire.go's form). The frame never scans
// its body: only the body's reader decodes it, once. The caller writes
// a request, the worker answers with exactly one response carrying the
// same id. On start a worker writes a hello response (id 0) once its
// limits are set.

// MaxFrame is the largest frame either side accepts. Bulk data (bars) is
// read by the worker from the history store, not sent over the pipe.
const MaxFrame = 256 << 20

// Request is one unit of work for a worker.
type Request struct {
	ID   uint64          `json:"id"`
	Kind string          `json:"kind"`
	Body json.RawMessage `json:"-"` // the frame's body
	// Procs, when set, is the worker's GOMAXPROCS from this request on:
	// the cores the pool's workers at work share when it is sent
	// (Pool.procs). 0 keeps what the worker has.
	Procs int `json:"procs,omitempty"`
	// Binary says the caller reads a sweep chunk's answer in its binary
	// form (sweepwire.go); without it the answer is JSON.
	Binary bool `json:"binary,omitempty"`
}

// Response answers the request with the same ID.
type Response struct {
	ID    uint64          `json:"id"`
	Body  json.RawMessage `json:"-"` // the frame's body
	Error *WireError      `json:"error,omitempty"`
	// CPUSeconds is the worker's CPU time so far (user + system); the pool
	// retires a worker before its lifetime CPU limit is near.
	CPUSeconds float64 `json:"cpu_seconds"`
}

// Hello is the body of the id-0 response a worker sends when it is ready.
type Hello struct {
	PID         int      `json:"pid"`
	MemoryBytes uint64   `json:"memory_bytes"` // the RLIMIT_AS it set
	CPUSeconds  uint64   `json:"cpu_seconds"`  // the RLIMIT_CPU soft limit it set
	Kinds       []string `json:"kinds"`
}

// WireError is an error as it crosses the pipe. A strategy error keeps its
// kind, position and hint; a history store or backtest error keeps its
// kind, so the caller reads it with errors.As as if it had run in process.
type WireError struct {
	Kind     Kind             `json:"kind"`
	Message  string           `json:"message"`
	Strategy *scriptapi.Error `json:"strategy,omitempty"`
	History  history.Kind     `json:"history,omitempty"`
	Backtest backtest.Kind    `json:"backtest,omitempty"`
}

func toWire(err error) *WireError {
	var se *scriptapi.Error
	if errors.As(err, &se) {
		return &WireError{Kind: KindStrategy, Message: se.Error(), Strategy: se}
	}
	var we *Error
	if errors.As(err, &we) {
		return &WireError{Kind: we.Kind, Message: we.Msg}
	}
	w := &WireError{Kind: KindHandler, Message: err.Error()}
	var he *history.Error
	var be *backtest.Error
	switch {
	case errors.As(err, &he):
		w.History = he.Kind
	case errors.As(err, &be):
		w.Backtest = be.Kind
	}
	return w
}

func (w *WireError) err() error {
	switch {
	case w.Strategy != nil:
		return w.Strategy
	case w.History != 0:
		return &history.Error{Kind: w.History, Msg: w.Message}
	case w.Backtest != 0:
		return &backtest.Error{Kind: w.Backtest, Msg: w.Message}
	}
	return &Error{Kind: w.Kind, Msg: w.Message}
}

// writeFrame writes one frame: head as JSON, then body.
func writeFrame(w io.Writer, head any, body []byte) error {
	h, err := json.Marshal(head)
	if err != nil {
		return err
	}
	n := 4 + len(h) + len(body)
	if n > MaxFrame {
		return &Error{Kind: KindRequest, Msg: fmt.Sprintf("message of %d bytes exceeds the %d-byte frame limit", n, MaxFrame)}
	}
	buf := make([]byte, 0, 4+n)
	buf = binary.BigEndian.AppendUint32(buf, uint32(n))
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(h)))
	buf = append(append(buf, h...), body...)
	_, err = w.Write(buf)
	return err
}

// readFrame reads one frame: its header into head, and its body, which
// it returns (nil when empty). io.EOF means the other side closed
// cleanly between frames.
func readFrame(r io.Reader, head any) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n > MaxFrame {
		return nil, fmt.Errorf("frame of %d bytes exceeds the %d-byte limit", n, MaxFrame)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	if n < 4 || binary.BigEndian.Uint32(b) > n-4 {
		return nil, fmt.Errorf("frame of %d bytes with a header that does not fit it", n)
	}
	h := binary.BigEndian.Uint32(b)
	if err := json.Unmarshal(b[4:4+h], head); err != nil {
		return nil, err
	}
	if body := b[4+h:]; len(body) > 0 {
		return body, nil
	}
	return nil, nil
}
