package script

import (
	"errors"
	"io/fs"
	"sort"
	"strings"

	"go.starlark.net/syntax"

	"wicket/internal/project"
)

// UserIndicator describes one indicators/<name>.star file. It is read by
// parsing only, never by running it.
type UserIndicator struct {
	Name        string     `json:"name"`
	UserDefined bool       `json:"user_defined"` // always true: tells user indicators from the built-in catalog
	Summary     string     `json:"summary,omitempty"`
	Load        string     `json:"load"` // the load statement that imports it
	Functions   []UserFunc `json:"functions"`
	Problem     string     `json:"problem,omitempty"` // a syntax error, if the file does not parse
}

// UserFunc is a function an indicator exports (top-level def without a
// leading underscore).
type UserFunc struct {
	Name    string   `json:"name"`
	Params  []string `json:"params"`
	Summary string   `json:"summary,omitempty"`
}

// ListIndicators lists the user indicators in fsys (the project's
// indicators directory), sorted by name. Files whose names are not valid
// bare names are skipped. A missing directory lists nothing.
func ListIndicators(fsys fs.FS) ([]UserIndicator, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []UserIndicator
	for _, de := range entries {
		name, ok := strings.CutSuffix(de.Name(), ".star")
		if !ok || de.IsDir() || project.ValidName("indicator", name) != nil {
			continue
		}
		text, err := fs.ReadFile(fsys, de.Name())
		if err != nil {
			return nil, err
		}
		out = append(out, describeIndicator(name, text))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func describeIndicator(name string, text []byte) UserIndicator {
	ind := UserIndicator{Name: name, UserDefined: true, Load: `load("indicators/` + name + `", ...)`, Functions: []UserFunc{}}
	f, err := fileOptions.Parse("indicators/"+name+".star", text, 0)
	if err != nil {
		ind.Problem = err.Error()
		return ind
	}
	ind.Summary = firstLine(docstring(f))
	var names []string
	for _, st := range f.Stmts {
		def, ok := st.(*syntax.DefStmt)
		if !ok || strings.HasPrefix(def.Name.Name, "_") {
			continue
		}
		fn := UserFunc{Name: def.Name.Name, Params: []string{}}
		for _, p := range def.Params {
			switch p := p.(type) {
			case *syntax.Ident:
				fn.Params = append(fn.Params, p.Name)
			case *syntax.BinaryExpr: // name=default
				if id, ok := p.X.(*syntax.Ident); ok {
					fn.Params = append(fn.Params, id.Name+"=")
				}
			case *syntax.UnaryExpr:
				if id, ok := p.X.(*syntax.Ident); ok {
					fn.Params = append(fn.Params, p.Op.String()+id.Name)
				}
			}
		}
		if len(def.Body) > 0 {
			if es, ok := def.Body[0].(*syntax.ExprStmt); ok {
				if lit, ok := es.X.(*syntax.Literal); ok && lit.Token == syntax.STRING {
					fn.Summary = firstLine(lit.Value.(string))
				}
			}
		}
		ind.Functions = append(ind.Functions, fn)
		names = append(names, `"`+fn.Name+`"`)
	}
	if len(names) > 0 {
		ind.Load = `load("indicators/` + name + `", ` + strings.Join(names, ", ") + `)`
	}
	return ind
}
