package command

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxReasonRunes caps a sanitized reason.
const MaxReasonRunes = 512

// Envelope is what travels to the node: a command and, beside it, the
// reason it was issued. The reason lands in the node's audit trail and
// nowhere else; it is never part of the order.
type Envelope struct {
	Command Command
	Reason  string
}

// NewEnvelope wraps c with its reason, sanitized.
func NewEnvelope(c Command, reason string) Envelope {
	return Envelope{Command: c, Reason: SanitizeReason(reason)}
}

// SanitizeReason makes free text safe for the audit trail: tabs and line
// breaks become spaces, other control characters, bidirectional-override
// characters and invalid UTF-8 are dropped, surrounding space is trimmed,
// and the result is cut to MaxReasonRunes characters.
func SanitizeReason(s string) string {
	var b strings.Builder
	n := 0
	for i := 0; i < len(s) && n < MaxReasonRunes; {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == utf8.RuneError && size <= 1:
			continue
		case r == '\t' || r == '\n' || r == '\r':
			r = ' '
		case unicode.IsControl(r), isBidiControl(r):
			continue
		}
		b.WriteRune(r)
		n++
	}
	return strings.TrimSpace(b.String())
}

// isBidiControl reports the embedding, override and isolate characters
// that can make a line display differently from what it holds.
func isBidiControl(r rune) bool {
	return (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069) || r == 0x200E || r == 0x200F || r == 0x061C
}

// MarshalJSON writes {"command": {...}, "reason": "..."}; an empty reason is
// left out.
func (e Envelope) MarshalJSON() ([]byte, error) {
	cmd, err := e.Command.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString(`{"command":`)
	b.Write(cmd)
	if e.Reason != "" {
		b.WriteString(`,"reason":`)
		writeString(&b, e.Reason)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads an envelope strictly (only "command" and "reason")
// and sanitizes the reason.
func (e *Envelope) UnmarshalJSON(data []byte) error {
	args, err := parseObject("", data)
	if err != nil {
		return err
	}
	var out Envelope
	var haveCmd bool
	for _, a := range args {
		switch a.name {
		case "command":
			if err := out.Command.UnmarshalJSON(a.raw); err != nil {
				return err
			}
			haveCmd = true
		case "reason":
			if a.null {
				continue
			}
			if !a.str {
				return &Error{Kind: KindInvalidValue, Field: "reason", Msg: "must be a string"}
			}
			out.Reason = SanitizeReason(a.text)
		default:
			return &Error{Kind: KindUnknownField, Field: a.name,
				Msg: "unknown envelope field " + quote(a.name) + "; valid fields: command, reason"}
		}
	}
	if !haveCmd {
		return &Error{Kind: KindMissingField, Field: "command", Msg: "is required: the command object, with its verb"}
	}
	*e = out
	return nil
}

var _ json.Marshaler = Envelope{}
