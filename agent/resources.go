package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"

	"wicket/internal/project"
	"wicket/node"
)

// Resource URIs.
const (
	uriSnapshot = "wicket://node/snapshot"
	uriSeries   = "wicket://series"
	uriSession  = "wicket://session"
)

// toolResources maps a resource to the tool it routes into; a resource is
// served exactly when its tool is, and only when it can be read (no node,
// no wicket://node/snapshot).
var toolResources = []struct {
	uri, name, title, tool, description string
	readable                            func(*toolbox) bool
}{
	{uriSnapshot, "node snapshot", "Node snapshot", "node_snapshot", "The node's trading state, venues, positions and recent events (the same as node_snapshot with no arguments); subscribe for changes.", hasNode},
	{uriSeries, "bar series", "Bar series", "list_series", "The bar series in the history store (the same as list_series).", hasResearch},
}

func hasNode(tb *toolbox) bool     { return tb.Node != nil }
func hasResearch(tb *toolbox) bool { return tb.Research != nil }
func hasProject(tb *toolbox) bool  { return tb.Project != nil }

// Resource templates: each is served when its tool is.
const (
	uriSeriesTemplate   = "wicket://series/{series}"
	uriStrategyTemplate = "wicket://strategy/{name}"
)

// addResources registers the resources the access set admits.
func (s *Server) addResources() {
	for _, r := range toolResources {
		if !s.access.Served(r.tool) || !r.readable(s.tb) {
			continue
		}
		spec, _ := s.reg.Lookup(r.tool)
		uri := r.uri
		s.mcp.AddResource(mcp.NewResource(r.uri, r.name, mcp.WithResourceTitle(r.title),
			mcp.WithResourceDescription(r.description), mcp.WithMIMEType("application/json")),
			func(ctx context.Context, _ mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
				res := s.run(ctx, spec, &call{tool: spec.Name, args: args{}})
				if res.errText != "" {
					return nil, fmt.Errorf("%s", res.errText)
				}
				b, err := json.Marshal(res.structured)
				if err != nil {
					return nil, err
				}
				return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: "application/json", Text: string(b)}}, nil
			})
	}
	s.addTemplates()
	s.mcp.AddResource(mcp.NewResource(uriSession, "session", mcp.WithResourceTitle("This session"),
		mcp.WithResourceDescription("What this server is: profile, deny list, served and refused tools, tracing, data service and node."),
		mcp.WithMIMEType("application/json")),
		func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			b, err := json.Marshal(s.sessionInfo())
			if err != nil {
				return nil, err
			}
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: uriSession, MIMEType: "application/json", Text: string(b)}}, nil
		})
}

// venueKinds remembers each node venue's kind, environment, armed state
// and mark source as the last snapshot showed them.
type venueKinds struct {
	mu    sync.Mutex
	kinds map[string]node.Venue
}

func (v *venueKinds) set(nv node.Venue) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.kinds == nil {
		v.kinds = map[string]node.Venue{}
	}
	v.kinds[nv.Name] = nv
}

func (v *venueKinds) list() []map[string]any {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := []map[string]any{}
	for n, k := range v.kinds {
		e := map[string]any{"name": n, "kind": k.Kind, "environment": k.Environment, "armed": k.Armed, "mark_source": k.MarkSource}
		if !k.ArmedUntil.IsZero() {
			e["armed_until"] = k.ArmedUntil
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i]["name"].(string) < out[j]["name"].(string) })
	return out
}

// sessionInfo is the wicket://session document. It touches nothing
// outside the process.
func (s *Server) sessionInfo() map[string]any {
	denied := s.access.Denied
	if denied == nil {
		denied = []string{}
	}
	node := any(nil)
	if s.opts.NodeAddr != "" {
		node = map[string]any{"address": s.opts.NodeAddr, "venues": s.venues.list()}
	}
	trace := map[string]any{"enabled": s.opts.Trace != nil}
	if s.opts.TraceDir != "" {
		trace["dir"] = s.opts.TraceDir
	}
	approvalInfo, budgets := s.loop.status() // loop.go
	return map[string]any{
		"approval":     approvalInfo,
		"budgets":      budgets,
		"server":       "wicket",
		"version":      s.opts.Version,
		"session":      s.session,
		"transport":    s.opts.Transport,
		"caller":       nilIfEmpty(s.opts.Caller),
		"profile":      s.access.Profile,
		"deny_tool":    denied,
		"served":       s.access.ServedNames(),
		"refused":      s.access.RefusedNames(),
		"trace":        trace,
		"data_service": s.opts.DataService,
		"node":         node,
	}
}

func nilIfEmpty(v string) any {
	if v == "" {
		return nil
	}
	return v
}

// addTemplates registers wicket://series/{series} (one series' metadata)
// and wicket://strategy/{name} (a strategy's source) where their tools are
// served.
func (s *Server) addTemplates() {
	if s.access.Served("list_series") && hasResearch(s.tb) {
		s.mcp.AddResourceTemplate(mcp.NewResourceTemplate(uriSeriesTemplate, "series",
			mcp.WithTemplateTitle("One bar series"),
			mcp.WithTemplateDescription("One stored series' metadata: symbol, granularity, source, bar count, first and last bar."),
			mcp.WithTemplateMIMEType("application/json")),
			func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
				name := templateArg(req, "series")
				if err := project.ValidName("series", name); err != nil {
					return nil, err
				}
				if s.tb.Research == nil {
					return nil, errNoProject
				}
				list, err := s.tb.Research.ListSeries(ctx)
				if err != nil {
					return nil, err
				}
				for _, info := range list.Series {
					if info.Series == name {
						return jsonContents(requestedURI(req), info)
					}
				}
				return nil, fmt.Errorf("no series %q in the history store; read wicket://series for the names", name)
			})
	}
	if s.access.Served("validate_strategy") && hasProject(s.tb) {
		s.mcp.AddResourceTemplate(mcp.NewResourceTemplate(uriStrategyTemplate, "strategy",
			mcp.WithTemplateTitle("A strategy's source"),
			mcp.WithTemplateDescription("The Starlark source of a strategy in the project's strategies/ folder."),
			mcp.WithTemplateMIMEType("text/x-starlark")),
			func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
				src, err := s.tb.strategySource(&call{args: args{"name": jsonString(templateArg(req, "name"))}})
				if err != nil {
					return nil, err
				}
				return []mcp.ResourceContents{mcp.TextResourceContents{URI: requestedURI(req), MIMEType: "text/x-starlark", Text: src.Text}}, nil
			})
	}
}

// requestedURI is the URI as the client sent it (prepare may have
// percent-encoded an '@').
func requestedURI(req mcp.ReadResourceRequest) string {
	if d, err := url.PathUnescape(req.Params.URI); err == nil {
		return d
	}
	return req.Params.URI
}

// templateArg reads a template variable (mcp-go hands them over as
// []string), percent-decoded.
func templateArg(req mcp.ReadResourceRequest, name string) string {
	var v string
	switch a := req.Params.Arguments[name].(type) {
	case []string:
		if len(a) > 0 {
			v = a[0]
		}
	case string:
		v = a
	}
	if d, err := url.PathUnescape(v); err == nil {
		return d
	}
	return v
}

func jsonString(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

func jsonContents(uri string, v any) ([]mcp.ResourceContents, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: "application/json", Text: string(b)}}, nil
}
