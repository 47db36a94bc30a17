package agent

// ui://wicket/tear-sheet: run_backtest's MCP Apps view, declared on the
// tool (_meta.ui.resourceUri) so an Apps host shows the tear sheet inline
// beside the call. The view is one static page whose script speaks the
// Apps protocol to the host and reads the run's ui://wicket/report/RUN
// page through it; a client without Apps still gets that page's
// resource_link in the answer.

import (
	"context"
	_ "embed"

	"github.com/mark3labs/mcp-go/mcp"
)

// uriTearSheetApp is the view run_backtest declares.
const uriTearSheetApp = "ui://wicket/tear-sheet"

//go:embed report_app.html
var tearSheetApp string

// uiMeta is a tool's _meta declaring its MCP Apps view.
func uiMeta(uri string) *mcp.Meta {
	return &mcp.Meta{AdditionalFields: map[string]any{"ui": map[string]any{"resourceUri": uri}}}
}

// addTearSheetApp registers the view beside the run pages it reads.
func (s *Server) addTearSheetApp() {
	s.mcp.AddResource(mcp.NewResource(uriTearSheetApp, "tear sheet view",
		mcp.WithResourceDescription("run_backtest's MCP Apps view: shows the run's tear sheet (the ui://wicket/report/RUN page its answer links) inline. A script talks to the host only; it fetches nothing."),
		mcp.WithMIMEType(mimeMCPApp)),
		func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: uriTearSheetApp, MIMEType: mimeMCPApp, Text: tearSheetApp, Meta: reportMeta}}, nil
		})
}
