package agent

// ui://wicket/report/{run}: a backtest's tear sheet (strategy/tearsheet)
// as an MCP App resource, text/html;profile=mcp-app. The worker renders
// the page with the run; the session keeps the pages of its newest
// backtests, inside a process-wide byte bound, and run_backtest's answer
// links the run's page.

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
)

const (
	uriReportPrefix   = "ui://wicket/report/"
	uriReportTemplate = "ui://wicket/report/{run}"
	// mimeMCPApp is the MCP Apps extension's type of an HTML view.
	mimeMCPApp = "text/html;profile=mcp-app"
)

// Tear sheet store bounds: the pages of a session's newest backtests, and
// at most maxSheetPoolBytes of pages in the whole process (a page is tens
// of kilobytes whatever the run's length; past the bound the process's
// oldest page is forgotten, whichever session's it is).
const (
	maxStoredSheets   = 50
	maxSheetPoolBytes = 32 << 20
)

func reportURI(id string) string { return uriReportPrefix + id }

// reportLink is the resource_link content for a run's tear sheet.
func reportLink(id string) mcp.Content {
	return mcp.NewResourceLink(reportURI(id), "tear sheet "+id,
		"the run's tear sheet: one self-contained HTML page (an MCP App view) with its figures and charts: equity against buy and hold, drawdowns and their periods, and for one series monthly returns, rolling Sharpe, trades and robustness, for a portfolio its weights, contributions and turnover", mimeMCPApp)
}

// sheetStore is one session's tear sheets by run id.
type sheetStore struct {
	pool *sheetPool
	mu   sync.Mutex
	ids  []string // oldest first
}

// sheetPool holds every session's pages within its byte bound.
type sheetPool struct {
	limit int
	mu    sync.Mutex
	used  int
	order []sheetKey // oldest first
	pages map[sheetKey][]byte
}

type sheetKey struct {
	store *sheetStore
	id    string
}

var processSheets = newSheetPool(maxSheetPoolBytes)

func newSheetPool(limit int) *sheetPool {
	return &sheetPool{limit: limit, pages: map[sheetKey][]byte{}}
}

func newSheetStore() *sheetStore { return &sheetStore{pool: processSheets} }

// put keeps page as run id's tear sheet; the newest page is always kept.
func (s *sheetStore) put(id string, page []byte) {
	s.mu.Lock()
	var drop []string
	if i := indexOf(s.ids, id); i >= 0 {
		s.ids = append(s.ids[:i], s.ids[i+1:]...)
	}
	s.ids = append(s.ids, id)
	if n := len(s.ids) - maxStoredSheets; n > 0 {
		drop = append(drop, s.ids[:n]...)
		s.ids = s.ids[n:]
	}
	s.mu.Unlock()
	s.pool.put(sheetKey{s, id}, page, drop)
}

func (s *sheetStore) get(id string) ([]byte, bool) { return s.pool.get(sheetKey{s, id}) }

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

func (p *sheetPool) put(k sheetKey, page []byte, drop []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, id := range drop {
		p.remove(sheetKey{k.store, id})
	}
	p.remove(k)
	p.pages[k] = page
	p.order = append(p.order, k)
	p.used += len(page)
	for p.used > p.limit && len(p.order) > 1 {
		p.remove(p.order[0])
	}
}

// remove forgets k's page; the caller holds p.mu.
func (p *sheetPool) remove(k sheetKey) {
	page, ok := p.pages[k]
	if !ok {
		return
	}
	delete(p.pages, k)
	p.used -= len(page)
	if i := indexOfKey(p.order, k); i >= 0 {
		p.order = append(p.order[:i], p.order[i+1:]...)
	}
}

func indexOfKey(list []sheetKey, k sheetKey) int {
	for i, x := range list {
		if x == k {
			return i
		}
	}
	return -1
}

func (p *sheetPool) get(k sheetKey) ([]byte, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	page, ok := p.pages[k]
	return page, ok
}

// reportMeta is the view's MCP Apps metadata: it fetches nothing (no
// connect or resource domains), and prefers a border.
var reportMeta = map[string]any{"ui": map[string]any{
	"csp":           map[string]any{"connectDomains": []string{}, "resourceDomains": []string{}},
	"prefersBorder": true,
}}

// addReportResource registers ui://wicket/report/{run} where run_backtest
// is served.
func (s *Server) addReportResource() {
	if !s.Access().Served("run_backtest") || !hasResearch(s.tb) {
		return
	}
	s.addTearSheetApp() // report_app.go: the view run_backtest declares
	store := s.tb.sheets
	s.mcp.AddResourceTemplate(mcp.NewResourceTemplate(uriReportTemplate, "tear sheet",
		mcp.WithTemplateTitle("A backtest's tear sheet"),
		mcp.WithTemplateDescription(fmt.Sprintf("A run_backtest run's tear sheet as an MCP App view: one self-contained HTML page (inline SVG, no scripts, nothing fetched) with its equity, drawdown, monthly returns, rolling Sharpe, trade distribution and robustness figures. The last %d backtests' are kept.", maxStoredSheets)),
		mcp.WithTemplateMIMEType(mimeMCPApp)),
		func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			uri := requestedURI(req)
			id, _ := strings.CutPrefix(uri, uriReportPrefix)
			if id == "" || strings.ContainsAny(id, "/?#") || len(id) > 128 {
				return nil, badResourceURI(fmt.Errorf("%s is not a tear sheet URI: want %s with a run id from run_backtest", uri, uriReportTemplate))
			}
			page, ok := store.get(id)
			if !ok {
				return nil, missing(fmt.Errorf("no tear sheet for run %q in this session: the last %d backtests' are kept; run run_backtest again to make one", id, maxStoredSheets))
			}
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: mimeMCPApp, Text: string(page), Meta: reportMeta}}, nil
		})
}
