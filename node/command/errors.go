package command

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"wicket/internal/project"
)

// Kind classifies an *Error.
type Kind string

// Error kinds.
const (
	KindMalformed    Kind = "malformed"     // not a JSON object, or not JSON
	KindUnknownVerb  Kind = "unknown_verb"  // no such verb
	KindUnknownField Kind = "unknown_field" // a field the verb does not take
	KindMissingField Kind = "missing_field" // a required field is absent
	KindInvalidValue Kind = "invalid_value" // wrong type, bad enum, bad decimal, bad name
	KindConflict     Kind = "conflict"      // fields that exclude or need each other
	KindMismatch     Kind = "mismatch"      // SameIntent: the commands differ
)

// Error is the one error type of this package. Field names the offending
// field when there is one; Diffs lists every difference for Mismatch.
type Error struct {
	Kind  Kind
	Verb  Verb
	Field string
	Msg   string
	Diffs []Diff
}

func (e *Error) Error() string {
	if e.Kind == KindMismatch {
		parts := make([]string, len(e.Diffs))
		for i, d := range e.Diffs {
			parts[i] = fmt.Sprintf("%s previewed %s, now %s", d.Field, show(d.Previewed), show(d.Confirming))
		}
		return "command differs from the previewed one: " + strings.Join(parts, "; ") +
			"; confirm the previewed command unchanged, or call without confirm for a new preview"
	}
	var b strings.Builder
	if e.Verb != "" {
		b.WriteString(string(e.Verb))
		b.WriteString(": ")
	}
	if e.Field != "" && e.Kind != KindUnknownField {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

func show(s string) string {
	if s == "" {
		return "(absent)"
	}
	return fmt.Sprintf("%q", s)
}

// quote shows untrusted input in an error, shortened.
func quote(s string) string {
	if len(s) > 64 {
		cut := 64
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	return fmt.Sprintf("%q", s)
}

func unknownVerb(verb string) error {
	return &Error{Kind: KindUnknownVerb, Field: "verb",
		Msg: fmt.Sprintf("unknown verb %s; valid: %s", quote(verb), verbList())}
}

func missing(verb Verb, f Field) error {
	msg := "is required: " + f.Description
	return &Error{Kind: KindMissingField, Verb: verb, Field: f.Name, Msg: msg}
}

func invalid(verb Verb, field, msg string) error {
	return &Error{Kind: KindInvalidValue, Verb: verb, Field: field, Msg: msg}
}

func checkName(verb Verb, f Field, v string) error {
	if project.ValidName(f.Name, v) != nil {
		return invalid(verb, f.Name, fmt.Sprintf("%s is not valid: use %s", quote(v), project.NameRule))
	}
	return nil
}

func checkEnum(verb Verb, f Field, v string) error {
	for _, c := range f.Choices {
		if v == c {
			return nil
		}
	}
	return invalid(verb, f.Name, fmt.Sprintf("%s is not one of %s", quote(v), strings.Join(f.Choices, ", ")))
}
