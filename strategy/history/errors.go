package history

import (
	"errors"
	"fmt"
	"strings"
)

// Kind classifies an Error so callers can translate it at their edge (an
// exit code, an HTTP status, a tool error) without reading its text.
type Kind uint8

// Error kinds.
const (
	// KindInvalid: the caller's input is wrong (a bad series name, a bad time
	// range, a CSV file with bad rows). Nothing was changed.
	KindInvalid Kind = iota + 1
	// KindNotFound: the store file or the series does not exist.
	KindNotFound
	// KindExists: the series already holds bars and the write did not ask to
	// replace them.
	KindExists
	// KindStorage: SQLite failed (disk, permissions, a locked or corrupt file).
	KindStorage
)

func (k Kind) String() string {
	switch k {
	case KindInvalid:
		return "invalid"
	case KindNotFound:
		return "not found"
	case KindExists:
		return "exists"
	case KindStorage:
		return "storage"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// RowError is one rejected CSV row. Row counts the header as row 1, so it is
// the line number an editor or a spreadsheet shows for that row.
type RowError struct {
	Row int
	Msg string
}

func (r RowError) String() string { return fmt.Sprintf("row %d: %s", r.Row, r.Msg) }

// maxRowsInMessage bounds how many rejected rows Error.Error lists; Rows
// holds them all (up to maxRowErrors).
const maxRowsInMessage = 5

// Error is the history store's error type. Msg says what went wrong and
// what to do next; Rows lists rejected CSV rows; Err is the cause, if any.
type Error struct {
	Kind   Kind
	Series string
	Msg    string
	Rows   []RowError
	Err    error
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Series != "" {
		fmt.Fprintf(&b, "series %s: ", e.Series)
	}
	b.WriteString(e.Msg)
	for i, r := range e.Rows {
		if i == maxRowsInMessage {
			fmt.Fprintf(&b, "; and %d more problems", len(e.Rows)-i)
			break
		}
		b.WriteString("; ")
		b.WriteString(r.String())
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

func errorf(kind Kind, series string, err error, format string, a ...any) *Error {
	return &Error{Kind: kind, Series: series, Msg: fmt.Sprintf(format, a...), Err: err}
}

// IsNotFound reports whether err, or one it wraps, is the store's NotFound:
// no store, no series, or no bars where they were asked for.
func IsNotFound(err error) bool {
	var he *Error
	return errors.As(err, &he) && he.Kind == KindNotFound
}
