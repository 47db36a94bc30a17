package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"sort"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"wicket/agent/wire"
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

// resourceError is a resources/read that failed for what the client asked
// (no such series, a malformed name), answered with code instead of the
// -32603 mcp-go gives every handler error: the server's OnError hook
// has the wire layer put code on the response (see recodeResource).
type resourceError struct {
	code int
	err  error
}

func (e *resourceError) Error() string { return e.err.Error() }
func (e *resourceError) Unwrap() error { return e.err }

// missing marks err as "no such resource": -32002 (mcp.RESOURCE_NOT_FOUND).
func missing(err error) error { return &resourceError{code: mcp.RESOURCE_NOT_FOUND, err: err} }

// badResourceURI marks err as a malformed variable: -32602.
func badResourceURI(err error) error { return &resourceError{code: mcp.INVALID_PARAMS, err: err} }

// recodeResource is the OnError hook's half: a resources/read that failed
// with a resourceError gets its code on the wire. The protocol of
// 2026-07-28 answers a missing resource -32602, as mcp-go does.
func (s *Server) recodeResource(ctx context.Context, id any, method mcp.MCPMethod, err error) {
	var re *resourceError
	if method != mcp.MethodResourcesRead || !errors.As(err, &re) {
		return
	}
	code := re.code
	if code == mcp.RESOURCE_NOT_FOUND && mcp.IsModernProtocol(server.RequestProtocolVersion(ctx)) {
		code = mcp.INVALID_PARAMS
	}
	var sur string
	switch v := id.(type) {
	case mcp.RequestId:
		sur, _ = v.Value().(string)
	case *mcp.RequestId:
		if v != nil {
			sur, _ = v.Value().(string)
		}
	case string:
		sur = v
	}
	if sur != "" {
		s.ids.Recode(sur, code)
	}
}

// checkSubscribe refuses a resources/subscribe of a URI that sends no
// updates (mcp-go accepts any): only wicket://node/snapshot does, where
// the node is served. A resource this server has answers -32602, anything
// else -32002. Requests mcp-go refuses itself (no uri; the 2026-07-28
// protocol, which has no resources/subscribe) go on to it.
func (s *Server) checkSubscribe(line []byte, id json.RawMessage) ([]byte, bool) {
	var msg struct {
		Params struct {
			URI  string                     `json:"uri"`
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &msg) != nil || msg.Params.URI == "" {
		return nil, false
	}
	if _, modern := msg.Params.Meta["io.modelcontextprotocol/protocolVersion"]; modern {
		return nil, false
	}
	uri := msg.Params.URI
	if uri == uriSnapshot {
		switch {
		case !s.Access().Served("node_snapshot"):
			return wire.Error(id, mcp.RESOURCE_NOT_FOUND, fmt.Sprintf("%s is not served to this session: its profile or deny list withholds node_snapshot (wicket://session says which)", uri)), true
		case !hasNode(s.tb):
			return wire.Error(id, mcp.RESOURCE_NOT_FOUND, fmt.Sprintf("%s is not served: %v", uri, errNoNode)), true
		}
		return nil, false
	}
	if s.hasResource(uri) {
		return wire.Error(id, mcp.INVALID_PARAMS, fmt.Sprintf("%s sends no updates and cannot be subscribed; only %s does (where a node is served): read this one again instead", uri, uriSnapshot)), true
	}
	return wire.Error(id, mcp.RESOURCE_NOT_FOUND, fmt.Sprintf("no resource %s on this server: resources/list and resources/templates/list name what it serves; only %s can be subscribed", uri, uriSnapshot)), true
}

// hasResource reports whether uri names a resource this session lists,
// or fits the fixed part of a template it lists (what comes before its
// first variable).
func (s *Server) hasResource(uri string) bool {
	ask := func(method string, into any) {
		resp := s.mcp.HandleMessage(context.Background(), []byte(`{"jsonrpc":"2.0","id":0,"method":"`+method+`"}`))
		if b, err := json.Marshal(resp); err == nil {
			_ = json.Unmarshal(b, into)
		}
	}
	var list struct {
		Result struct {
			Resources []struct {
				URI string `json:"uri"`
			} `json:"resources"`
		} `json:"result"`
	}
	var tpls struct {
		Result struct {
			ResourceTemplates []struct {
				URITemplate string `json:"uriTemplate"`
			} `json:"resourceTemplates"`
		} `json:"result"`
	}
	ask(string(mcp.MethodResourcesList), &list)
	ask(string(mcp.MethodResourcesTemplatesList), &tpls)
	for _, r := range list.Result.Resources {
		if r.URI == uri {
			return true
		}
	}
	for _, t := range tpls.Result.ResourceTemplates {
		fixed, _, _ := strings.Cut(t.URITemplate, "{")
		if fixed != "" && strings.HasPrefix(uri, fixed) && len(uri) > len(fixed) {
			return true
		}
	}
	return false
}

// Resource templates: each is served when its tool is.
const (
	uriSeriesTemplate   = "wicket://series/{series}"
	uriStrategyTemplate = "wicket://strategy/{name}"
)

// addResources registers the resources the access set admits.
func (s *Server) addResources() {
	for _, r := range toolResources {
		if !s.Access().Served(r.tool) || !r.readable(s.tb) {
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
	s.addDeploymentTemplate()
	s.addReportResource() // report.go
	s.mcp.AddResource(mcp.NewResource(uriSession, "session", mcp.WithResourceTitle("This session"),
		mcp.WithResourceDescription("What this server is: profile, deny list, served and refused tools, tracing, data service, node, budgets, and the last notices (a budget at 80 %, a worker killed, the node lost or back); over subscriptions/listen, each new notice is an update."),
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
	denied := s.Access().Denied
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
		"profile":      s.Access().Profile,
		"deny_tool":    denied,
		"served":       s.Access().ServedNames(),
		"refused":      s.Access().RefusedNames(),
		"trace":        trace,
		"data_service": s.opts.DataService,
		"node":         node,
		"notices":      s.listen.recent(), // listen.go
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
	if s.Access().Served("list_series") && hasResearch(s.tb) {
		s.mcp.AddResourceTemplate(mcp.NewResourceTemplate(uriSeriesTemplate, "series",
			mcp.WithTemplateTitle("One bar series"),
			mcp.WithTemplateDescription("One stored series' metadata: symbol, granularity, source, bar count, first and last bar."),
			mcp.WithTemplateMIMEType("application/json")),
			func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
				name := templateArg(req, "series")
				if err := project.ValidName("series", name); err != nil {
					return nil, badResourceURI(err)
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
				return nil, missing(fmt.Errorf("no series %q in the history store; read wicket://series for the names", name))
			})
	}
	if s.Access().Served("validate_strategy") && hasProject(s.tb) {
		s.mcp.AddResourceTemplate(mcp.NewResourceTemplate(uriStrategyTemplate, "strategy",
			mcp.WithTemplateTitle("A strategy's source"),
			mcp.WithTemplateDescription("The Starlark source of a strategy in the project's strategies/ folder."),
			mcp.WithTemplateMIMEType("text/x-starlark")),
			func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
				name := templateArg(req, "name")
				if err := project.ValidName("strategy", name); err != nil {
					return nil, badResourceURI(err) // a malformed name: -32602, as the series template answers
				}
				src, err := s.tb.strategySource(&call{args: args{"name": jsonString(name)}})
				if errors.Is(err, fs.ErrNotExist) {
					return nil, missing(err)
				}
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
