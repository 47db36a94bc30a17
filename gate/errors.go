package gate

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// The sentinels, one per Kind. Every [*Error] matches its kind's sentinel with
// errors.Is; the sentinels' own text is only a label.
var (
	ErrUnknownToken    = errors.New("unknown preview token")
	ErrExpiredToken    = errors.New("expired preview token")
	ErrUsedToken       = errors.New("used preview token")
	ErrMismatch        = errors.New("preview token does not match")
	ErrTooManyPreviews = errors.New("too many previews")
)

// Kind says which rule of the gate refused.
type Kind uint8

// The kinds of [Error].
const (
	// KindUnknown: this server never issued the token (or a malformed string),
	// or issued it longer ago than it remembers.
	KindUnknown Kind = iota + 1
	// KindExpired: the token was not confirmed within PreviewWindow.
	KindExpired
	// KindUsed: the token was already spent by an earlier confirm.
	KindUsed
	// KindMismatch: the token was issued for another tool or another command.
	// The token is spent by the attempt.
	KindMismatch
	// KindTooMany: Issue refused because the cap of outstanding previews was
	// reached.
	KindTooMany
)

// String names the kind in one word, as a trace records it.
func (k Kind) String() string {
	switch k {
	case KindUnknown:
		return "unknown"
	case KindExpired:
		return "expired"
	case KindUsed:
		return "used"
	case KindMismatch:
		return "mismatch"
	case KindTooMany:
		return "too_many"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

func (k Kind) sentinel() error {
	switch k {
	case KindUnknown:
		return ErrUnknownToken
	case KindExpired:
		return ErrExpiredToken
	case KindUsed:
		return ErrUsedToken
	case KindMismatch:
		return ErrMismatch
	case KindTooMany:
		return ErrTooManyPreviews
	}
	return nil
}

// Error is every refusal of the gate. Its text says what happened, that
// nothing was sent, and what the agent should do next; read the fields with
// errors.As to act on it in code.
type Error struct {
	Kind Kind
	// Tool is the tool that was called: the confirming tool for Take, the
	// previewing tool for Issue. Empty from ParseToken, which knows no tool.
	Tool string
	// Token is the token presented; empty for KindTooMany.
	Token Token
	// IssuedFor is the tool the token was issued for, when the gate remembers
	// it (KindExpired, KindUsed, KindMismatch).
	IssuedFor string
	// At is when the token expired (KindExpired) or was spent (KindUsed).
	At time.Time
	// Confirmed reports, for KindUsed, that the confirm which spent the token
	// matched it, so its command was handed out to run. False when a
	// mismatched confirm burned the token.
	Confirmed bool
	// Max is the cap on outstanding previews (KindTooMany).
	Max int
	// Err is the cause, if any: the differences SameIntent reported for a
	// mismatched command, or what is malformed in a token ParseToken refused.
	Err error
}

// Unwrap returns the kind's sentinel and the cause, so errors.Is matches the
// sentinel and errors.As reaches the cause.
func (e *Error) Unwrap() []error {
	errs := make([]error, 0, 2)
	if s := e.Kind.sentinel(); s != nil {
		errs = append(errs, s)
	}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}

func (e *Error) Error() string {
	var b strings.Builder
	tok := shown(e.Token)
	switch e.Kind {
	case KindUnknown:
		if e.Err != nil {
			fmt.Fprintf(&b, "unknown preview token %s: %v. Nothing was sent. Copy the preview_token exactly as the preview returned it, or %s to get a new preview, then confirm with its token within %s.",
				tok, e.Err, e.callWithoutConfirm(false), seconds(PreviewWindow))
			break
		}
		fmt.Fprintf(&b, "unknown preview token %s: this server did not issue it, or issued it more than %s ago (tokens live only in this server process). Nothing was sent. %s to get a preview, then confirm with its preview_token within %s.",
			tok, minutes(RememberWindow), upper(e.callWithoutConfirm(false)), seconds(PreviewWindow))
	case KindExpired:
		fmt.Fprintf(&b, "expired preview token %s: it %sexpired at %s (a preview is valid for %s). Nothing was sent. %s to get a fresh preview, then confirm with that token within %s.",
			tok, e.issuedFor(), stamp(e.At), seconds(PreviewWindow), upper(e.callWithoutConfirm(true)), seconds(PreviewWindow))
	case KindUsed:
		if e.Confirmed {
			fmt.Fprintf(&b, "used preview token %s: it already confirmed a %s call at %s, and a token fires once. Nothing was sent this time. Check the outcome of that earlier call before sending anything again; to send a new command, %s to get a fresh preview.",
				tok, orUnknown(e.IssuedFor), stamp(e.At), e.callWithoutConfirm(false))
			break
		}
		fmt.Fprintf(&b, "used preview token %s: it %swas spent at %s by a confirm that did not match its preview, and that confirm sent nothing; a token is spent by any confirm. Nothing was sent this time. %s to get a fresh preview, then confirm with that token within %s.",
			tok, e.issuedFor(), stamp(e.At), upper(e.callWithoutConfirm(true)), seconds(PreviewWindow))
	case KindMismatch:
		if e.IssuedFor != "" && e.IssuedFor != e.Tool {
			fmt.Fprintf(&b, "preview token %s was issued for %s, not %s: a token confirms only the tool and the command it was previewed for. Nothing was sent, and the token is now spent. %s to get its own preview, then confirm with that token within %s.",
				tok, e.IssuedFor, orUnknown(e.Tool), upper(e.callWithoutConfirm(false)), seconds(PreviewWindow))
			break
		}
		fmt.Fprintf(&b, "preview token %s does not match this %s call: %v. Nothing was sent, and the token is now spent. %s, with the arguments you mean to send, to get a fresh preview, then confirm with that token and the same arguments within %s.",
			tok, orUnknown(e.Tool), e.Err, upper(e.callWithoutConfirm(true)), seconds(PreviewWindow))
	case KindTooMany:
		fmt.Fprintf(&b, "too many previews: this server holds at most %d unexpired previews waiting for a confirm and that many are outstanding, so no preview was issued and nothing was sent. Confirm the previews you mean to send, or wait for older ones to expire (%s after each was issued), then call %s again.",
			e.Max, seconds(PreviewWindow), orUnknown(e.Tool))
	default:
		fmt.Fprintf(&b, "preview gate refused token %s (%v)", tok, e.Kind)
		if e.Err != nil {
			fmt.Fprintf(&b, ": %v", e.Err)
		}
	}
	return b.String()
}

// issuedFor is "was issued for T and " when the token's tool is known.
func (e *Error) issuedFor() string {
	if e.IssuedFor == "" {
		return ""
	}
	return "was issued for " + e.IssuedFor + " and "
}

// callWithoutConfirm is the next step in words, naming the called tool.
func (e *Error) callWithoutConfirm(again bool) string {
	if e.Tool == "" {
		return "call the write tool again without confirm"
	}
	if again {
		return "call " + e.Tool + " again without confirm"
	}
	return "call " + e.Tool + " without confirm"
}

func orUnknown(tool string) string {
	if tool == "" {
		return "write tool"
	}
	return tool
}

func upper(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// shown quotes a token for an error text, cut short so that a huge string an
// agent sent is not echoed back whole.
func shown(t Token) string {
	const max = 48
	s := string(t)
	if len(s) > max {
		return fmt.Sprintf("%q...", s[:max])
	}
	return fmt.Sprintf("%q", s)
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }

func seconds(d time.Duration) string { return fmt.Sprintf("%d s", int64(d/time.Second)) }

func minutes(d time.Duration) string { return fmt.Sprintf("%d minutes", int64(d/time.Minute)) }
