package agent

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"wicket/internal/project"
	"wicket/strategy/scriptapi"
	"wicket/strategy/ta"
	"wicket/strategy/templates"
	"wicket/strategy/worker"
)

// Authoring tools: offline, they parse and list and touch nothing outside
// the process (strategy code runs in a worker subprocess).

func authoringHints() Hints { return Hints{ReadOnly: true, Idempotent: true, OpenWorld: flag(false)} }

// strategyParams are the name-or-source arguments every strategy tool takes.
var strategyParams = []Param{
	{Name: "name", Type: "string", Description: "a strategy in the project's strategies/ folder (bare name, no extension)"},
	{Name: "source", Type: "string", Description: "Starlark source text of a strategy (instead of name)"},
}

func (tb *toolbox) authoringTools() []*ToolSpec {
	return []*ToolSpec{
		{
			Name: "validate_strategy", Title: "Validate a strategy", Ring: RingAuthoring, Hints: authoringHints(),
			Description: "Checks a Starlark strategy: parses it, runs its top level, checks its entry points and smoke-runs it on a short synthetic series; problems carry line, column and a hint.",
			Params:      strategyParams,
			Handle:      tb.validateStrategy,
		},
		{
			Name: "discover_params", Title: "Discover strategy knobs", Ring: RingAuthoring, Hints: authoringHints(),
			Description: "Lists a strategy's knobs (param.* declarations): name, type, default, bounds, step, choices and doc.",
			Params:      strategyParams,
			Handle:      tb.discoverParams,
		},
		{
			Name: "list_templates", Title: "List strategy templates", Ring: RingAuthoring, Hints: authoringHints(),
			Description: "Lists the built-in strategy templates with their summaries and knobs; with name, returns that template's source.",
			Params:      []Param{{Name: "name", Type: "string", Description: "a template name; omit for the list"}},
			Handle:      tb.listTemplates,
		},
		{
			Name: "list_indicators", Title: "Browse the indicator catalog", Ring: RingAuthoring, Hints: authoringHints(),
			Description: "Browses the host-computed indicator catalog available to strategies as ta.*: without arguments the categories with counts, with category one family, with name one indicator's full entry.",
			Params: []Param{
				{Name: "category", Type: "string", Description: "a category name, as listed without arguments"},
				{Name: "name", Type: "string", Description: "an indicator name, for its full entry (inputs, parameters with defaults, outputs, warm-up)"},
			},
			Handle: tb.listIndicators,
		},
	}
}

func (tb *toolbox) listIndicators(_ context.Context, c *call) *result {
	category, err := c.args.str("category", "")
	if err != nil {
		return failErr(err)
	}
	name, err := c.args.str("name", "")
	if err != nil {
		return failErr(err)
	}
	cat := ta.Builtin()
	switch {
	case name != "":
		e, found := cat.Lookup(name)
		if !found {
			near, _ := cat.Filter("", name)
			hint := "call list_indicators with a category to browse"
			if len(near) > 0 {
				hint = "names containing it: " + entryNames(near, 10)
			}
			return fail("no indicator named %q; %s", name, hint)
		}
		return ok(map[string]any{"indicator": e})
	case category != "":
		es, err := cat.Filter(category, "")
		if err != nil {
			return failErr(err)
		}
		type row struct {
			Name    string   `json:"name"`
			Summary string   `json:"summary"`
			Outputs []string `json:"outputs"`
			Warmup  int      `json:"warmup"`
		}
		rows := make([]row, len(es))
		for i, e := range es {
			rows[i] = row{e.Name, e.Summary, e.Outputs, e.Warmup}
		}
		return ok(map[string]any{"category": category, "count": len(rows), "indicators": rows,
			"next": "call list_indicators with name for an indicator's parameters and defaults"})
	default:
		type group struct {
			Category string `json:"category"`
			Count    int    `json:"count"`
		}
		var groups []group
		total := 0
		for _, k := range ta.Categories {
			es, _ := cat.Filter(string(k), "")
			groups = append(groups, group{string(k), len(es)})
			total += len(es)
		}
		return ok(map[string]any{"categories": groups, "total": total,
			"next": "call list_indicators with category to list one family"})
	}
}

