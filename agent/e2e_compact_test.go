package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// resourceJSON reads a resource and decodes its JSON text.
func resourceJSON(t *testing.T, s *session, uri string) map[string]any {
	t.Helper()
	req := mcp.ReadResourceRequest{}
	req.Params.URI = uri
	res, err := s.ReadResource(context.Background(), req)
	if err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(res.Contents[0].(mcp.TextResourceContents).Text), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// runLinkOf is the resource_link content of a result.
func runLinkOf(r *mcp.CallToolResult) (mcp.ResourceLink, bool) {
	for _, c := range r.Content {
		if l, ok := c.(mcp.ResourceLink); ok {
			return l, true
		}
	}
	return mcp.ResourceLink{}, false
}

// TestCompactBacktestAnswer: the default answer has metrics, warnings,
// settings and the first and last trades (10 in all), no equity curve, a
// short text that names the full JSON's place, and a resource_link that
// resolves; trades_limit 0 and 500 are honoured exactly; paging the run's
// trades returns each once.
func TestCompactBacktestAnswer(t *testing.T) {
	proj := seededProject(t)
	s := startMCP(t, nil, proj)
	args := `"source":%q,"series":"BTC-USD@1h","params":{"fast":2,"slow":4}`
	src := templateSource(t, s, "ema_long_short")
	call := func(extra string) *mcp.CallToolResult {
		return s.call(t, "run_backtest", "{"+fmt.Sprintf(args, src)+extra+"}")
	}

	def := call("")
	ans := object(t, def)
	trades := ans["trades"].([]any)
	if len(trades) != 10 || ans["equity"] != nil || ans["metrics"] == nil || ans["settings"] == nil || ans["warnings"] == nil {
		t.Fatalf("default answer: %d trades, equity %v, keys %v", len(trades), ans["equity"] != nil, keys(ans))
	}
	if !strings.Contains(fmt.Sprint(ans["trades_shown"]), "the first 5 and the last 5 of 500") {
		t.Errorf("trades_shown = %v", ans["trades_shown"])
	}
	txt := text(def)
	if strings.HasPrefix(txt, "{") || !strings.Contains(txt, "sharpe") || !strings.Contains(txt, "structured content") || len(txt) > 1000 {
		t.Errorf("text is not a short summary: %q", txt)
	}
	link, ok := runLinkOf(def)
	id, _ := ans["run_id"].(string)
	if !ok || id == "" || link.URI != "wicket://runs/"+id || link.MIMEType != "application/json" {
		t.Fatalf("resource_link = %+v (run_id %q)", link, id)
	}

	// The run's resource: the whole report without trades, and the trades paged.
	full := resourceJSON(t, s, link.URI)
	if full["trades_count"] != float64(500) || full["equity"] == nil || full["metrics"] == nil || full["trades"] != nil {
		t.Fatalf("run resource: keys %v, trades_count %v", keys(full), full["trades_count"])
	}
	if a, _ := full["audit_export"].(map[string]any); a == nil || a["command"] != "wicket research export --out "+id+".json "+id {
		t.Errorf("run resource: audit_export %v, want the ledger export of run %s", full["audit_export"], id)
	}
	seen := map[string]bool{}
	var paged []any
	for uri, pages := full["trades_uri"].(string), 0; uri != ""; pages++ {
		if pages > 10 {
			t.Fatal("paging does not end")
		}
		page := resourceJSON(t, s, uri)
		for _, tr := range page["trades"].([]any) {
			b, _ := json.Marshal(tr)
			if seen[string(b)] {
				t.Errorf("trade listed twice: %s", b)
			}
			seen[string(b)] = true
			paged = append(paged, tr)
		}
		uri, _ = page["next"].(string)
	}
	if len(paged) != 500 {
		t.Errorf("paged %d trades, want 500", len(paged))
	}
	first, _ := json.Marshal(trades[0])
	last, _ := json.Marshal(trades[9])
	p0, _ := json.Marshal(paged[0])
	p499, _ := json.Marshal(paged[499])
	if string(first) != string(p0) || string(last) != string(p499) {
		t.Errorf("the answer's first and last trades are not the run's first and last")
	}

	// trades_limit 0: none; 500: all the report holds; equity: true: the curve.
	if a := object(t, call(`,"trades_limit":0`)); len(a["trades"].([]any)) != 0 {
		t.Errorf("trades_limit 0 listed %d trades", len(a["trades"].([]any)))
	}
	if a := object(t, call(`,"trades_limit":500,"equity":true`)); len(a["trades"].([]any)) != 500 || len(a["equity"].([]any)) == 0 {
		t.Errorf("trades_limit 500: %d trades, equity %v", len(a["trades"].([]any)), a["equity"] != nil)
	}
	if a := object(t, call(`,"trades_limit":7`)); len(a["trades"].([]any)) != 7 {
		t.Errorf("trades_limit 7 listed %d trades", len(a["trades"].([]any)))
	}
	if r := call(`,"trades_limit":501`); !r.IsError {
		t.Errorf("trades_limit 501 accepted")
	}
	// An unknown run says which ones are kept.
	req := mcp.ReadResourceRequest{}
	req.Params.URI = "wicket://runs/nope"
	if _, err := s.ReadResource(context.Background(), req); err == nil || !strings.Contains(err.Error(), "no stored run") {
		t.Errorf("unknown run: %v", err)
	}
}

// TestBacktestAnswerSizes: the default run_backtest answer (the whole
// tools/call result: text, structured content and link) stays under 8 KB
// for every template on every demo series. To keep the bound meaningful
// each answer must be a full one — metrics, settings, warnings, a full
// list of 10 trades (every template trades at least that often on the demo
// data, gapped openings included), no curve, a run link — and a run that
// piles on every range and fill warning the engine has stays under it too.
func TestBacktestAnswerSizes(t *testing.T) {
	if testing.Short() {
		t.Skip("72 backtests")
	}
	proj := seededProject(t)
	s := startMCP(t, nil, proj)
	var series []string
	for _, it := range object(t, s.call(t, "list_series", `{}`))["series"].([]any) {
		series = append(series, it.(map[string]any)["series"].(string))
	}
	var templates []string
	for _, it := range object(t, s.call(t, "list_templates", `{}`))["templates"].([]any) {
		templates = append(templates, it.(map[string]any)["name"].(string))
	}
	if len(series) < 8 || len(templates) < 9 {
		t.Fatalf("%d series, %d templates", len(series), len(templates))
	}
	const limit = 8192
	size := func(r *mcp.CallToolResult) int {
		b, _ := json.Marshal(r)
		return len(b)
	}
	largest, largestAt, warned, portfolios := 0, "", 0, 0
	var largestSrc, largestSeries string
	for _, tpl := range templates {
		src := templateSource(t, s, tpl)
		if strings.Contains(src, "\nuniverse = ") { // a portfolio: one run over the universe it declares
			r := s.call(t, "run_backtest", fmt.Sprintf(`{"source":%q}`, src))
			if n := size(r); r.IsError || n >= limit {
				t.Errorf("%s over its universe: %d bytes (error %v): %.200s", tpl, n, r.IsError, text(r))
			}
			portfolios++
			continue
		}
		for _, ser := range series {
			r := s.call(t, "run_backtest", fmt.Sprintf(`{"source":%q,"series":%q}`, src, ser))
			n := size(r)
			if r.IsError || n >= limit {
				t.Errorf("%s on %s: %d bytes (error %v): %.200s", tpl, ser, n, r.IsError, text(r))
				continue
			}
			ans := object(t, r)
			trades, _ := ans["trades"].([]any)
			w, _ := ans["warnings"].([]any)
			_, linked := runLinkOf(r)
			if len(trades) != 10 || ans["metrics"] == nil || ans["settings"] == nil || ans["warnings"] == nil || ans["equity"] != nil || !linked {
				t.Errorf("%s on %s is not a full default answer: %d trades, equity %v, link %v, keys %v", tpl, ser, len(trades), ans["equity"] != nil, linked, keys(ans))
			}
			if len(w) > 0 {
				warned++
			}
			if n > largest {
				largest, largestAt, largestSrc, largestSeries = n, tpl+" on "+ser, src, ser
			}
		}
	}
	if warned == 0 {
		t.Error("no default answer carried a warning: the bound was never measured with one")
	}
	t.Logf("largest default run_backtest answer: %d bytes (%s); %d of %d answers carry warnings",
		largest, largestAt, warned, (len(templates)-portfolios)*len(series))
	if portfolios == 0 {
		t.Error("no template ran as a portfolio: the portfolio answer's bound was never measured")
	}

	// The largest again, with a range wider than the data on both sides and
	// fill=close: three more warnings.
	r := s.call(t, "run_backtest", fmt.Sprintf(`{"source":%q,"series":%q,"from":"1990-01-01","to":"2090-01-01","fill":"close"}`, largestSrc, largestSeries))
	ans := object(t, r)
	if w, _ := ans["warnings"].([]any); len(w) < 3 || size(r) >= limit {
		t.Errorf("%s with every range and fill warning: %d bytes, warnings %v", largestAt, size(r), w)
	} else {
		t.Logf("with %d warnings: %d bytes", len(w), size(r))
	}
}

func templateSource(t *testing.T, s *session, name string) string {
	t.Helper()
	tpl := object(t, s.call(t, "list_templates", `{"name":"`+name+`"}`))
	src, _ := tpl["source"].(string)
	if src == "" {
		t.Fatalf("template %s: %v", name, keys(tpl))
	}
	return src
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestSweepAndWalkForwardLinks: sweeps and walk-forwards answer with a
// short text, their JSON once, and a resource_link that resolves; the
// walk-forward's stitched curve is only at the link.
func TestSweepAndWalkForwardLinks(t *testing.T) {
	proj := seededProject(t)
	s := startMCP(t, nil, proj)
	src := templateSource(t, s, "sma_cross")
	for _, tc := range []struct{ tool, args string }{
		{"run_sweep", fmt.Sprintf(`{"source":%q,"series":"BTC-USD@1d","grid":{"fast":[5,10],"slow":[30,50]}}`, src)},
		{"run_walk_forward", fmt.Sprintf(`{"source":%q,"series":"BTC-USD@1d","grid":{"fast":[5,10],"slow":[30,50]},"windows":3}`, src)},
	} {
		r := s.call(t, tc.tool, tc.args)
		ans := object(t, r)
		link, ok := runLinkOf(r)
		if !ok || link.URI != ans["run_uri"] || strings.HasPrefix(text(r), "{") || !strings.Contains(text(r), "structured content") {
			t.Fatalf("%s: link %+v, text %.200q", tc.tool, link, text(r))
		}
		full := resourceJSON(t, s, link.URI)
		if full["series"] != "BTC-USD@1d" {
			t.Errorf("%s run resource: %v", tc.tool, keys(full))
		}
		if tc.tool == "run_walk_forward" && (ans["equity"] != nil || full["equity"] == nil || ans["equity_points"] == nil) {
			t.Errorf("walk-forward curve: answer %v, resource %v", ans["equity"] != nil, full["equity"] != nil)
		}
	}
}

// TestRunIDCompletion: the run template completes stored run ids.
func TestRunIDCompletion(t *testing.T) {
	proj := seededProject(t)
	s := startMCP(t, nil, proj)
	src := templateSource(t, s, "sma_cross")
	id := object(t, s.call(t, "run_backtest", fmt.Sprintf(`{"source":%q,"series":"BTC-USD@1d"}`, src)))["run_id"].(string)
	req := mcp.CompleteRequest{}
	req.Params.Ref = mcp.ResourceReference{Type: "ref/resource", URI: "wicket://runs/{id}"}
	req.Params.Argument.Name = "id"
	req.Params.Argument.Value = id[:4]
	res, err := s.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Completion.Values) != 1 || res.Completion.Values[0] != id {
		t.Errorf("completions %v, want [%s]", res.Completion.Values, id)
	}
	tpls, err := s.ListResourceTemplates(context.Background(), mcp.ListResourceTemplatesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tp := range tpls.ResourceTemplates {
		names = append(names, tp.URITemplate.Raw())
	}
	if !strings.Contains(strings.Join(names, " "), "wicket://runs/{id}") {
		t.Errorf("templates listed: %v", names)
	}
}

// TestTemplateCompletionEveryProfile (issue 31, item 12): the strategy and
// series templates complete from real names under every profile that
// serves them, beside the run ids (whose provider used to replace the
// server's own under full and read-only).
func TestTemplateCompletionEveryProfile(t *testing.T) {
	proj := seededProject(t)
	runWicket(t, nil, "--project", proj, "strategy", "new", "mine", "--from", "sma_cross")
	for _, profile := range []string{"full", "read-only", "offline"} {
		s := startMCP(t, nil, proj, "--profile", profile)
		complete := func(uri, arg, value string) []string {
			req := mcp.CompleteRequest{}
			req.Params.Ref = mcp.ResourceReference{Type: "ref/resource", URI: uri}
			req.Params.Argument.Name, req.Params.Argument.Value = arg, value
			res, err := s.Complete(context.Background(), req)
			if err != nil {
				t.Fatalf("%s: complete %s: %v", profile, uri, err)
			}
			return res.Completion.Values
		}
		if got := complete("wicket://strategy/{name}", "name", "mi"); len(got) != 1 || got[0] != "mine" {
			t.Errorf("%s: strategy completion %v, want [mine]", profile, got)
		}
		if profile == "offline" {
			continue // no history store is served offline
		}
		if got := complete("wicket://series/{series}", "series", "BTC-USD@1"); !slices.Contains(got, "BTC-USD@1d") {
			t.Errorf("%s: series completion %v, want BTC-USD@1d among them", profile, got)
		}
	}
}
