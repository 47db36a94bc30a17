package agent_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestReportResource: run_backtest links its run's tear sheet, served as
// an MCP App view at ui://wicket/report/{run}: one self-contained page
// with every chart and the run's own figures.
func TestReportResource(t *testing.T) {
	s := startMCP(t, nil, seededProject(t))
	ctx := context.Background()

	tpls, err := s.ListResourceTemplates(ctx, mcp.ListResourceTemplatesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	listed := false
	for _, tp := range tpls.ResourceTemplates {
		if tp.URITemplate.Raw() == "ui://wicket/report/{run}" && tp.MIMEType == "text/html;profile=mcp-app" {
			listed = true
		}
	}
	if !listed {
		t.Errorf("resources/templates/list has no ui://wicket/report/{run} of type text/html;profile=mcp-app")
	}

	// run_backtest declares its view (MCP Apps): a static page served with
	// the App type and a CSP allowing no domain, which reads the run's page.
	tools, err := s.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var view string
	for _, tool := range tools.Tools {
		if tool.Name == "run_backtest" && tool.Meta != nil {
			ui, _ := tool.Meta.AdditionalFields["ui"].(map[string]any)
			view, _ = ui["resourceUri"].(string)
		}
	}
	if view != "ui://wicket/tear-sheet" {
		t.Fatalf("run_backtest declares the view %q, want ui://wicket/tear-sheet", view)
	}
	vreq := mcp.ReadResourceRequest{}
	vreq.Params.URI = view
	vres, err := s.ReadResource(ctx, vreq)
	if err != nil {
		t.Fatalf("read %s: %v", view, err)
	}
	vc, ok := vres.Contents[0].(mcp.TextResourceContents)
	vui, _ := vc.Meta["ui"].(map[string]any)
	csp, _ := vui["csp"].(map[string]any)
	if !ok || vc.MIMEType != "text/html;profile=mcp-app" || vc.URI != view || csp == nil || len(csp["connectDomains"].([]any)) != 0 ||
		!strings.Contains(vc.Text, `"ui/initialize"`) || !strings.Contains(vc.Text, `"ui://wicket/report/"`) ||
		!strings.Contains(vc.Text, `content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:"`) {
		t.Fatalf("the view: %+v", vres.Contents[0])
	}

	bt := s.call(t, "run_backtest", `{"name":"sma_cross","series":"BTC-USD@1d","from":"2022-01-01","robustness":true}`)
	if bt.IsError {
		t.Fatalf("run_backtest: %s", text(bt))
	}
	runLink, _ := runLinkOf(bt)
	id := strings.TrimPrefix(runLink.URI, "wicket://runs/")
	var sheet mcp.ResourceLink
	for _, c := range bt.Content {
		if l, ok := c.(mcp.ResourceLink); ok && l.MIMEType == "text/html;profile=mcp-app" {
			sheet = l
		}
	}
	if sheet.URI != "ui://wicket/report/"+id {
		t.Fatalf("run_backtest links no tear sheet of run %s: %+v", id, bt.Content)
	}

	req := mcp.ReadResourceRequest{}
	req.Params.URI = sheet.URI
	res, err := s.ReadResource(ctx, req)
	if err != nil {
		t.Fatalf("read %s: %v", sheet.URI, err)
	}
	c, ok := res.Contents[0].(mcp.TextResourceContents)
	if !ok || c.MIMEType != "text/html;profile=mcp-app" || c.URI != sheet.URI {
		t.Fatalf("the tear sheet is not text/html;profile=mcp-app at its URI: %+v", res.Contents[0])
	}
	ui, _ := c.Meta["ui"].(map[string]any)
	if ui == nil || ui["prefersBorder"] != true || ui["csp"] == nil {
		t.Errorf("the view's _meta.ui: %v", c.Meta)
	}
	page := c.Text
	if !strings.HasPrefix(page, "<!DOCTYPE html>") || !strings.Contains(page, `content="default-src 'none'; style-src 'unsafe-inline'; img-src data:"`) {
		t.Fatalf("not a tear sheet with its CSP: %.200s", page)
	}
	for _, chart := range []string{"equity", "drawdown", "monthly-returns", "rolling-sharpe", "trade-distribution", "monte-carlo"} {
		if !strings.Contains(page, `<svg data-chart="`+chart+`"`) {
			t.Errorf("the tear sheet has no %s chart", chart)
		}
	}
	full := resourceJSON(t, s, runLink.URI)
	equity, _ := full["metrics"].(map[string]any)["final_equity"].(string)
	if equity == "" || !strings.Contains(page, ">"+equity+"<") {
		t.Errorf("the tear sheet does not show the run's final equity %q", equity)
	}

	req.Params.URI = "ui://wicket/report/nosuch"
	if _, err := s.ReadResource(ctx, req); err == nil || !strings.Contains(err.Error(), "no tear sheet for run \"nosuch\"") {
		t.Errorf("an unknown run's tear sheet: %v", err)
	}
}

// TestPortfolioReportResource: run_backtest of a portfolio strategy (no
// series) links its tear sheet as a single series' run does, served at
// ui://wicket/report/{run}: the portfolio's page with its weights,
// contributions and turnover, and the run's own final equity.
func TestPortfolioReportResource(t *testing.T) {
	proj := seededProject(t)
	runWicket(t, nil, "--project", proj, "strategy", "new", "rotation", "--from", "momentum_rotation")
	s := startMCP(t, nil, proj)
	bt := s.call(t, "run_backtest", `{"name":"rotation","params":{"lookback":30,"k":1},"from":"2023-01-01"}`)
	if bt.IsError {
		t.Fatalf("run_backtest: %s", text(bt))
	}
	runLink, _ := runLinkOf(bt)
	id := strings.TrimPrefix(runLink.URI, "wicket://runs/")
	var sheet mcp.ResourceLink
	for _, c := range bt.Content {
		if l, ok := c.(mcp.ResourceLink); ok && l.MIMEType == "text/html;profile=mcp-app" {
			sheet = l
		}
	}
	if id == "" || sheet.URI != "ui://wicket/report/"+id {
		t.Fatalf("the portfolio's run_backtest links no tear sheet of run %q: %+v", id, bt.Content)
	}
	req := mcp.ReadResourceRequest{}
	req.Params.URI = sheet.URI
	res, err := s.ReadResource(context.Background(), req)
	if err != nil {
		t.Fatalf("read %s: %v", sheet.URI, err)
	}
	c, ok := res.Contents[0].(mcp.TextResourceContents)
	if !ok || c.MIMEType != "text/html;profile=mcp-app" || !strings.Contains(c.Text, "wicket portfolio tear sheet") {
		t.Fatalf("not the portfolio's tear sheet: %+v", res.Contents[0])
	}
	for _, chart := range []string{"equity", "drawdown", "weights", "contribution", "turnover"} {
		if !strings.Contains(c.Text, `<svg data-chart="`+chart+`"`) {
			t.Errorf("the portfolio's tear sheet has no %s chart", chart)
		}
	}
	full := resourceJSON(t, s, runLink.URI)
	equity, _ := full["metrics"].(map[string]any)["final_equity"].(string)
	if equity == "" || !strings.Contains(c.Text, ">"+equity+"<") {
		t.Errorf("the tear sheet does not show the run's final equity %q", equity)
	}
}
