package agent

import (
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/shopspring/decimal"

	"wicket/node"
	"wicket/strategy/research"
	"wicket/strategy/scriptapi"
	"wicket/strategy/templates"
)

// Output schemas are derived from the Go types the tools return, so a
// result and its declared shape cannot drift apart; a test validates every
// tool's structuredContent against its schema. Money travels as decimal
// strings, times as RFC3339 strings. The top level stays open, because a
// result may carry an arguments_note (see parseArgs).

var outputTypeSchemas = map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[decimal.Decimal](): {Type: "string", Description: "a decimal number, as a string"},
	reflect.TypeFor[time.Time]():       {Type: "string", Description: "an RFC3339 time"},
	reflect.TypeFor[json.RawMessage](): {},
	// A series set's walk-forward holds one walk-forward per series: a
	// recursive type, described here by its shape alone.
	reflect.TypeFor[[]research.WalkForwardResult](): {Type: "array", Items: &jsonschema.Schema{Type: "object"}},
}

// outputSchemaFor is T's JSON schema as outputSchema carries it.
func outputSchemaFor[T any]() map[string]any {
	s, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: outputTypeSchemas})
	if err != nil {
		panic(fmt.Sprintf("agent: output schema of %T: %v", *new(T), err)) // static types; a test builds every schema
	}
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		panic(err)
	}
	delete(m, "additionalProperties")
	delete(m, "required") // every field's type is checked; which are always present is the answers' business, not the list's
	m["type"] = "object"
	prune(m, 0)
	return m
}

// outputSchemaDepth bounds how deep an output schema describes a result:
// tools/list travels into the model's context, so each top-level field is
// described by its type alone (issue 44 item 16: depth 2 cost 4.2 KB of
// the list); the answers and docs/mcp-tools.md show the nested shapes.
const outputSchemaDepth = 1

// prune cuts s below outputSchemaDepth levels of properties and items.
func prune(s map[string]any, depth int) {
	if depth >= outputSchemaDepth {
		for k := range s {
			if k != "type" {
				delete(s, k)
			}
		}
		return
	}
	if props, ok := s["properties"].(map[string]any); ok {
		for _, p := range props {
			if pm, ok := p.(map[string]any); ok {
				prune(pm, depth+1)
			}
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		prune(items, depth+1)
	}
	if ap, ok := s["additionalProperties"].(map[string]any); ok {
		prune(ap, depth+1)
	}
}

// The result shapes of the tools whose handlers build them as maps.
type (
	discoverParamsOut struct {
		Strategy string           `json:"strategy"`
		Style    scriptapi.Style  `json:"style"`
		Summary  string           `json:"summary"`
		Params   []scriptapi.Knob `json:"params"`
		Count    int              `json:"count"`
	}
	// listTemplatesOut is both answers: the list, or one template.
	listTemplatesOut struct {
		Templates []templates.Template `json:"templates,omitempty"`
		Count     int                  `json:"count,omitempty"`
		Next      string               `json:"next,omitempty"`
		Name      string               `json:"name,omitempty"`
		Summary   string               `json:"summary,omitempty"`
		Style     string               `json:"style,omitempty"`
		Params    []scriptapi.Knob     `json:"params,omitempty"`
		Universe  []string             `json:"universe,omitempty"`
		Rebalance string               `json:"rebalance,omitempty"`
		Source    string               `json:"source,omitempty"`
	}
	seriesOut struct {
		Count     int                   `json:"count"`
		Truncated string                `json:"truncated,omitempty"`
		Note      string                `json:"note,omitempty"`
		Clamped   map[string]int        `json:"clamped,omitempty"`
		Series    []research.SeriesInfo `json:"series"`
	}
	strategiesOut struct {
		Count      int                     `json:"count"`
		Truncated  string                  `json:"truncated,omitempty"`
		Note       string                  `json:"note,omitempty"`
		Clamped    map[string]int          `json:"clamped,omitempty"`
		Strategies []research.StrategyInfo `json:"strategies"`
	}
)

// listIndicatorsSchema covers the three answers (categories, one family,
// one indicator), whose entries come from the catalog.
var listIndicatorsSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"categories": map[string]any{"type": "array"}, // of {category, count}
		"total":      map[string]any{"type": "integer"},
		"category":   map[string]any{"type": "string"},
		"count":      map[string]any{"type": "integer"},
		"indicators": map[string]any{"type": "array", "items": map[string]any{"type": "object"}},
		"indicator":  map[string]any{"type": "object"},
		"next":       map[string]any{"type": "string"},
	},
}

// historySchema: research_history's answer, whose trials are ledger rows
// or their summaries.
var historySchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"count":       map[string]any{"type": "integer"},
		"trials":      map[string]any{"type": "array", "items": map[string]any{"type": "object"}},
		"next_before": map[string]any{"type": "integer"},
		"more":        map[string]any{"type": "string"},
		"clamped":     map[string]any{"type": "object"},
		"note":        map[string]any{"type": "string"},
	},
	"required": []string{"count", "trials"},
}

// backtestSchema: the engine's report (metrics, trades, settings,
// warnings), which the engine renders as JSON.
var backtestSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"metrics":         map[string]any{"type": "object"},
		"settings":        map[string]any{"type": "object"},
		"warnings":        map[string]any{"type": []string{"array", "null"}},
		"strategy_output": map[string]any{"type": "string"},
	},
	"required": []string{"metrics"},
}

var (
	validateSchema    = outputSchemaFor[scriptapi.Report]()
	discoverSchema    = outputSchemaFor[discoverParamsOut]()
	templatesSchema   = outputSchemaFor[listTemplatesOut]()
	seriesListSchema  = outputSchemaFor[seriesOut]()
	strategiesSchema  = outputSchemaFor[strategiesOut]()
	sweepSchema       = outputSchemaFor[research.SweepResult]()
	walkForwardSchema = outputSchemaFor[research.WalkForwardResult]()
	snapshotSchema    = outputSchemaFor[node.Snapshot]()
)
