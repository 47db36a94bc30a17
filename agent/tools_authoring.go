package agent

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"wicket/strategy/scriptapi"
	"wicket/strategy/ta"
	"wicket/strategy/templates"
	"wicket/strategy/worker"
)

// Authoring tools: offline, they parse and list and touch nothing outside
// the process (strategy code runs in a worker subprocess).

func authoringHints() hints { return hints{ReadOnly: true, Idempotent: true, OpenWorld: flag(false)} }

// The authoring tools' arguments, declared once (see declare.go).
type (
	// strategyArgs are the name-or-source arguments every strategy tool takes.
	strategyArgs struct {
		Name   string `json:"name" desc:"a strategy in strategies/ (bare name)"`
		Source string `json:"source" desc:"Starlark source (instead of name)"`
	}
	templatesArgs struct {
		Name string `json:"name" desc:"a template name; omit for the list"`
	}
	indicatorsArgs struct {
		Category string `json:"category" desc:"as listed without arguments"`
		Name     string `json:"name" desc:"an indicator, for its full entry"`
	}
)

func (tb *toolbox) authoringTools() []*toolSpec {
	return []*toolSpec{
		{
			Name: "validate_strategy", Title: "Validate a strategy", Ring: ringAuthoring, Hints: authoringHints(),
			Description: "Checks a Starlark strategy: parse, entry points, smoke run, lookahead and start point; each problem with line, column, hint.",
			Params:      paramsOf[strategyArgs](),
			Output:      validateSchema,
			Handle:      tb.validateStrategy,
		},
		{
			Name: "discover_params", Title: "Discover strategy knobs", Ring: ringAuthoring, Hints: authoringHints(),
			Description: "Lists a strategy's knobs (param.*): name, type, default, bounds, step, choices, doc.",
			Params:      paramsOf[strategyArgs](),
			Output:      discoverSchema,
			Handle:      tb.discoverParams,
		},
		{
			Name: "list_templates", Title: "List strategy templates", Ring: ringAuthoring, Hints: authoringHints(),
			Description: "Lists the strategy templates with summaries and knobs; with name, one template's source.",
			Params:      paramsOf[templatesArgs](),
			Output:      templatesSchema,
			Handle:      tb.listTemplates,
		},
		{
			Name: "list_indicators", Title: "Browse the indicator catalog", Ring: ringAuthoring, Hints: authoringHints(),
			Description: "Browses the ta.* indicator catalog: categories, one category, or one indicator's full entry.",
			Params:      paramsOf[indicatorsArgs](),
			Output:      listIndicatorsSchema,
			Handle:      tb.listIndicators,
		},
	}
}

func (tb *toolbox) listIndicators(_ context.Context, c *call) *result {
	var in indicatorsArgs
	if _, err := decodeArgs(c.args, &in); err != nil {
		return failErr(err)
	}
	category, name := in.Category, in.Name
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
	var in templatesArgs
	if _, err := decodeArgs(c.args, &in); err != nil {
		return failErr(err)
	}
	name := in.Name
	if name == "" {
		list := templatesListed(templates.List()) // compact.go
		r := ok(map[string]any{"templates": list, "count": len(list),
			"next": "call list_templates with name for a template's source and its knobs' docs"})
		r.summary = templatesSummary(list)
		return r
	}
	t, err := templates.Get(name)
	if err != nil {
		return failErr(err)
	}
	src, err := templates.Source(name)
	if err != nil {
		return failErr(err)
	}
	out := map[string]any{"name": t.Name, "summary": t.Summary, "style": t.Style, "params": t.Params, "source": src}
	if t.Universe != nil { // a portfolio template
		out["universe"], out["rebalance"] = t.Universe, t.Rebalance
	}
	return ok(out)
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
	var in strategyArgs
	if _, err := decodeArgs(c.args, &in); err != nil {
		return scriptapi.Source{}, err
	}
	name, text := in.Name, in.Source
	switch {
	case name != "" && text != "":
		return scriptapi.Source{}, fmt.Errorf("give name or source, not both")
	case text != "":
		return scriptapi.Source{Name: "source.star", Text: text}, nil
	case name == "":
		return scriptapi.Source{}, fmt.Errorf("give name (a strategy in the project) or source (Starlark text)")
	}
	// One resolver for every command and tool: the project's strategy,
	// else the built-in template of that name.
	st, err := templates.Resolve(tb.Project, name)
	if errors.Is(err, fs.ErrNotExist) {
		return scriptapi.Source{}, fmt.Errorf("%w; call list_strategies for the project's strategies, or pass source", err)
	}
	if err != nil {
		return scriptapi.Source{}, err
	}
	return scriptapi.Source{Name: st.Label, Text: st.Source}, nil
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
