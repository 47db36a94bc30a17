package templates

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"wicket/internal/project"
)

// Resolved is the strategy a name stands for.
type Resolved struct {
	Name   string // the bare name asked for
	Label  string // the file name positions are reported under: <name>.star
	Source string
	// Template is true when the project has no strategies/<name>.star and
	// the built-in template of that name stands in.
	Template bool
}

// Resolve is how every command and tool turns a strategy name into source
// text: strategies/<name>.star in the project (p nil: no project), read by
// project.ReadStrategy; else, when that file does not exist, the built-in
// template of that name. A file that exists but cannot be used (a FIFO, a
// symlink out of the project, too large) is an error, never a fallback. When
// neither exists the error wraps fs.ErrNotExist and says how to create one.
func Resolve(p *project.Project, name string) (Resolved, error) {
	if err := project.ValidName("strategy", name); err != nil {
		return Resolved{}, err
	}
	r := Resolved{Name: name, Label: name + ".star"}
	if p != nil && p.Root != "" {
		text, _, err := p.ReadStrategy(name)
		if err == nil {
			r.Source = text
			return r, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return Resolved{}, fmt.Errorf("strategy %q: %w", name, err)
		}
	}
	if src, err := Source(name); err == nil {
		r.Source, r.Template = src, true
		return r, nil
	}
	where := "there is no project"
	if p != nil && p.Root != "" {
		where = "strategies/" + name + ".star does not exist"
	}
	return Resolved{}, fmt.Errorf("no strategy %q: %s and no template has that name; create it with `wicket strategy new %s --from TEMPLATE` (templates: %s): %w",
		name, where, name, strings.Join(Names(), ", "), fs.ErrNotExist)
}
