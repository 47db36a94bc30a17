package project

import (
	"fmt"
	"regexp"
	"strings"
)

// namePattern is the only shape a user- or agent-supplied name may take.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$`)

// NameRule describes namePattern in words, for error messages.
const NameRule = "1-64 characters of letters, digits, '.', '_', '@' and '-', starting with a letter or digit, with no path separator and no '..'"

// ValidName reports whether name is a bare name that may be used as a
// strategy, template, indicator, series or venue name. kind ("strategy",
// "series", ...) only labels the error. A valid name never contains a path
// separator or "..", so joining it under a directory cannot escape it.
func ValidName(kind, name string) error {
	if name == "" {
		return &NameError{Kind: kind, Name: name, Why: "it is empty"}
	}
	if strings.Contains(name, "..") {
		return &NameError{Kind: kind, Name: name, Why: `it contains ".."`}
	}
	if !namePattern.MatchString(name) {
		return &NameError{Kind: kind, Name: name}
	}
	return nil
}

// NameError is the error ValidName returns.
type NameError struct {
	Kind string
	Name string
	Why  string // optional detail
}

func (e *NameError) Error() string {
	shown := e.Name
	if len(shown) > 80 {
		shown = shown[:80] + "..."
	}
	why := ""
	if e.Why != "" {
		why = " (" + e.Why + ")"
	}
	return fmt.Sprintf("invalid %s name %q%s: a name is %s", e.Kind, shown, why, NameRule)
}