func entryNames(es []*ta.Entry, limit int) string {
	s := ""
	for i, e := range es {
		if i == limit {
			s += fmt.Sprintf(", and %d more", len(es)-limit)
			break
		}
		if i > 0 {
			s += ", "
		}
		s += e.Name
	}
	return s
}

func (tb *toolbox) listTemplates(_ context.Context, c *call) *result {
	name, err := c.args.str("name", "")
	if err != nil {
		return failErr(err)
	}
	if name == "" {
		list := templates.List()
		return ok(map[string]any{"templates": list, "count": len(list),
			"next": "call list_templates with name for a template's source"})
	}
	t, err := templates.Get(name)
	if err != nil {
		return failErr(err)
	}
	src, err := templates.Source(name)
	if err != nil {
		return failErr(err)
	}
	return ok(map[string]any{"name": t.Name, "summary": t.Summary, "style": t.Style, "params": t.Params, "source": src})
}

// Strategies runs strategy code for the authoring tools. It must do so in
// worker processes (the strategy worker pool satisfies it): the server
// never executes Starlark itself.
type Strategies interface {
	Validate(ctx context.Context, req worker.StrategyRequest) (scriptapi.Report, error)
	Params(ctx context.Context, req worker.StrategyRequest) (worker.ParamsResult, error)
}

// strategyRequest resolves the name-or-source arguments into a worker
// request, with the project's indicators directory when there is one.
func (tb *toolbox) strategyRequest(c *call) (worker.StrategyRequest, error) {
	src, err := tb.strategySource(c)
	if err != nil {
		return worker.StrategyRequest{}, err
	}
	req := worker.StrategyRequest{Name: src.Name, Source: src.Text}
	if tb.Project != nil {
		req.IndicatorsDir = tb.Project.IndicatorsDir()
	}
	return req, nil
}

// strategySource resolves the name-or-source arguments to source text.
func (tb *toolbox) strategySource(c *call) (scriptapi.Source, error) {
	name, err := c.args.str("name", "")
	if err != nil {
		return scriptapi.Source{}, err
	}
	text, err := c.args.str("source", "")
	if err != nil {
		return scriptapi.Source{}, err
	}
	switch {
	case name != "" && text != "":
		return scriptapi.Source{}, fmt.Errorf("give name or source, not both")
	case text != "":
		return scriptapi.Source{Name: "source.star", Text: text}, nil
	case name == "":
		return scriptapi.Source{}, fmt.Errorf("give name (a strategy in the project) or source (Starlark text)")
	}
	path, err := tb.strategyPath(name)
	if err != nil {
		return scriptapi.Source{}, err
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return scriptapi.Source{}, fmt.Errorf("no strategy %q in the project; call list_strategies for the names, or pass source", name)
	}
	if err != nil {
		return scriptapi.Source{}, fmt.Errorf("read strategy %q: %w", name, err)
	}
	return scriptapi.Source{Name: name + ".star", Text: string(b)}, nil
}

// strategyPath validates name and locates it in the project.
func (tb *toolbox) strategyPath(name string) (string, error) {
	if err := project.ValidName("strategy", name); err != nil {
		return "", err
	}
	if tb.Project == nil {
		return "", errNoProject
	}
	return tb.Project.StrategyPath(name)
}

func (tb *toolbox) needStrategies() *result {
	if tb.Strategies == nil {
		return failErr(errNoWorkers)
	}
	return nil
}

func (tb *toolbox) validateStrategy(ctx context.Context, c *call) *result {
	if r := tb.needStrategies(); r != nil {
		return r
	}
	req, err := tb.strategyRequest(c)
	if err != nil {
		return failErr(err)
	}
	rep, err := tb.Strategies.Validate(ctx, req)
	if err != nil {
		return failErr(err)
	}
	return ok(rep)
}

func (tb *toolbox) discoverParams(ctx context.Context, c *call) *result {
	if r := tb.needStrategies(); r != nil {
		return r
	}
	req, err := tb.strategyRequest(c)
	if err != nil {
		return failErr(err)
	}
	res, err := tb.Strategies.Params(ctx, req)
	if err != nil {
		return failErr(err)
	}
	if res.Knobs == nil {
		res.Knobs = []scriptapi.Knob{}
	}
	return ok(map[string]any{"strategy": req.Name, "style": res.Style, "summary": res.Summary, "params": res.Knobs, "count": len(res.Knobs)})
}
