package node

import "fmt"

// Kind classifies an *Error.
type Kind string

// Error kinds. The node sends the kind and a code in every error body; the
// client adds the kinds that arise on its side (timeout, unreachable).
const (
	KindAuth        Kind = "auth"        // the request's signature was refused
	KindForbidden   Kind = "forbidden"   // the key may not do this (the observe key writing)
	KindBadRequest  Kind = "bad_request" // malformed request or command; nothing changed
	KindNotFound    Kind = "not_found"   // no such ticket, venue or endpoint
	KindRejected    Kind = "rejected"    // the node's rules refused the command; nothing changed
	KindTimeout     Kind = "timeout"     // no answer within the deadline; the command may still apply
	KindUnreachable Kind = "unreachable" // no connection to the node
	KindUnavailable Kind = "unavailable" // the node is busy, stopping or its journal failed
	KindInternal    Kind = "internal"    // a bug or an unexpected answer
)

// Error is the one error type of the node protocol, on both sides. Read it
// with errors.As.
type Error struct {
	Kind    Kind   `json:"kind"`
	Code    string `json:"code,omitempty"` // finer than Kind: bad_signature, stale_timestamp, ...
	Message string `json:"message"`
	Err     error  `json:"-"` // the cause, on the client side
}

func (e *Error) Error() string {
	msg := e.Message
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	if e.Code != "" {
		return fmt.Sprintf("node %s (%s): %s", e.Kind, e.Code, msg)
	}
	return fmt.Sprintf("node %s: %s", e.Kind, msg)
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf makes an *Error.
func Errorf(kind Kind, code, format string, a ...any) *Error {
	return &Error{Kind: kind, Code: code, Message: fmt.Sprintf(format, a...)}
}
