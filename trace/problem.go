package trace

import (
	"errors"
	"fmt"
)

// Kind says what went wrong in a Problem.
type Kind uint8

// The kinds of Problem.
const (
	// KindInvalid: the caller passed something the package cannot use (an
	// unknown verdict name, an empty directory name, an entry that does not
	// encode).
	KindInvalid Kind = iota + 1
	// KindNotFound: the trace directory does not exist.
	KindNotFound
	// KindIO: the file system refused (permissions, disk full, ...).
	KindIO
	// KindTorn: a write was cut short. Either the last line of a file has
	// no newline and does not decode (the write may still be in progress),
	// or a line begins with such a fragment and an entry written later
	// follows it (the entry is read). Readers skip the fragment.
	KindTorn
	// KindMalformed: a complete line is not a trace entry. Readers skip it.
	KindMalformed
)

func (k Kind) String() string {
	switch k {
	case KindInvalid:
		return "invalid"
	case KindNotFound:
		return "not found"
	case KindIO:
		return "i/o"
	case KindTorn:
		return "torn line"
	case KindMalformed:
		return "malformed line"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Problem is the package's error type: what went wrong (Kind), where (Path
// and, for a line, Line) and why (Err). Read it with errors.As.
type Problem struct {
	Kind Kind
	Path string // the file or directory, when there is one
	Line int    // 1-based line number, for KindTorn and KindMalformed
	Err  error  // the cause
}

func (p *Problem) Error() string {
	where := p.Path
	if where != "" && p.Line > 0 {
		where = fmt.Sprintf("%s line %d", p.Path, p.Line)
	}
	switch p.Kind {
	case KindNotFound:
		return "trace: " + where + ": no trace here; the agent server writes one when started with `wicket mcp --trace` (or --trace-dir DIR)"
	case KindTorn:
		var f *fragment
		if errors.As(p.Err, &f) {
			return "trace: " + where + ": " + f.Error() + "; the fragment is skipped"
		}
		return "trace: " + where + ": torn last line (no newline: a write was cut short or is still in progress), skipped"
	case KindMalformed:
		return fmt.Sprintf("trace: %s: not a trace entry (%v), skipped", where, p.Err)
	}
	// KindInvalid and KindIO: the cause carries the detail (an *os.PathError
	// names its path).
	if p.Err == nil {
		return "trace: " + p.Kind.String()
	}
	return "trace: " + p.Err.Error()
}

func (p *Problem) Unwrap() error { return p.Err }
