package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"wicket/node/nodetest"
)

// TestOutputSchemasValidate: every tool declares an outputSchema, and the
// structuredContent of its real answers (each shape a tool has) validates
// against it.
func TestOutputSchemasValidate(t *testing.T) {
	n := nodetest.NewServer(t)
	proj := newProject(t)
	runWicket(t, nil, "--project", proj, "data", "seed-demo")
	runWicket(t, nil, "--project", proj, "strategy", "new", "mine", "--from", "sma_cross")
	s := startMCP(t, nodeEnv(n), proj, "--node", n.Addr)

	list, err := s.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]*jsonschema.Schema{}
	for _, tool := range list.Tools {
		if len(tool.RawOutputSchema) == 0 && tool.OutputSchema.Type == "" {
			t.Errorf("%s declares no outputSchema", tool.Name)
			continue
		}
		raw := tool.RawOutputSchema
		if len(raw) == 0 {
			raw, _ = json.Marshal(tool.OutputSchema)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		c := jsonschema.NewCompiler()
		url := "mem://" + tool.Name + ".json"
		if err := c.AddResource(url, doc); err != nil {
			t.Fatal(err)
		}
		if schemas[tool.Name], err = c.Compile(url); err != nil {
			t.Fatalf("%s: outputSchema does not compile: %v", tool.Name, err)
		}
	}

	order := `"venue":"paper","symbol":"BTC-USD","side":"buy","type":"market","quantity":"0.1","client_order_id":"schema-1"`
	calls := []struct{ tool, args string }{
		{"validate_strategy", `{"name":"mine"}`},
		{"discover_params", `{"name":"mine"}`},
		{"list_templates", `{}`},
		{"list_templates", `{"name":"sma_cross"}`},
		{"list_indicators", `{}`},
		{"list_indicators", `{"category":"overlap"}`},
		{"list_indicators", `{"name":"sma"}`},
		{"list_series", `{"limit":2}`},
		{"list_strategies", `{}`},
		{"run_backtest", `{"name":"mine","series":"BTC-USD@1d"}`},
		{"run_sweep", `{"name":"mine","series":"BTC-USD@1d","grid":{"fast":[5,10],"slow":[30]}}`},
		{"run_sweep", `{"name":"mine","series":"BTC-USD@1d","grid":"{\"fast\":[5,10],\"slow\":[30]}","estimate":true}`},
		{"run_optimize", `{"name":"mine","series":"BTC-USD@1d","grid":{"fast":[5,10,20],"slow":[30,50]},"trials":4}`},
		{"run_walk_forward", `{"name":"mine","series":"BTC-USD@1d","grid":{"fast":[5,10],"slow":[30,50]},"windows":2}`},
		{"research_history", `{"limit":3}`},
		{"research_history", `{"kind":"sweep","full":true}`},
		{"research_plan", `{"plan":"schema","name":"mine","series":"BTC-USD@1d","hypothesis":"h","criteria":"dsr>=0.95","max_trials":50,"holdout":"2024-07-01:"}`},
		{"run_sweep", `{"name":"mine","series":"BTC-USD@1d","grid":{"fast":[5,10],"slow":[30]},"plan":"schema"}`},
		{"research_verdict", `{"plan":"schema"}`},
		{"research_plan", `{"plan":"schema"}`},
		{"node_snapshot", `{}`},
		{"risk_status", `{}`},
		{"submit_order", `{` + order + `}`},
		{"cancel_order", `{"venue":"paper","client_order_id":"schema-1"}`},
		{"modify", `{"venue":"paper","client_order_id":"schema-1","quantity":"0.2"}`},
		{"flatten", `{"venue":"paper"}`},
		{"market_exit", `{"venue":"paper"}`},
		{"mass_cancel", `{"venue":"paper"}`},
		{"set_trading_state", `{"state":"reduce_only"}`},
	}
	seen := map[string]bool{}
	for _, c := range calls {
		res := s.call(t, c.tool, c.args)
		if res.IsError {
			t.Errorf("%s %s: %s", c.tool, c.args, text(res))
			continue
		}
		check(t, schemas[c.tool], c.tool, structured(t, res))
		seen[c.tool] = true
		if c.tool == "submit_order" { // the confirmed shape too
			var prev map[string]any
			_ = json.Unmarshal([]byte(structured(t, res)), &prev)
			done := s.call(t, "submit_order", `{`+order+`,"confirm":true,"preview_token":"`+prev["preview_token"].(string)+`"}`)
			check(t, schemas["submit_order"], "submit_order (confirmed)", structured(t, done))
		}
	}
	for _, name := range deploySchemaTools { // TestDeployThroughMCP validates them, on a node running deployments
		seen[name] = true
	}
	for name := range schemas {
		if !seen[name] {
			t.Errorf("%s: no answer was validated", name)
		}
	}
}

func check(t *testing.T, sch *jsonschema.Schema, what, body string) {
	t.Helper()
	if sch == nil {
		t.Errorf("%s: no schema", what)
		return
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(body))
	if err != nil {
		t.Fatalf("%s: result is not JSON: %v", what, err)
	}
	if err := sch.Validate(v); err != nil {
		t.Errorf("%s: structuredContent does not match its outputSchema: %v\n%.600s", what, err, body)
	}
}

// structured is a result's structuredContent as JSON: what outputSchema
// describes (a large result's text is only a summary of it).
func structured(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if res.StructuredContent == nil {
		t.Fatalf("no structuredContent: %s", text(res))
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
