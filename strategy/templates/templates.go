// Package templates holds the built-in strategy templates: working,
// documented strategies embedded in the binary, to start from with
// `wicket strategy new NAME --from TEMPLATE` or the templates tool.
//
// Listing a template (name, summary, style, knobs; a portfolio's universe
// and rebalance schedule) reads a generated index
// (index.json) rather than running the template, so listing never executes
// Starlark; a test keeps the index equal to what the runtime discovers.
// This package never executes strategy code and never reads a file outside
// the embedded set: a template name is validated before it is looked up.
package templates

import (
	"embed"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"wicket/internal/project"
	"wicket/strategy/scriptapi"
)

//go:embed star/*.star
var files embed.FS

//go:embed index.json
var indexJSON []byte

// StylePortfolio is a portfolio template's style: one that declares a
// universe (its entry point, signals or on_bar, reads every asset).
const StylePortfolio scriptapi.Style = "portfolio"

// Template describes one built-in template. A portfolio template's Style
// is StylePortfolio, and it names its universe (series and patterns, as
// written) and its rebalance schedule.
type Template struct {
	Name      string           `json:"name"`
	Summary   string           `json:"summary"`
	Style     scriptapi.Style  `json:"style"`
	Params    []scriptapi.Knob `json:"params"`
	Universe  []string         `json:"universe,omitempty"`
	Rebalance string           `json:"rebalance,omitempty"`
}

var index = func() []Template {
	var ts []Template
	if err := json.Unmarshal(indexJSON, &ts); err != nil {
		panic("templates: index.json: " + err.Error())
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].Name < ts[j].Name })
	return ts
}()

// List returns every template, sorted by name.
func List() []Template {
	out := make([]Template, len(index))
	copy(out, index)
	return out
}

// Names returns the template names, sorted.
func Names() []string {
	names := make([]string, len(index))
	for i, t := range index {
		names[i] = t.Name
	}
	return names
}

// Get returns the template named name.
func Get(name string) (Template, error) {
	if err := project.ValidName("template", name); err != nil {
		return Template{}, err
	}
	for _, t := range index {
		if t.Name == name {
			return t, nil
		}
	}
	return Template{}, fmt.Errorf("no template %q; templates: %s", name, strings.Join(Names(), ", "))
}

// Source returns the Starlark source of the template named name.
func Source(name string) (string, error) {
	if _, err := Get(name); err != nil {
		return "", err
	}
	b, err := files.ReadFile("star/" + name + ".star")
	if err != nil {
		return "", fmt.Errorf("template %q: %w", name, err)
	}
	return string(b), nil
}
